#include "optimizer/batch_size/rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace zeus::bso {
namespace {

TEST(RngTest, SameSeedSameStreamDifferentSeedDifferentStream) {
  Rng a(7), b(7), c(8);
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    EXPECT_NE(x, c.next_u64());
  }
}

TEST(RngTest, SaveRestoreContinuesTheSameSequence) {
  Rng rng(123);
  for (int i = 0; i < 17; ++i) rng.normal();
  const std::string state = rng.save();
  EXPECT_EQ(state.size(), 13u + 64u);
  std::vector<double> expected;
  for (int i = 0; i < 50; ++i) expected.push_back(rng.normal(3.0, 2.0) + rng.below(5));
  Result<Rng> restored = Rng::restore(state);
  ASSERT_TRUE(restored.has_value()) << restored.error().to_string();
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(restored->normal(3.0, 2.0) + restored->below(5), expected[i]) << i;
  }
  EXPECT_EQ(*restored, rng);
}

TEST(RngTest, RestoreRejectsMalformedState) {
  EXPECT_EQ(Rng::restore("").error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(Rng::restore("mt19937:0123").has_value());
  std::string bad = Rng(1).save();
  bad.back() = 'g';
  EXPECT_FALSE(Rng::restore(bad).has_value());
  EXPECT_FALSE(Rng::restore("xoshiro256ss:" + std::string(64, '0')).has_value());
}

TEST(RngTest, DrawsHaveTheRightDistribution) {
  Rng rng(99);
  const int n = 200000;
  double sum = 0, sum_sq = 0;
  std::vector<int> counts(5, 0);
  for (int i = 0; i < n; ++i) {
    const double z = rng.normal();
    sum += z;
    sum_sq += z * z;
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    ++counts[rng.below(5)];
  }
  // Mean 0 ± 5 standard errors (1/sqrt(n) ≈ 0.0022), variance 1 ± 0.02.
  EXPECT_NEAR(sum / n, 0.0, 0.012);
  EXPECT_NEAR(sum_sq / n, 1.0, 0.02);
  for (int c : counts) EXPECT_NEAR(c, n / 5, 1000);
}

}  // namespace
}  // namespace zeus::bso
