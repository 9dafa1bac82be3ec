// Replay of one run at epoch fidelity: the closed form per epoch (paper §6.1).
#pragma once

#include "sim/policy.h"
#include "zeus/sim_trace.h"

namespace zeus::sim {

// Runs `plan` on the training path whose target epoch is `target_epoch` (<= 0: never reached).
// Epoch 1 of a profiling run is sliced evenly across every power limit (its time and energy are
// the means over the limits); the other epochs run at plan.p. After each epoch the run stops when
// it reached the target, when its cumulative cost exceeds plan.beta x plan.min_cost_j (then it
// failed: early-stopped), or at max_epochs (failed).
RunRecord replay_run_epochs(const WorkloadTrace& trace, const RunPlan& plan, int target_epoch, double eta);

}  // namespace zeus::sim
