#include "optimizer/batch_size/early_stop.h"

#include <gtest/gtest.h>

#include <cmath>

namespace zeus::bso {
namespace {

StopRule rule() {
  StopRule r;
  r.eta = 0.5;
  r.beta = 2.0;
  r.max_power_w = 100;
  r.target_metric = 0.9;
  r.higher_is_better_metric = true;
  r.max_epochs = 10;
  return r;
}

TEST(EarlyStopTest, KeepsTrainingBelowTargetAndBound) {
  // cost = 0.5·400 + 0.5·100·4 = 400; bound = 2·300 = 600.
  StopDecisionCore d = decide_stop(rule(), 300.0, {4, 400, 0.5, 3});
  EXPECT_DOUBLE_EQ(d.cost, 400);
  EXPECT_DOUBLE_EQ(d.cost_bound, 600);
  EXPECT_FALSE(d.stop_train);
  EXPECT_FALSE(d.converged);
}

TEST(EarlyStopTest, ConvergesWhenTargetReachedWithinBound) {
  StopDecisionCore d = decide_stop(rule(), 300.0, {4, 400, 0.9, 3});
  EXPECT_TRUE(d.stop_train);
  EXPECT_TRUE(d.converged);
}

TEST(EarlyStopTest, StopsWhenCostExceedsBetaTimesMinCost) {
  // cost = 0.5·800 + 0.5·100·8 = 800 > 600.
  StopDecisionCore d = decide_stop(rule(), 300.0, {8, 800, 0.5, 3});
  EXPECT_TRUE(d.stop_train);
  EXPECT_FALSE(d.converged);
  EXPECT_FALSE(d.within_bound);
  // Reaching the target over the bound is not convergence.
  d = decide_stop(rule(), 300.0, {8, 800, 0.95, 3});
  EXPECT_TRUE(d.stop_train);
  EXPECT_TRUE(d.reached_target);
  EXPECT_FALSE(d.converged);
  // Exactly at the bound still counts as within: cost 600 = 2·300.
  d = decide_stop(rule(), 300.0, {6, 600, 0.5, 3});
  EXPECT_FALSE(d.stop_train);
}

TEST(EarlyStopTest, NoBoundWithoutMinCostOrBeta) {
  StopDecisionCore d = decide_stop(rule(), std::nullopt, {1e6, 1e9, 0.5, 3});
  EXPECT_FALSE(d.stop_train);
  StopRule no_beta = rule();
  no_beta.beta.reset();
  d = decide_stop(no_beta, 1.0, {1e6, 1e9, 0.5, 3});
  EXPECT_FALSE(d.stop_train);
  EXPECT_TRUE(std::isinf(d.cost_bound));
}

TEST(EarlyStopTest, StopsAtMaxEpochs) {
  StopDecisionCore d = decide_stop(rule(), std::nullopt, {1, 1, 0.5, 10});
  EXPECT_TRUE(d.stop_train);
  EXPECT_FALSE(d.converged);
  d = decide_stop(rule(), std::nullopt, {1, 1, 0.5, 9});
  EXPECT_FALSE(d.stop_train);
}

TEST(EarlyStopTest, LowerIsBetterMetric) {
  StopRule r = rule();
  r.higher_is_better_metric = false;
  r.target_metric = 0.1;  // e.g. a loss
  EXPECT_FALSE(decide_stop(r, std::nullopt, {1, 1, 0.2, 1}).stop_train);
  EXPECT_TRUE(decide_stop(r, std::nullopt, {1, 1, 0.1, 1}).converged);
}

}  // namespace
}  // namespace zeus::bso
