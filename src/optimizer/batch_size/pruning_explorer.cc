#include "optimizer/batch_size/pruning_explorer.h"

#include <algorithm>
#include <limits>
#include <string>

namespace zeus::bso {

Result<PruningDecision> next_pruning_step(std::span<const int> batch_sizes, int default_batch_size,
                                          int num_pruning_rounds,
                                          std::span<const PruningObservation> history,
                                          std::optional<double> skip_over_factor,
                                          int stop_after_rises) {
  // Best batch size known so far: the cheapest converged pruning step.
  int best_known = default_batch_size;
  double best_known_cost = std::numeric_limits<double>::infinity();
  for (const PruningObservation& o : history) {
    if (o.status == TrialStatus::kConverged && o.cost < best_known_cost) {
      best_known_cost = o.cost;
      best_known = o.batch_size;
    }
  }

  std::vector<int> space(batch_sizes.begin(), batch_sizes.end());
  std::vector<int> survivors;
  std::vector<double> survivor_costs;  // parallel to survivors
  double least_cost = std::numeric_limits<double>::infinity();  // over the rounds so far
  int round_default = default_batch_size;
  size_t next = 0;  // index of the next history entry to match
  PruningDecision decision;
  for (int round = 1; round <= num_pruning_rounds; ++round) {
    if (round > 1 && skip_over_factor) {
      std::vector<int> kept;
      for (size_t i = 0; i < survivors.size(); ++i) {
        if (survivors[i] == round_default || survivor_costs[i] <= *skip_over_factor * least_cost) {
          kept.push_back(survivors[i]);
        }
      }
      space = std::move(kept);
    }
    survivors.clear();
    survivor_costs.clear();
    double best_round_cost = std::numeric_limits<double>::infinity();
    int next_default = round_default;
    const auto it = std::find(space.begin(), space.end(), round_default);
    ZEUS_CHECK(it != space.end(), "the round's default batch size is one of its candidates");
    const long start = it - space.begin();
    // Direction 0 walks start, start−1, ..., 0; direction 1 walks start+1, ..., end.
    double default_cost = std::numeric_limits<double>::quiet_NaN();  // this round's, once run
    for (int direction = 0; direction < 2; ++direction) {
      const long step = direction == 0 ? -1 : 1;
      double previous_cost = direction == 0 ? std::numeric_limits<double>::quiet_NaN() : default_cost;
      int rises = 0;
      for (long i = direction == 0 ? start : start + 1;
           i >= 0 && i < static_cast<long>(space.size()); i += step) {
        const int bs = space[static_cast<size_t>(i)];
        if (next == history.size()) {
          decision.action = PruningAction::kExplore;
          decision.batch_size = bs;
          decision.round = round;
          return decision;
        }
        const PruningObservation& o = history[next++];
        if (o.batch_size != bs) {
          return fail(ErrorCode::kInternal,
                      "pruning history is inconsistent: step " + std::to_string(next) +
                          " ran batch size " + std::to_string(o.batch_size) + " where " +
                          std::to_string(bs) + " was due; the job's trials were edited by hand?");
        }
        if (o.status == TrialStatus::kDispatched) {
          decision.action = PruningAction::kUseBestKnown;
          decision.batch_size = best_known;
          decision.round = round;
          return decision;
        }
        if (o.status != TrialStatus::kConverged) break;
        if (bs == round_default) default_cost = o.cost;
        rises = o.cost > previous_cost ? rises + 1 : 0;  // false against NaN
        previous_cost = o.cost;
        survivors.push_back(bs);
        survivor_costs.push_back(o.cost);
        least_cost = std::min(least_cost, o.cost);
        if (o.cost < best_round_cost) {
          best_round_cost = o.cost;
          next_default = bs;
        }
        if (stop_after_rises > 0 && rises >= stop_after_rises) break;
      }
    }
    if (survivors.empty()) {
      if (round == 1) space.assign(1, default_batch_size);
      break;  // `space` holds the previous round's survivors
    }
    // Sorted by batch size, costs alongside; `space` is the next round's candidates.
    std::vector<size_t> order(survivors.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return survivors[a] < survivors[b]; });
    std::vector<int> sorted;
    std::vector<double> sorted_costs;
    for (size_t i : order) {
      sorted.push_back(survivors[i]);
      sorted_costs.push_back(survivor_costs[i]);
    }
    survivors = sorted;
    survivor_costs = std::move(sorted_costs);
    space = std::move(sorted);
    round_default = next_default;
  }
  decision.action = PruningAction::kDone;
  decision.arms = std::move(space);
  return decision;
}

}  // namespace zeus::bso
