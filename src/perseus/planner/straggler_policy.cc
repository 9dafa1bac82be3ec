// combined_straggler_plan (zeus/perseus/pfo_straggler_policy.h).
#include <algorithm>
#include <string>

#include "zeus/perseus/pfo_straggler_policy.h"

namespace zeus::pfo {

double energy_at_straggler_time_j(const WaitingCost& waiting, double plan_time_s,
                                  double plan_energy_j, double straggler_time_s) {
  const double wait_s = std::max(0.0, straggler_time_s - plan_time_s);
  return plan_energy_j + waiting.p2p_power_w * waiting.num_stages * wait_s;
}

Result<CombinedChoice> combined_straggler_plan(const PlanCandidates& candidates,
                                               std::span<const GlobalClockPlan> global_clocks,
                                               const WaitingCost& waiting,
                                               double straggler_time_s) {
  if (waiting.num_stages < 1 || !(waiting.p2p_power_w >= 0.0)) {
    return fail(ErrorCode::kInvalidArgument,
                "the straggler policy needs >= 1 stage and a blocking power >= 0 W (got " +
                    std::to_string(waiting.num_stages) + " stages, " +
                    std::to_string(waiting.p2p_power_w) + " W)");
  }
  Result<PlanChoice> frontier = plan_for_straggler(candidates, straggler_time_s);
  if (!frontier) return fail(frontier.error());
  CombinedChoice out;
  out.frontier = *frontier;
  out.time_s = frontier->point.time_s;
  out.energy_j = frontier->point.energy_j;
  out.energy_at_straggler_j =
      energy_at_straggler_time_j(waiting, out.time_s, out.energy_j, straggler_time_s);
  // The same relative guard as plan_for_straggler, so a clock finishing exactly at T' counts.
  const double limit_s = straggler_time_s * (1.0 + 1e-12);
  for (const GlobalClockPlan& clock : global_clocks) {
    if (clock.time_s > limit_s) continue;
    const double at_straggler =
        energy_at_straggler_time_j(waiting, clock.time_s, clock.energy_j, straggler_time_s);
    if (at_straggler < out.energy_at_straggler_j) {
      out.global_clock_mhz = clock.clock_mhz;
      out.time_s = clock.time_s;
      out.energy_j = clock.energy_j;
      out.energy_at_straggler_j = at_straggler;
    }
  }
  return out;
}

}  // namespace zeus::pfo
