// The expected cost of a trial's next epoch, for the predictive early stop (early_stop.h).
//
// From the trial's own reports when two exist: the cost per epoch between the last two (a steady
// epoch at the power limit the trial runs at, past the JIT profiler's first epoch). At the first
// report: the first epoch's own cost, or the batch size's per-epoch cost from the job's earlier
// trials when that is lower (the first epoch of a new batch size profiles every power limit and
// costs more than the epochs after it; an estimate too high stops a trial that would have
// converged within the bound, one too low only delays the stop by an epoch). Before any epoch:
// the earlier trials' per-epoch cost, or nothing.
// Pure: no state, thread-safe, no failure.
//
//   EpochCostEvidence e{.cost_j = 300, .epochs = 3, .previous_cost_j = 220, .previous_epochs = 2};
//   std::optional<double> next = expected_next_epoch_cost(e);   // 80 J
#pragma once

#include <optional>
#include <span>

#include "zeus/optimizer/bso_types.h"

namespace zeus::bso {

struct EpochCostEvidence {
  double cost_j = 0.0;  // cumulative at this report (J)
  int epochs = 0;
  double previous_cost_j = 0.0;  // at the trial's previous report; 0 and 0 when there was none
  int previous_epochs = 0;
  std::optional<double> prior_epoch_cost_j;  // prior_epoch_cost() of the trial's batch size
};

std::optional<double> expected_next_epoch_cost(const EpochCostEvidence& evidence);

// The least cost per epoch among the job's ended trials of `batch_size` (J), or nullopt.
std::optional<double> prior_epoch_cost(std::span<const Trial> trials, int batch_size);

}  // namespace zeus::bso
