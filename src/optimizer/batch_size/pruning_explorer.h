// The pruning explorer of the batch-size optimizer (docs/server.md, paper Algorithm 2),
// recomputed from the history of pruning trials on every request.
//
// For each round: explore from the round's default batch size downward, then upward; within a
// direction stop at the first batch size that did not converge (history holds no failed trials:
// decide_next_trial leaves them out, as runs that ended without a result); the
// converged ones survive; the next round explores only the survivors, starting from the cheapest
// of them. While a step of the current round is still running, a concurrent request gets the best
// batch size known so far (cheapest converged pruning trial; the default before any). After the
// rounds, the survivors become the bandit's arms. A round with no survivor ends pruning: the arms
// are the previous round's survivors (after the first round: the default batch size alone).
// With skip_over_factor set (the spec's prune_factor), a round after the first leaves out the
// survivors whose converged cost in the previous round exceeds skip_over_factor × the least
// converged cost of the earlier rounds (never the round's default): re-running a batch size
// already observed well above the best is where most of pruning's regret went.
// With stop_after_rises > 0 (the spec's pruning_stop_after_rises), a direction also ends after
// that many consecutive converged explorations each costlier than the one before it (going up,
// the first is compared with the round's default).
// Pure: no state. Fails (kInternal) only when the history does not follow the exploration order.
//
//   std::vector<PruningObservation> done = {{32, TrialStatus::kConverged, 100.0}};
//   Result<PruningDecision> d = next_pruning_step({8, 16, 32}, 32, 2, done);
//   // d->action == PruningAction::kExplore, d->batch_size == 16, d->round == 1
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/optimizer/bso_types.h"

namespace zeus::bso {

// One pruning trial, in dispatch order.
struct PruningObservation {
  int batch_size = 0;
  TrialStatus status = TrialStatus::kDispatched;
  double cost = 0.0;  // J; read only for converged trials
};

enum class PruningAction {
  kExplore,       // dispatch batch_size as the next pruning step of `round`
  kUseBestKnown,  // a step of `round` is running: give batch_size (best known) to this request
  kDone,          // pruning is over: `arms` are the bandit's arms
};

struct PruningDecision {
  PruningAction action = PruningAction::kDone;
  int batch_size = 0;     // kExplore and kUseBestKnown
  int round = 0;          // 1-based; kExplore and kUseBestKnown
  std::vector<int> arms;  // kDone: sorted ascending, non-empty
};

// batch_sizes: sorted ascending and containing default_batch_size (validate_job_spec ensures it).
Result<PruningDecision> next_pruning_step(std::span<const int> batch_sizes, int default_batch_size,
                                          int num_pruning_rounds,
                                          std::span<const PruningObservation> history,
                                          std::optional<double> skip_over_factor = std::nullopt,
                                          int stop_after_rises = 0);

}  // namespace zeus::bso
