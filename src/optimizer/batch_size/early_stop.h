// The report rule of the batch-size optimizer (docs/server.md, paper Algorithm 3), with the
// choice of when an over-budget trial stops.
//
// A trial keeps training while its cumulative cost stays within β·min_cost (when both are known),
// its epoch count is below max_epochs and the metric has not reached the target. Otherwise it
// ends, and it converged iff it reached the target within the bound. Three early-stop modes:
//  - kPredictive (default): at an epoch end, stop when the cost so far plus the expected cost of
//    the next epoch (StopInput::next_epoch_cost_j, see next_epoch_cost.h) would exceed the bound;
//    with no estimate it falls back to kAfterCrossing. Saves the crossing epoch of every
//    early-stopped trial; an estimate above the true epoch cost can stop a trial that would have
//    converged just within the bound.
//  - kAfterCrossing (upstream's server, Zeus ≤ 0.16): stop after the epoch whose cumulative cost
//    exceeds the bound. Never stops a trial that would converge within it; pays up to one extra
//    epoch per early-stopped trial.
//  - kKnownEpochCost (upstream's legacy simulator, simulation only): the bound is checked on
//    epochs × the known steady epoch cost (next_epoch_cost_j), and the trial stops before the
//    epoch that would cross it — it needs the epoch's cost in advance, which only a simulator has.
// Pure: no state, thread-safe, no failure.
//
//   StopRule rule{.eta = 0.5, .beta = 2.0, .max_power_w = 300, .target_metric = 0.9};
//   StopDecisionCore d = decide_stop(rule, /*min_cost=*/1000.0, {.time_s = 5, .energy_j = 900,
//                                   .metric = 0.95, .current_epoch = 3});   // d.converged
#pragma once

#include <limits>
#include <optional>
#include <string_view>

#include "zeus/optimizer/bso_types.h"

namespace zeus::bso {

struct StopRule {
  double eta = 0.5;
  std::optional<double> beta = 2.0;  // null: no early stopping
  double max_power_w = 0.0;
  double target_metric = 0.5;
  bool higher_is_better_metric = true;
  int max_epochs = 100;
  EarlyStopMode mode = EarlyStopMode::kPredictive;
};

// Cumulative measurements of a trial at one report.
struct StopInput {
  double time_s = 0.0;
  double energy_j = 0.0;
  double metric = 0.0;
  int current_epoch = 0;
  // Expected cost of the next epoch (J); unset: unknown (kPredictive then stops after crossing).
  std::optional<double> next_epoch_cost_j;
};

struct StopDecisionCore {
  bool stop_train = false;
  bool converged = false;
  bool reached_target = false;
  bool within_bound = true;
  bool next_epoch_over_bound = false;  // stopped before an epoch predicted to cross the bound
  double cost = 0.0;                                         // J
  double cost_bound = std::numeric_limits<double>::infinity();  // β·min_cost, or +inf
};

// min_cost: the least cost of a converged trial of the job so far (nullopt: none yet).
StopDecisionCore decide_stop(const StopRule& rule, std::optional<double> min_cost,
                             const StopInput& input);

// The rule of a job's spec for a trial of `kind` (its knobs and early-stop mode; a pruning
// exploration's β is pruning_beta_knob when set).
StopRule stop_rule_of(const JobSpec& spec, TrialKind kind);

}  // namespace zeus::bso
