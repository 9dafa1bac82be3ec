// The calibration fit: points made by a known model come back as that model's coefficients;
// too few points and bad points are refused with what to do.
#include <gtest/gtest.h>

#include <cmath>

#include "zeus/serving/serving_calibration.h"

namespace zeus {
namespace {

TEST(ServingFitTest, PointsOfAKnownServerGiveItsCoefficientsBack) {
  const double memory_s = 0.012, per_seq = 0.0004, prefill = 0.00002, prompt = 512;
  std::vector<ServingCalibrationPoint> points;
  for (double f : {1980.0, 1530.0, 1080.0}) {
    for (int c : {1, 4, 16}) {
      const double slow = 1980 / f;
      ServingCalibrationPoint p;
      p.clock_mhz = f;
      p.concurrency = c;
      p.tpot_p50_s = memory_s + per_seq * c * slow;
      p.ttft_p50_s = memory_s + prefill * prompt * slow;
      const double compute = per_seq * c * slow;
      const double share = compute / (compute + memory_s);
      const double r = f / 1980;
      p.power_w = 100 + 300 * (std::pow(r, 3) * share + 0.5 * std::pow(r, 1.5) * (1 - share));
      points.push_back(p);
    }
  }
  auto profile = fit_serving_profile(points, prompt, 70);
  ASSERT_TRUE(profile) << profile.error().message;
  EXPECT_EQ(profile->clocks_mhz, (std::vector<double>{1980, 1530, 1080}));
  EXPECT_NEAR(profile->memory_s, memory_s, 1e-9);
  EXPECT_NEAR(profile->decode_s_per_seq, per_seq, 1e-9);
  EXPECT_NEAR(profile->prefill_s_per_token, prefill, 1e-9);
  EXPECT_NEAR(profile->base_w, 100, 1e-6);
  EXPECT_NEAR(profile->compute_w, 300, 1e-6);
  EXPECT_NEAR(profile->memory_w, 150, 1e-6);
  EXPECT_EQ(profile->idle_w, 70);
  // The fitted profile predicts the points it came from.
  EXPECT_NEAR(profile->iteration_s(1080, 0, 16, 0), points.back().tpot_p50_s, 1e-9);
}

TEST(ServingFitTest, TooFewPointsOrBadOnesAreRefusedSayingWhy) {
  ServingCalibrationPoint p{1980, 1, 10, 100, 0.05, 0.08, 0.02, 0.03, 300, 3};
  auto one_clock = fit_serving_profile({p, p, p}, 512, 60);
  ASSERT_FALSE(one_clock);
  EXPECT_NE(one_clock.error().message.find("two clocks"), std::string::npos);
  ServingCalibrationPoint unfinished = p;
  unfinished.clock_mhz = 1500;
  unfinished.tpot_p50_s = 0;
  auto bad = fit_serving_profile({p, p, unfinished}, 512, 60);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("did its requests finish"), std::string::npos);
}

}  // namespace
}  // namespace zeus
