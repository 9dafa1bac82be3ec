#include "optimizer/batch_size/next_epoch_cost.h"

#include <gtest/gtest.h>

#include <vector>

namespace zeus::bso {
namespace {

EpochCostEvidence evidence(double cost_j, int epochs, double previous_cost_j = 0.0,
                           int previous_epochs = 0,
                           std::optional<double> prior = std::nullopt) {
  EpochCostEvidence e;
  e.cost_j = cost_j;
  e.epochs = epochs;
  e.previous_cost_j = previous_cost_j;
  e.previous_epochs = previous_epochs;
  e.prior_epoch_cost_j = prior;
  return e;
}

TEST(NextEpochCostTest, TheLastIntervalOnceTwoReportsExist) {
  EpochCostEvidence e = evidence(300, 3, 220, 2);
  EXPECT_EQ(expected_next_epoch_cost(e), 80.0);
  // Reports every two epochs: per epoch.
  e = evidence(400, 5, 200, 3);
  EXPECT_EQ(expected_next_epoch_cost(e), 100.0);
  // A prior does not override the trial's own steady epochs.
  e.prior_epoch_cost_j = 10.0;
  EXPECT_EQ(expected_next_epoch_cost(e), 100.0);
}

TEST(NextEpochCostTest, FirstReportTakesTheLowerOfItsEpochAndThePrior) {
  // A first epoch that JIT-profiled every power limit costs more than the epochs after it.
  EpochCostEvidence e = evidence(130, 1);
  EXPECT_EQ(expected_next_epoch_cost(e), 130.0);
  e.prior_epoch_cost_j = 105.0;
  EXPECT_EQ(expected_next_epoch_cost(e), 105.0);
  e.prior_epoch_cost_j = 200.0;
  EXPECT_EQ(expected_next_epoch_cost(e), 130.0);
  // Before any epoch: the prior, or nothing.
  EXPECT_EQ(expected_next_epoch_cost(evidence(0, 0, 0, 0, 90.0)), 90.0);
  EXPECT_FALSE(expected_next_epoch_cost(evidence(0, 0)).has_value());
}

TEST(NextEpochCostTest, PriorIsTheCheapestEndedTrialPerEpochOfThatBatchSize) {
  auto trial = [](int bs, TrialStatus status, double cost, int epochs) {
    Trial t;
    t.batch_size = bs;
    t.status = status;
    t.cost = cost;
    t.epochs = epochs;
    return t;
  };
  const std::vector<Trial> trials = {
      trial(32, TrialStatus::kConverged, 1000, 10),     // 100 per epoch
      trial(32, TrialStatus::kNotConverged, 450, 5),    // 90 per epoch
      trial(32, TrialStatus::kDispatched, 10, 1),       // not ended: no evidence
      trial(32, TrialStatus::kFailed, 10, 1),           // no result: no evidence
      trial(64, TrialStatus::kConverged, 100, 10),      // another batch size
  };
  EXPECT_EQ(prior_epoch_cost(trials, 32), 90.0);
  EXPECT_EQ(prior_epoch_cost(trials, 64), 10.0);
  EXPECT_FALSE(prior_epoch_cost(trials, 128).has_value());
}

}  // namespace
}  // namespace zeus::bso
