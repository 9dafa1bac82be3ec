// Simulation sweeps: Zeus against Default and the Oracle while one thing varies — the cost knob
// eta (paper Fig. 11/22), the early-stop threshold beta (Fig. 12), Zeus's components (ablation,
// Fig. 13), or the GPU (Fig. 14/23). Each variant is a full headline run (every policy, every
// workload, every seed) with that one change, so its numbers mean what the headline's mean.
// Units: s, J, W; ratios are against Default on the same seed, then mean and spread over seeds.
// Thread-safety: the functions share no state; `progress` is called on the caller's thread.
// Failure: the option and trace errors of run_headline(), and kInvalidArgument for an empty or
// out-of-range list of variants (eta outside [0, 1], beta < 1 other than 0 = no early stop, an
// unknown GPU).
//
//   zeus::sim::ExperimentOptions options;  options.data_dir = "data";
//   auto sweep = zeus::sim::run_beta_sweep(options, {});   // beta 1.5, 2, ..., 5
//   if (sweep) std::cout << zeus::sim::format_sweep_table(*sweep);
#pragma once

#include <string>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/sim/sim_experiments.h"

namespace zeus::sim {

// Zeus's outcome in one variant on one workload.
struct SweepCell {
  std::string variant;  // label: "0.50" (eta), "2.0" (beta), "no early stop", "a40"
  double value = 0.0;   // the numeric parameter (eta or beta); 0 for named variants
  Stat cum_energy_ratio, cum_time_ratio;      // all recurrences, Zeus / Default
  Stat last5_energy_ratio, last5_time_ratio;  // last five recurrences, Zeus / Default
  Stat cum_regret_j;                          // Zeus's cumulative regret against the Oracle (J)
  Stat grid_cum_regret_j;                     // Grid Search's, for comparison (J)
  Stat last5_eta_j, last5_tta_s;              // Zeus's mean energy and time per recurrence (last 5)
  double oracle_eta_j = 0.0, oracle_tta_s = 0.0;  // the Oracle's expected ones at this variant
  int converged_batch_size = 0;               // Zeus's most frequent last (b, p) over seeds
  double converged_power_limit_w = 0.0;
};

struct SweepWorkload {
  std::string name;
  std::vector<SweepCell> cells;  // one per variant, in variant order
};

struct SweepResult {
  std::string experiment;  // "eta-sweep", "beta-sweep", "ablation" or "gpus"
  std::string parameter;   // "eta", "beta", "variant" or "gpu"
  std::string gpu;         // the GPU (for "gpus": the list, comma-separated)
  double eta = 0.0, beta = 0.0;  // the fixed ones (the swept one is per cell)
  int seeds = 0;
  std::vector<std::string> variants;
  std::vector<SweepWorkload> workloads;
};

// eta in `etas` (empty: 0, 0.1, ..., 1). Zeus's (TTA, ETA) per eta is Fig. 11.
Result<SweepResult> run_eta_sweep(const ExperimentOptions& options, std::vector<double> etas);
// beta in `betas` (empty: 1.5, 2, 2.5, ..., 5).
Result<SweepResult> run_beta_sweep(const ExperimentOptions& options, std::vector<double> betas);
// Zeus, then without early stopping, without pruning, without JIT profiling, without all three.
Result<SweepResult> run_ablation(const ExperimentOptions& options);
// Each GPU of `gpus` (empty: v100, a40, rtx6000, p100) with its own traces.
Result<SweepResult> run_gpus(const ExperimentOptions& options, std::vector<std::string> gpus);

// One row per workload and variant.
std::string format_sweep_table(const SweepResult& result);

}  // namespace zeus::sim
