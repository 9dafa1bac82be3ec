// Simulation experiments: the paper's evaluation (§6) computed from the bundled traces.
//
// headline (Fig. 6/7): per workload, every policy over several seeds; energy and time of the last
// five recurrences and of all recurrences as ratios against Default (per seed, then the mean
// and standard deviation over seeds), and cumulative regret against the Oracle's expected cost
// (J). pareto (Fig. 2/5): every (b, p) as expected (TTA, ETA) per recurrence, with the Pareto
// frontier and b0 at the maximum power limit marked.
// Units: s, J, W. Deterministic in the options (seeds are seed, seed + 1, ...).
// Thread-safety: the functions share no state; `progress` is called on the caller's thread.
// Failure: the trace loading and option errors of sim_trace.h and simulator.h, unchanged.
//
//   zeus::sim::ExperimentOptions options;  options.data_dir = "data";
//   auto headline = zeus::sim::run_headline(options);
//   if (headline) std::cout << zeus::sim::format_headline_table(*headline);
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/sim/sim_carbon.h"
#include "zeus/sim/simulator.h"

namespace zeus::sim {

struct ExperimentOptions {
  std::filesystem::path data_dir = "data";
  std::string gpu = "v100";
  std::vector<std::string> workloads;  // empty: the six paper workloads
  SimOptions sim;                      // eta, beta, recurrences, seed (the first seed), ...
  int seeds = 10;                      // >= 1
  // Called after each simulated (workload, policy, seed) with (done, total); may be empty.
  std::function<void(int, int)> progress;
  int threads = 0;  // seeds run on this many threads (0: all cores); results do not depend on it
  // headline: charge each policy's energy with carbon intensity and/or a price (none by default).
  ReplayAccounting accounting;
};

// Mean and standard deviation (population) over seeds.
struct Stat {
  double mean = 0.0;
  double stddev = 0.0;
};
// The mean and population standard deviation of `values` ({0, 0} when empty).
Stat stat_of(const std::vector<double>& values);

// A policy's total under a provider (gCO2eq or $) over all recurrences, over seeds; unknown
// (complete = false, with the first seed's reason) when any seed met a time without a value.
struct AccountedStat {
  bool complete = true;
  Stat amount;
  std::string unknown_reason;
};

struct PolicyHeadline {
  PolicyKind policy = PolicyKind::kDefault;
  Stat last5_energy_ratio, last5_time_ratio;  // last five recurrences, against Default
  Stat cum_energy_ratio, cum_time_ratio;      // all recurrences, against Default
  Stat cum_regret_j;  // sum of (recurrence cost - Oracle (expected)'s expected cost), the floor
  Stat cum_regret_vs_oracle_j;  // the same against the (paper's) Oracle's expected cost
  Stat last5_energy_j;                        // absolute (J, sum of the five), convergence check
  Stat last5_time_s;                          // absolute (s, sum of the five)
  int converged_batch_size = 0;               // most frequent (b, p) of the last recurrence
  double converged_power_limit_w = 0.0;       //   over seeds (ties: the first seed's)
  std::vector<double> mean_cum_regret_j;      // per recurrence, mean over seeds (Fig. 7)
  std::vector<double> sd_cum_regret_j;        // per recurrence, standard deviation over seeds
  Stat cum_energy_j;                          // absolute (J, all recurrences)
  std::optional<AccountedStat> carbon;        // gCO2eq, with ExperimentOptions::accounting
  std::optional<AccountedStat> cost;          // $
};

struct WorkloadHeadline {
  std::string name;
  int recurrences = 0;
  int default_batch_size = 0;
  double max_power_limit_w = 0.0;
  Expectation oracle;  // Oracle (expected)'s (b, p) and expected recurrence cost: regret's floor
  int oracle_batch_size = 0;
  double oracle_power_limit_w = 0.0;
  Expectation oracle_all_paths;  // the (paper's) Oracle: every path of its (b, p) reaches the target
  int oracle_all_paths_batch_size = 0;
  double oracle_all_paths_power_limit_w = 0.0;
  std::vector<PolicyHeadline> policies;  // in all_policies() order

  // The row of `kind`, or nullptr when it was not run.
  const PolicyHeadline* policy(PolicyKind kind) const {
    for (const PolicyHeadline& p : policies) {
      if (p.policy == kind) return &p;
    }
    return nullptr;
  }
};

struct HeadlineResult {
  std::string gpu;
  double eta = 0.0, beta = 0.0;
  int seeds = 0;
  uint64_t first_seed = 0;
  std::vector<WorkloadHeadline> workloads;
  // With accounting: the providers' describe() (empty when not given) and the schedule's.
  std::string carbon_source, price_source, schedule;
  bool accounted() const { return !carbon_source.empty() || !price_source.empty(); }
};

// kInvalidArgument for seeds < 1 and for the option/trace errors of simulate() and loading.
Result<HeadlineResult> run_headline(const ExperimentOptions& options);
// The headline as an aligned text table (one row per workload and policy); with accounting, a
// second table of each policy's energy, gCO2eq and $.
std::string format_headline_table(const HeadlineResult& result);
// Only the accounting table (empty sections left out); format_headline_table appends it.
std::string format_headline_accounting(const HeadlineResult& result);

struct ParetoPoint {
  int batch_size = 0;
  double power_limit_w = 0.0;
  double tta_s = 0.0, eta_j = 0.0, cost_j = 0.0;  // expected per recurrence (retries included)
  double reach_probability = 0.0;
  bool on_frontier = false;  // no other point has both TTA and ETA <= and one <
  bool is_default = false;   // b0 at the maximum power limit
  bool is_optimum = false;   // the Oracle's choice at the options' eta
};

struct WorkloadPareto {
  std::string name;
  std::vector<ParetoPoint> points;  // (b, p) that reach the target on some path; b, then p
};

struct ParetoResult {
  std::string gpu;
  double eta = 0.0;
  std::vector<WorkloadPareto> workloads;
};

// Every (b, p) of each workload as expected (TTA, ETA).
Result<ParetoResult> run_pareto(const ExperimentOptions& options);
// Per workload: the frontier points and the default point, as a text table.
std::string format_pareto_table(const ParetoResult& result);

}  // namespace zeus::sim
