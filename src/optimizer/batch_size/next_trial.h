// The batch-size decision for a job's next trial, from its spec and trial history alone: the
// pruning explorer while pruning lasts, then Gaussian Thompson sampling over the surviving arms.
//
// An arm's observations are the costs of its ended trials (converged or not: an early-stopped
// trial's cost is its penalty), in trial order, limited to the newest window_size. Failed and
// dispatched trials carry no observation. A failed pruning trial (ended without a result: a node
// failure, a preemption) is not an exploration either: the pruning explorer never sees it, so
// the same batch size is offered again in the same round and no interruption can cost a job a
// batch size (upstream's rule: the pruning history holds only trials with a result or running).
// Pure apart from the Rng passed in (drawn only in the bandit phase); thread-safety: none needed.
// Fails only on an inconsistent history (kInternal).
//
//   Rng rng(*spec.mab_seed);
//   Result<NextTrialDecision> d = decide_next_trial(spec, trials, rng);
//   // d->batch_size, d->kind (pruning / concurrent / mab), d->pruning_round
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "optimizer/batch_size/gaussian_ts.h"
#include "optimizer/batch_size/pruning_explorer.h"
#include "optimizer/batch_size/rng.h"
#include "zeus/common/result.h"
#include "zeus/optimizer/bso_types.h"

namespace zeus::bso {

struct NextTrialDecision {
  int batch_size = 0;
  TrialKind kind = TrialKind::kMab;
  int pruning_round = 0;  // for kPruning and kConcurrent: the round in progress
};

// The pruning explorer's history: the job's pruning trials that ended with a result or are still
// running, in trial order (failed ones are no exploration). Shared by every caller of the
// explorer (this decision, the dashboard's job view), so they agree on the stage.
std::vector<PruningObservation> pruning_history(std::span<const Trial> trials);

// The pruning explorer's step for a job: its spec's knobs (prune_factor included) over
// pruning_history(trials). Shared by decide_next_trial and the dashboard's job view.
Result<PruningDecision> pruning_step(const JobSpec& spec, std::span<const Trial> trials);

// An arm's belief from its costs under the spec's prior, window and variance floor.
Belief spec_arm_belief(const JobSpec& spec, std::span<const double> costs);

// spec must be validated; trials in ascending trial_number.
Result<NextTrialDecision> decide_next_trial(const JobSpec& spec, std::span<const Trial> trials,
                                            Rng& rng);

// The least cost among converged trials (the early-stop rule's min_cost), or nullopt.
std::optional<double> min_converged_cost(std::span<const Trial> trials);

}  // namespace zeus::bso
