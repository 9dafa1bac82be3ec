#include "optimizer/batch_size/next_epoch_cost.h"

#include <algorithm>

namespace zeus::bso {

std::optional<double> expected_next_epoch_cost(const EpochCostEvidence& e) {
  if (e.previous_epochs >= 1 && e.epochs > e.previous_epochs) {
    return (e.cost_j - e.previous_cost_j) / (e.epochs - e.previous_epochs);
  }
  if (e.epochs >= 1) {
    const double own = e.cost_j / e.epochs;
    return e.prior_epoch_cost_j ? std::min(own, *e.prior_epoch_cost_j) : own;
  }
  return e.prior_epoch_cost_j;
}

std::optional<double> prior_epoch_cost(std::span<const Trial> trials, int batch_size) {
  std::optional<double> best;
  for (const Trial& t : trials) {
    if (!t.ended() || t.batch_size != batch_size || t.epochs < 1) continue;
    const double per_epoch = t.cost / t.epochs;
    if (!best || per_epoch < *best) best = per_epoch;
  }
  return best;
}

}  // namespace zeus::bso
