// Data drift (paper §6.4): a recurring job whose best batch size shifts over time. Built from
// the traces: the job trains one workload to one target metric for a first phase of recurrences,
// then to another target for a second phase (the default: ImageNet's bar is lowered from 0.65 to
// 0.5, which moves the best batch size from 360 to 256), which changes the training paths and so
// the best (b, p). A raised bar can make every run exceed beta x the old least cost, so each is
// early-stopped and recurrences fail: failed_recurrences shows it. Zeus with its full history, Zeus with a window of the
// newest costs per batch size (the batch-size optimizer's window_size), Grid Search and Default
// are compared with an Oracle that knows each phase's optimum.
// Units: J, s, W. Deterministic in the options. Thread-safety: shares no state.
// Failure: the trace and option errors of simulate(); kInvalidArgument when a target is absent
// from the training trace, the phases differ in batch sizes, or window/phase sizes are < 1.
//
//   zeus::sim::DriftOptions drift;                       // imagenet, 0.65 then 0.5
//   auto result = zeus::sim::run_drift(options, drift);
//   if (result) std::cout << zeus::sim::format_drift_table(*result);
#pragma once

#include <string>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/sim/sim_experiments.h"

namespace zeus::sim {

struct DriftOptions {
  std::string workload = "imagenet";
  std::vector<double> targets = {0.65, 0.5};  // one phase per target, in order (>= 2)
  int phase_recurrences = 0;                  // per phase; 0 = SimOptions::recurrences
  int window_size = 5;                        // for the windowed Zeus (>= 1)
};

struct DriftPhase {
  double target_metric = 0.0;
  int first_recurrence = 0;  // 0-based
  int recurrences = 0;
  int oracle_batch_size = 0;
  double oracle_power_limit_w = 0.0;
  double oracle_cost_j = 0.0;  // expected per recurrence
};

struct DriftPolicy {
  std::string name;  // "Default", "GridSearch", "Zeus", "Zeus (window N)", "Oracle"
  Stat cum_regret_j;               // against each phase's Oracle
  Stat last_phase_energy_ratio;    // energy over the last phase / Default's
  Stat last_phase_regret_j;        // regret accumulated in the last phase
  // Share of the last phase's final quarter of recurrences run at that phase's optimal batch size.
  Stat last_phase_optimal_share;
  Stat failed_recurrences;         // recurrences that gave up after max_tries runs
  std::vector<double> mean_cum_regret_j;  // per recurrence, mean over seeds
  std::vector<int> first_seed_batch_sizes;  // the batch size of each recurrence, first seed
  // Per recurrence: share of seeds that ran the current phase's optimal batch size.
  std::vector<double> optimal_share_curve;
};

struct DriftResult {
  std::string gpu, workload;
  double eta = 0.0, beta = 0.0;
  int seeds = 0, window_size = 0;
  std::vector<DriftPhase> phases;
  std::vector<DriftPolicy> policies;
};

Result<DriftResult> run_drift(const ExperimentOptions& options, const DriftOptions& drift);
std::string format_drift_table(const DriftResult& result);

}  // namespace zeus::sim
