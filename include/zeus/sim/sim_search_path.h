// Search paths (paper Fig. 8/20/21): the (batch size, power limit) each policy ran, run by run,
// over a heat map of every configuration's regret — how far its expected recurrence cost lies
// above the Oracle's. One seed (the options' first), every paper workload by default.
// Units: J, W; regret_ratio is a pure number (expected cost / Oracle's expected cost).
// Thread-safety: shares no state. Failure: the option and trace errors of simulate().
//
//   zeus::sim::ExperimentOptions options;  options.workloads = {"squad"};
//   auto paths = zeus::sim::run_search_path(options);
//   if (paths) std::cout << zeus::sim::format_search_path_table(*paths);
#pragma once

#include <string>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/sim/sim_experiments.h"

namespace zeus::sim {

// One run of a policy's search.
struct PathStep {
  int recurrence = 0;          // 0-based
  int batch_size = 0;
  double power_limit_w = 0.0;
  double cost_j = 0.0;
  bool reached = false;        // reached the target within the bound
  bool early_stopped = false;  // cut by the beta bound
  bool profiled = false;       // its first epoch JIT-profiled every power limit
};

struct PolicyPath {
  PolicyKind policy = PolicyKind::kGridSearch;
  std::vector<PathStep> steps;   // every run, in order
  int distinct_configurations = 0;
};

struct WorkloadSearchPath {
  std::string name;
  std::vector<int> batch_sizes;        // ascending
  std::vector<double> power_limits_w;  // ascending
  // regret_ratio[b][p]: expected recurrence cost of (b, p) / the Oracle's; +inf when (b, p)
  // never reaches the target.
  std::vector<std::vector<double>> regret_ratio;
  int oracle_batch_size = 0;
  double oracle_power_limit_w = 0.0;
  int default_batch_size = 0;
  std::vector<PolicyPath> paths;  // Grid Search, then Zeus
};

struct SearchPathResult {
  std::string gpu;
  double eta = 0.0, beta = 0.0;
  uint64_t seed = 0;
  std::vector<WorkloadSearchPath> workloads;
};

// Replays Grid Search and Zeus with the options' first seed.
Result<SearchPathResult> run_search_path(const ExperimentOptions& options);
// Per workload and policy: run count, distinct configurations, and the path compressed into
// "(b, W)xN" segments.
std::string format_search_path_table(const SearchPathResult& result);

}  // namespace zeus::sim
