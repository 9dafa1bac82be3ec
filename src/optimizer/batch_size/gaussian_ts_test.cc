#include "optimizer/batch_size/gaussian_ts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace zeus::bso {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(GaussianTsTest, OneObservationIsExactlyItsCost) {
  const std::vector<double> costs = {100};
  Belief b = arm_belief(costs, {50, 3});  // the prior does not matter with n = 1
  EXPECT_EQ(b.mean_cost, 100);
  EXPECT_EQ(b.precision, kInf);
  EXPECT_EQ(b.num_observations, 1);
}

TEST(GaussianTsTest, TwoObservationsFlatPrior) {
  // mean 105, v = ((−5)² + 5²)/2 = 25, precision = 2/25 = 0.08, mean = (210/25)/0.08 = 105.
  const std::vector<double> costs = {100, 110};
  Belief b = arm_belief(costs, {});
  EXPECT_DOUBLE_EQ(b.precision, 0.08);
  EXPECT_DOUBLE_EQ(b.mean_cost, 105);
}

TEST(GaussianTsTest, TwoObservationsWithPrior) {
  // precision = 0.02 + 0.08 = 0.1; mean = (0.02·100 + 210/25)/0.1 = (2 + 8.4)/0.1 = 104.
  const std::vector<double> costs = {100, 110};
  Belief b = arm_belief(costs, {100, 0.02});
  EXPECT_DOUBLE_EQ(b.precision, 0.1);
  EXPECT_DOUBLE_EQ(b.mean_cost, 104);
}

TEST(GaussianTsTest, ManyObservations) {
  // 10..50: mean 30, v = (400+100+0+100+400)/5 = 200, precision = 5/200 = 0.025.
  const std::vector<double> costs = {10, 20, 30, 40, 50};
  Belief b = arm_belief(costs, {});
  EXPECT_DOUBLE_EQ(b.precision, 0.025);
  EXPECT_DOUBLE_EQ(b.mean_cost, 30);
  // With prior (0, 0.025): precision 0.05, mean = (0 + 150/200)/0.05 = 15.
  b = arm_belief(costs, {0, 0.025});
  EXPECT_DOUBLE_EQ(b.precision, 0.05);
  EXPECT_DOUBLE_EQ(b.mean_cost, 15);
  EXPECT_EQ(b.num_observations, 5);
}

TEST(GaussianTsTest, ZeroVarianceIsExactlyTheMeanEvenWithAPrior) {
  const std::vector<double> costs = {7, 7, 7};
  Belief b = arm_belief(costs, {1000, 5});
  EXPECT_EQ(b.mean_cost, 7);
  EXPECT_EQ(b.precision, kInf);
}

TEST(GaussianTsTest, MinRelativeSdFloorsTheVariance) {
  // Two equal costs: exact under upstream's rule; with a 10 % floor, v = (0.1·100)² = 100,
  // precision = 2/100.
  const std::vector<double> equal = {100, 100};
  EXPECT_TRUE(arm_belief(equal, {}).exact());
  Belief b = arm_belief(equal, {}, 0.1);
  EXPECT_DOUBLE_EQ(b.precision, 0.02);
  EXPECT_DOUBLE_EQ(b.mean_cost, 100);
  // One observation is uncertain too: precision 1/100.
  const std::vector<double> one = {100};
  EXPECT_DOUBLE_EQ(arm_belief(one, {}, 0.1).precision, 0.01);
  // A sample variance above the floor is kept: v = 25 > (0.01·105)².
  const std::vector<double> spread = {100, 110};
  EXPECT_DOUBLE_EQ(arm_belief(spread, {}, 0.01).precision, 0.08);
}

TEST(GaussianTsTest, NoObservationIsThePrior) {
  Belief b = arm_belief({}, {42, 0.5});
  EXPECT_EQ(b.mean_cost, 42);
  EXPECT_EQ(b.precision, 0.5);
  EXPECT_EQ(b.num_observations, 0);
}

TEST(GaussianTsTest, WindowKeepsOnlyTheNewestCosts) {
  const std::vector<double> costs = {500, 900, 100, 110};
  EXPECT_EQ(newest_costs(costs, 2).size(), 2u);
  EXPECT_EQ(newest_costs(costs, 2)[0], 100);
  EXPECT_EQ(newest_costs(costs, 0).size(), 4u);   // 0 = all history
  EXPECT_EQ(newest_costs(costs, 10).size(), 4u);  // window larger than the history
  // The old costs 500 and 900 are evicted: same belief as {100, 110}.
  Belief b = arm_belief(newest_costs(costs, 2), {});
  EXPECT_DOUBLE_EQ(b.mean_cost, 105);
  EXPECT_DOUBLE_EQ(b.precision, 0.08);
  // Window 3 keeps 900: mean 370, v = (530² + 270² + 260²)/3 = 421400/3, precision = 3/v.
  b = arm_belief(newest_costs(costs, 3), {});
  const double v = (530.0 * 530 + 270.0 * 270 + 260.0 * 260) / 3;
  EXPECT_DOUBLE_EQ(b.precision, 3 / v);
  EXPECT_NEAR(b.mean_cost, 370, 1e-9);
}

TEST(GaussianTsTest, ForcedExplorationPicksOnlyUnderExploredArmsInRandomOrder) {
  std::vector<Belief> beliefs = {{100, kInf, 2}, {90, kInf, 1}, {80, 0.1, 2}, {0, 0, 0}};
  int picked[4] = {0, 0, 0, 0};
  for (uint64_t seed = 0; seed < 400; ++seed) {
    Rng rng(seed);
    ++picked[choose_arm(beliefs, 2, rng)];
  }
  EXPECT_EQ(picked[0], 0);
  EXPECT_EQ(picked[2], 0);
  EXPECT_GT(picked[1], 120);  // about 200 each
  EXPECT_GT(picked[3], 120);
}

TEST(GaussianTsTest, ExactBeliefsPickTheCheapestMean) {
  std::vector<Belief> beliefs = {{100, kInf, 2}, {90, kInf, 3}, {120, kInf, 2}};
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Rng rng(seed);
    EXPECT_EQ(choose_arm(beliefs, 2, rng), 1u);
  }
}

TEST(GaussianTsTest, SamplingFollowsTheBeliefSpread) {
  // Arm 0: exactly 100. Arm 1: N(101, 1) (precision 1). P(sample₁ < 100) = Φ(−1) ≈ 0.159.
  std::vector<Belief> beliefs = {{100, kInf, 2}, {101, 1.0, 2}};
  Rng rng(5);
  int ones = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) ones += choose_arm(beliefs, 2, rng) == 1 ? 1 : 0;
  EXPECT_NEAR(static_cast<double>(ones) / n, 0.1587, 0.015);
}

TEST(GaussianTsTest, SameRngStateSameChoice) {
  std::vector<Belief> beliefs = {{100, 0.01, 3}, {101, 0.01, 3}, {99, 0.01, 3}};
  Rng a(11), b(11);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(choose_arm(beliefs, 2, a), choose_arm(beliefs, 2, b));
}

}  // namespace
}  // namespace zeus::bso
