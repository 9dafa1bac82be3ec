// Simulator: the trace-driven replay of a recurring training job (paper §6.1) under a policy
// that picks the batch size and power limit of each run.
//
// A recurrence is one submission of the job; it runs (tries) until a run reaches the target
// metric (at most SimOptions::max_tries runs). A run samples one training path of its batch size
// with the simulator's seeded RNG and costs, per epoch, eta*energy + (1 - eta)*MAXPOWER*time.
// Policies: Default (b0 at the maximum power limit), Grid Search with pruning, Zeus (the
// batch-size optimizer's cores + JIT power-limit choice), the two Oracles (below).
// Units: time s, energy J, cost J, power W. Same trace + policy + options => identical history.
// Thread-safety: simulate() touches no shared state; call it from several threads at will.
// Failure: kInvalidArgument for eta outside [0, 1], beta < 1 (other than 0 = no early stop),
// recurrences, window_size or steps_per_epoch < 0, max_tries < 1.
//
//   auto trace = zeus::sim::load_workload_trace("data", "v100", "squad");
//   auto history = zeus::sim::simulate(*trace, zeus::sim::PolicyKind::kGridSearch, {});
//   double total_j = history->total_energy_j();
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/optimizer/bso_types.h"
#include "zeus/sim/sim_trace.h"

namespace zeus::sim {

// Two oracles, both knowing every path of every (b, p) in advance and running one of them every
// recurrence. kOracle (the paper's comparison point, what an exhaustive grid search converges to):
// the least expected cost among the (b, p) whose every training path reaches the target.
// kOracleExpected: the least expected cost over every (b, p), a path that misses the target
// charged as a failed run (max_epochs epochs) plus a retry — lower or equal, and a riskier choice.
enum class PolicyKind { kDefault, kGridSearch, kZeus, kOracle, kOracleExpected };
// "Default", "GridSearch", "Zeus", "Oracle", "Oracle (expected)" (the keys of the JSON output).
std::string_view policy_name(PolicyKind policy);
// Parses a policy name (case-sensitive, as above); kInvalidArgument otherwise.
Result<PolicyKind> parse_policy(std::string_view name);
// All five, in report order: Default, GridSearch, Zeus, Oracle, Oracle (expected).
const std::vector<PolicyKind>& all_policies();

// The rules of the Zeus policy: the batch-size optimizer's own spec fields
// (zeus/optimizer/bso_types.h),
// plus what the simulator needs to model upstream's legacy simulator (zeus/_legacy/simulate.py).
struct ZeusRules {
  EarlyStopMode early_stop = EarlyStopMode::kPredictive;
  std::optional<double> prune_factor = 1.5;
  double mab_min_relative_sd = 0.0;
  std::optional<double> pruning_beta;  // the spec's pruning_beta_knob (null: beta)
  int pruning_stop_after_rises = 3;    // the spec's field of that name (0: off)
  // Upstream's simulator: min_cost is the least *recurrence* cost (its failed runs included),
  // and a run whose first epoch alone would cross β·min_cost is not run: the bandit observes
  // 100·β·min_cost for it and the recurrence retries at no cost (with kKnownEpochCost only).
  bool upstream_bookkeeping = false;
};
// Named configurations: "zeus" (our defaults, above) and "upstream" (the original's rules: early
// stop before the crossing epoch with the epoch's cost known, its pruning and bandit, its
// bookkeeping). "preset,key=value,..." overrides fields: early_stop=predictive|after-crossing|
// known-epoch-cost, prune_factor=X|off, pruning_beta=X|off, stop_after_rises=N, mab_min_relative_sd=X,
// upstream_bookkeeping=0|1.
// kInvalidArgument naming the bad part and the valid ones.
Result<ZeusRules> parse_zeus_rules(std::string_view text);
// The canonical text of `rules` ("early_stop=predictive,prune_factor=1.5,...").
std::string zeus_rules_text(const ZeusRules& rules);

// epoch: closed form per epoch (sweeps). step: iteration by iteration on a ReplayGpu with a
// FakeClock, measured by the real EnergyMonitor and steered by the real PowerLimitOptimizer.
enum class Fidelity { kEpoch, kStep };
// "epoch" or "step"; kInvalidArgument otherwise.
Result<Fidelity> parse_fidelity(std::string_view name);

struct SimOptions {
  double eta = 0.5;      // cost knob in [0, 1]
  double beta = 2.0;     // early stop at beta x min observed cost; 0 = never stop early
  int recurrences = 0;   // 0 = the paper's 2 x |B| x |P|
  uint64_t seed = 1;     // RNG seed: training-path sampling and the policy's own draws
  int max_tries = 20;    // runs per recurrence before it is given up as failed
  Fidelity fidelity = Fidelity::kEpoch;
  bool early_stopping = true;  // ablation switches (Zeus and Grid Search)
  bool pruning = true;
  bool jit_profiling = true;
  int window_size = 0;  // Zeus: only an arm's newest window_size costs count (0 = all; drift)
  // Step fidelity: iterations per epoch; 0 = 50 x |P| + 1, the least that lets the JIT profiler
  // (1 wait + 10 warm-up + 40 profiled steps per limit) finish within the first epoch.
  int steps_per_epoch = 0;
  ZeusRules zeus;  // the Zeus policy's rules (default: ours)
};

// kInvalidArgument naming the bad option and its valid range.
Result<void> validate_options(const SimOptions& options);
// The number of recurrences these options give for `trace`.
int recurrences_for(const WorkloadTrace& trace, const SimOptions& options);

// One run of the job.
struct RunRecord {
  int recurrence = 0;   // 0-based recurrence index
  int b = 0;            // batch-size index into the trace
  int p = 0;            // power-limit index into the trace
  int epochs = 0;       // epochs run (up to the target, the early stop or max_epochs)
  bool reached = false; // reached the target within max_epochs and the cost bound
  bool early_stopped = false;  // cut by the beta bound
  bool profiled = false;       // the first epoch JIT-profiled every power limit
  double time_s = 0.0, energy_j = 0.0, cost_j = 0.0;
};

// One recurrence: its runs summed.
struct RecurrenceRecord {
  int b = 0, p = 0;     // configuration of the last run
  int tries = 0;
  bool reached = false;
  double time_s = 0.0, energy_j = 0.0, cost_j = 0.0;
};

struct History {
  PolicyKind policy = PolicyKind::kDefault;
  std::vector<RunRecord> runs;
  std::vector<RecurrenceRecord> recurrences;

