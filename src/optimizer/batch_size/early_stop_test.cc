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
  StopDecisionCore d = decide_stop(rule(), 300.0, {4, 400, 0.5, 3, std::nullopt});
  EXPECT_DOUBLE_EQ(d.cost, 400);
  EXPECT_DOUBLE_EQ(d.cost_bound, 600);
  EXPECT_FALSE(d.stop_train);
  EXPECT_FALSE(d.converged);
}

TEST(EarlyStopTest, ConvergesWhenTargetReachedWithinBound) {
  StopDecisionCore d = decide_stop(rule(), 300.0, {4, 400, 0.9, 3, std::nullopt});
  EXPECT_TRUE(d.stop_train);
  EXPECT_TRUE(d.converged);
}

TEST(EarlyStopTest, StopsWhenCostExceedsBetaTimesMinCost) {
  // cost = 0.5·800 + 0.5·100·8 = 800 > 600.
  StopDecisionCore d = decide_stop(rule(), 300.0, {8, 800, 0.5, 3, std::nullopt});
  EXPECT_TRUE(d.stop_train);
  EXPECT_FALSE(d.converged);
  EXPECT_FALSE(d.within_bound);
  // Reaching the target over the bound is not convergence.
  d = decide_stop(rule(), 300.0, {8, 800, 0.95, 3, std::nullopt});
  EXPECT_TRUE(d.stop_train);
  EXPECT_TRUE(d.reached_target);
  EXPECT_FALSE(d.converged);
  // Exactly at the bound still counts as within: cost 600 = 2·300.
  d = decide_stop(rule(), 300.0, {6, 600, 0.5, 3, std::nullopt});
  EXPECT_FALSE(d.stop_train);
}

TEST(EarlyStopTest, NoBoundWithoutMinCostOrBeta) {
  StopDecisionCore d = decide_stop(rule(), std::nullopt, {1e6, 1e9, 0.5, 3, std::nullopt});
  EXPECT_FALSE(d.stop_train);
  StopRule no_beta = rule();
  no_beta.beta.reset();
  d = decide_stop(no_beta, 1.0, {1e6, 1e9, 0.5, 3, std::nullopt});
  EXPECT_FALSE(d.stop_train);
  EXPECT_TRUE(std::isinf(d.cost_bound));
}

TEST(EarlyStopTest, StopsAtMaxEpochs) {
  StopDecisionCore d = decide_stop(rule(), std::nullopt, {1, 1, 0.5, 10, std::nullopt});
  EXPECT_TRUE(d.stop_train);
  EXPECT_FALSE(d.converged);
  d = decide_stop(rule(), std::nullopt, {1, 1, 0.5, 9, std::nullopt});
  EXPECT_FALSE(d.stop_train);
}

TEST(EarlyStopTest, LowerIsBetterMetric) {
  StopRule r = rule();
  r.higher_is_better_metric = false;
  r.target_metric = 0.1;  // e.g. a loss
  EXPECT_FALSE(decide_stop(r, std::nullopt, {1, 1, 0.2, 1, std::nullopt}).stop_train);
  EXPECT_TRUE(decide_stop(r, std::nullopt, {1, 1, 0.1, 1, std::nullopt}).converged);
}

TEST(EarlyStopTest, PredictiveStopsBeforeTheEpochThatWouldCrossTheBound) {
  // cost 500 (0.5·500 + 0.5·100·5), bound 600: after-crossing keeps training; predictive sees
  // 500 + 150 > 600 and stops now, one epoch before the crossing, without convergence.
  StopRule r = rule();
  r.mode = EarlyStopMode::kAfterCrossing;
  const StopInput input{5, 500, 0.5, 3, 150.0};
  EXPECT_FALSE(decide_stop(r, 300.0, input).stop_train);
  r.mode = EarlyStopMode::kPredictive;
  StopDecisionCore d = decide_stop(r, 300.0, input);
  EXPECT_TRUE(d.stop_train);
  EXPECT_TRUE(d.next_epoch_over_bound);
  EXPECT_TRUE(d.within_bound);
  EXPECT_FALSE(d.converged);
  // The next epoch lands exactly on the bound: keep going.
  EXPECT_FALSE(decide_stop(r, 300.0, {5, 500, 0.5, 3, 100.0}).stop_train);
  // Reaching the target ends the trial as converged, whatever the next epoch would cost.
  d = decide_stop(r, 300.0, {5, 500, 0.95, 3, 150.0});
  EXPECT_TRUE(d.converged);
  EXPECT_FALSE(d.next_epoch_over_bound);
  // No estimate: the after-crossing test alone.
  EXPECT_FALSE(decide_stop(r, 300.0, {5, 500, 0.5, 3, std::nullopt}).stop_train);
  // No bound yet: no early stop.
  EXPECT_FALSE(decide_stop(r, std::nullopt, input).stop_train);
}

TEST(EarlyStopTest, KnownEpochCostChecksEpochsTimesTheEpochCost) {
  // Upstream's simulator: the run may last floor(600 / 130) = 4 epochs; the measured cost (the
  // first epoch profiled, dearer) does not enter the bound.
  StopRule r = rule();
  r.mode = EarlyStopMode::kKnownEpochCost;
  EXPECT_FALSE(decide_stop(r, 300.0, {6, 600, 0.5, 3, 130.0}).stop_train);
  StopDecisionCore d = decide_stop(r, 300.0, {7, 700, 0.5, 4, 130.0});
  EXPECT_TRUE(d.stop_train);
  EXPECT_TRUE(d.within_bound);  // 4·130 = 520 <= 600, although the measured 700 is not
  EXPECT_TRUE(decide_stop(r, 300.0, {7, 700, 0.95, 4, 130.0}).converged);
  // Before the first epoch (epoch 0): a first epoch over the bound is never started.
  EXPECT_TRUE(decide_stop(r, 300.0, {0, 0, 0.0, 0, 601.0}).stop_train);
  EXPECT_FALSE(decide_stop(r, 300.0, {0, 0, 0.0, 0, 600.0}).stop_train);
}

TEST(EarlyStopTest, StopRuleOfASpecCarriesItsMode) {
  JobSpec spec;
  spec.eta_knob = 0.3;
  spec.beta_knob = 3.0;
  spec.max_power_w = 250;
  spec.early_stop = EarlyStopMode::kAfterCrossing;
  const StopRule r = stop_rule_of(spec, TrialKind::kPruning);
  EXPECT_EQ(r.eta, 0.3);
  EXPECT_EQ(r.beta, 3.0);
  EXPECT_EQ(r.max_power_w, 250);
  EXPECT_EQ(r.mode, EarlyStopMode::kAfterCrossing);
  EXPECT_EQ(StopRule{}.mode, EarlyStopMode::kPredictive);
  // A pruning exploration's own β; other trials keep beta_knob; no early stop stays off.
  spec.pruning_beta_knob = 1.5;
  EXPECT_EQ(stop_rule_of(spec, TrialKind::kPruning).beta, 1.5);
  EXPECT_EQ(stop_rule_of(spec, TrialKind::kMab).beta, 3.0);
  spec.beta_knob.reset();
  EXPECT_FALSE(stop_rule_of(spec, TrialKind::kPruning).beta.has_value());
}

}  // namespace
}  // namespace zeus::bso
