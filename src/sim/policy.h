// Policy: what the replay asks of a policy before and after each run. Default, Grid Search,
// Oracle and Zeus implement it; the replay (replay.h) owns the trace, the RNG for training
// paths and the bookkeeping, so every policy is fed by the same replay.
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <string_view>

#include "optimizer/batch_size/rng.h"
#include "zeus/common/result.h"
#include "zeus/sim/simulator.h"

namespace zeus::sim {

// The simulator draws from the batch-size optimizer's generator (xoshiro256**), whose sequence
// is fixed by our code alone, so a seed gives the same simulation on every platform.
using Rng = bso::Rng;

// What the next run does.
struct RunPlan {
  int b = 0;  // batch-size index
  int p = 0;  // power-limit index used after the first epoch (and for it when !profile_power)
  bool profile_power = false;  // the first epoch is sliced across every power limit (JIT)
  // Early stop (the batch-size optimizer's rule, bso::decide_stop in mode `early_stop`): against
  // beta x min_cost_j. Either one unset: no early stop.
  std::optional<double> beta;
  std::optional<double> min_cost_j;  // least cost of a run that reached the target so far
  EarlyStopMode early_stop = EarlyStopMode::kAfterCrossing;
  std::optional<double> prior_epoch_cost_j;  // bso::prior_epoch_cost of the batch size
  int ticket = -1;  // the policy's own id of this run (observe() gets the plan back)
  bool best_known_answer = false;  // Zeus: asked while a pruning step ran; got the best size known
};

class Policy {
 public:
  virtual ~Policy() = default;
  // The next run of the current recurrence. `rng` is the policy's own stream. Several plans may
  // be outstanding at once (concurrent submissions); each is observed once, in any order.
  virtual RunPlan plan(Rng& rng) = 0;
  // The outcome of a run planned earlier.
  virtual void observe(const RunPlan& plan, const RunRecord& run) = 0;
  // The run `plan` ended with a power-limit index chosen by the real JIT profiler (step
  // fidelity); policies that remember per-batch-size limits adopt it. Default: nothing.
  virtual void adopt_power_limit(int /*b*/, int /*p*/) {}
};

// Builds the policy for `kind` on `trace`; kInvalidArgument when it cannot be built.
Result<std::unique_ptr<Policy>> make_policy(PolicyKind kind, const WorkloadTrace& trace,
                                            const SimOptions& options);

}  // namespace zeus::sim

namespace zeus::sim {

// Factories of the individual policies (one file each).
std::unique_ptr<Policy> make_default_policy(const WorkloadTrace& trace);
// all_paths: the paper's Oracle (oracle_all_paths_optimum); else Oracle (expected).
std::unique_ptr<Policy> make_oracle_policy(const WorkloadTrace& trace, const SimOptions& options,
                                           bool all_paths);
std::unique_ptr<Policy> make_grid_search_policy(const WorkloadTrace& trace, const SimOptions& options);
Result<std::unique_ptr<Policy>> make_zeus_policy(const WorkloadTrace& trace, const SimOptions& options);

// The job spec the Zeus policy gives the batch-size optimizer's cores for `trace` (its rules,
// knobs and MAXPOWER), and the seed of its bandit's random stream (a live optimizer registered
// with this spec and mab_seed = zeus_bandit_seed(options.seed) makes the same decisions).
JobSpec zeus_job_spec(const WorkloadTrace& trace, const SimOptions& options);
uint64_t zeus_bandit_seed(uint64_t seed);

}  // namespace zeus::sim
