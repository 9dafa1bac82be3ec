// The execution options of one (stage, instruction): its profiled clocks turned into the
// planner's discrete choices (docs/perseus.md, the artifact's order).
//   1. Pareto filter on (time, energy): drop an option when another is faster and cheaper by the
//      noise factor; first with factor 1, and when 3 or fewer survive, again with `noise_factor`.
//   2. Quantise time: q = time // unit (Python floor semantics).
//   3. De-duplicate equal q, keeping the largest energy (the fastest clock of that unit bucket).
//   4. Sort by q, slowest first; then effective energy e' = energy - P_b * q * unit.
// With ParetoEnergy::kEffective (Zeus 0.16's example order) e' is computed first and steps 1-3
// use it instead of the measured energy.
// Pure; values only.
#pragma once

#include <cstdint>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/perseus/pfo_planner.h"
#include "zeus/perseus/pfo_profile.h"

namespace zeus::pfo {

// Candidate options of one operation from its profile rows (any order). kInvalidArgument when
// fewer than 4 distinct quantised times survive (the exponential fit needs more points than its
// three coefficients), naming the operation and the fix.
Result<std::vector<ExecutionOption>> candidate_options(
    const std::vector<ProfileRow>& rows, double unit_time_s, double p2p_power_w,
    double noise_factor, ParetoEnergy pareto = ParetoEnergy::kMeasured);

}  // namespace zeus::pfo
