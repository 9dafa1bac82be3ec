// The report rule of the batch-size optimizer (REFERENCE.md §3, paper Algorithm 3).
//
// A trial keeps training while its cumulative cost ≤ β·min_cost (when both are known), its epoch
// count is below max_epochs and the metric has not reached the target. Otherwise it ends, and it
// converged iff it reached the target within the bound. Pure: no state, thread-safe, no failure.
//
//   StopRule rule{.eta = 0.5, .beta = 2.0, .max_power_w = 300, .target_metric = 0.9};
//   StopDecisionCore d = decide_stop(rule, /*min_cost=*/1000.0, {.time_s = 5, .energy_j = 900,
//                                   .metric = 0.95, .current_epoch = 3});   // d.converged
#pragma once

#include <limits>
#include <optional>

namespace zeus::bso {

struct StopRule {
  double eta = 0.5;
  std::optional<double> beta = 2.0;  // null: no early stopping
  double max_power_w = 0.0;
  double target_metric = 0.5;
  bool higher_is_better_metric = true;
  int max_epochs = 100;
};

// Cumulative measurements of a trial at one report.
struct StopInput {
  double time_s = 0.0;
  double energy_j = 0.0;
  double metric = 0.0;
  int current_epoch = 0;
};

struct StopDecisionCore {
  bool stop_train = false;
  bool converged = false;
  bool reached_target = false;
  bool within_bound = true;
  double cost = 0.0;                                         // J
  double cost_bound = std::numeric_limits<double>::infinity();  // β·min_cost, or +inf
};

// min_cost: the least cost of a converged trial of the job so far (nullopt: none yet).
StopDecisionCore decide_stop(const StopRule& rule, std::optional<double> min_cost,
                             const StopInput& input);

}  // namespace zeus::bso
