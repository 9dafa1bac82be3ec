#include "optimizer/batch_size/next_trial.h"

#include <vector>

#include "optimizer/batch_size/gaussian_ts.h"
#include "optimizer/batch_size/pruning_explorer.h"

namespace zeus::bso {

std::vector<PruningObservation> pruning_history(std::span<const Trial> trials) {
  // A failed trial (ended without a result: the client died or gave up) is no exploration: the
  // same batch size is offered again, as upstream does. Not converged is a real result.
  std::vector<PruningObservation> pruning;
  for (const Trial& t : trials) {
    if (t.kind == TrialKind::kPruning && t.status != TrialStatus::kFailed) {
      pruning.push_back({t.batch_size, t.status, t.cost});
    }
  }
  return pruning;
}

Result<PruningDecision> pruning_step(const JobSpec& spec, std::span<const Trial> trials) {
  const std::vector<PruningObservation> pruning = pruning_history(trials);
  return next_pruning_step(spec.batch_sizes, spec.default_batch_size, spec.num_pruning_rounds,
                           pruning, spec.prune_factor, spec.pruning_stop_after_rises);
}

Belief spec_arm_belief(const JobSpec& spec, std::span<const double> costs) {
  const Prior prior{spec.mab_prior_mean, spec.mab_prior_precision};
  return arm_belief(newest_costs(costs, spec.window_size), prior, spec.mab_min_relative_sd);
}

Result<NextTrialDecision> decide_next_trial(const JobSpec& spec, std::span<const Trial> trials,
                                            Rng& rng) {
  Result<PruningDecision> step = pruning_step(spec, trials);
  if (!step) return fail(step.error());
  NextTrialDecision next;
  if (step->action == PruningAction::kExplore || step->action == PruningAction::kUseBestKnown) {
    next.batch_size = step->batch_size;
    next.kind =
        step->action == PruningAction::kExplore ? TrialKind::kPruning : TrialKind::kConcurrent;
    next.pruning_round = step->round;
    return next;
  }
  const std::vector<int>& arms = step->arms;
  std::vector<std::vector<double>> costs(arms.size());
  for (const Trial& t : trials) {
    if (!t.ended()) continue;
    for (size_t i = 0; i < arms.size(); ++i) {
      if (arms[i] == t.batch_size) costs[i].push_back(t.cost);
    }
  }
  std::vector<Belief> beliefs;
  beliefs.reserve(arms.size());
  for (const std::vector<double>& c : costs) beliefs.push_back(spec_arm_belief(spec, c));
  next.batch_size = arms[choose_arm(beliefs, spec.mab_num_explorations, rng)];
  next.kind = TrialKind::kMab;
  return next;
}

std::optional<double> min_converged_cost(std::span<const Trial> trials) {
  std::optional<double> best;
  for (const Trial& t : trials) {
    if (t.status == TrialStatus::kConverged && (!best || t.cost < *best)) best = t.cost;
  }
  return best;
}

}  // namespace zeus::bso