  double total_energy_j() const;
  double total_time_s() const;
  double total_cost_j() const;
};

// Replays `trace` under `policy`. Deterministic in (trace, policy, options).
Result<History> simulate(const WorkloadTrace& trace, PolicyKind policy, const SimOptions& options);

// Expected outcome of running (b, p) every recurrence with no early stop: training paths are
// equally likely; a path that misses the target costs max_epochs epochs and the recurrence
// retries, so expected recurrence cost = mean run cost / P(reach) (Wald's identity).
struct Expectation {
  int b = 0, p = 0;
  double reach_probability = 0.0;  // share of paths reaching the target within max_epochs
  double time_s = 0.0, energy_j = 0.0, cost_j = 0.0;  // per recurrence; +inf if never reached
};
Expectation expected_recurrence(const WorkloadTrace& trace, int b, int p, double eta);
// The configuration of Oracle (expected): argmin expected recurrence cost over every (b, p) with
// reach_probability > 0 (ties: larger power limit, then smaller batch size).
Expectation oracle_optimum(const WorkloadTrace& trace, double eta);
// The configuration of Oracle (the paper's): the same argmin over the (b, p) whose every path
// reaches the target (reach_probability 1); if none does, over those of the highest probability.
Expectation oracle_all_paths_optimum(const WorkloadTrace& trace, double eta);

}  // namespace zeus::sim
