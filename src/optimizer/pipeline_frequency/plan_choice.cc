#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "zeus/pfo_plan_choice.h"

namespace zeus::pfo {
namespace {

Result<void> require_points(const std::vector<FrontierPoint>& points) {
  if (points.empty()) {
    return fail(
        ErrorCode::kInvalidArgument,
        "the frontier has no plans (the profile leaves nothing to trade: every instruction has "
        "one useful clock)");
  }
  return ok();
}

// The least-energy plan among those with time <= limit (the first on ties); npos when none.
std::size_t least_energy_within(const std::vector<FrontierPoint>& points, double limit_s) {
  std::size_t best = points.size();
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].time_s > limit_s) continue;
    if (best == points.size() || points[i].energy_j < points[best].energy_j) best = i;
  }
  return best;
}

}  // namespace

Result<std::size_t> fastest_plan(const std::vector<FrontierPoint>& points) {
  ZEUS_TRY(require_points(points));
  return points.size() - 1;
}

Result<std::size_t> min_energy_plan(const std::vector<FrontierPoint>& points) {
  ZEUS_TRY(require_points(points));
  return least_energy_within(points, std::numeric_limits<double>::infinity());
}

Result<std::size_t> plan_within_slowdown(const std::vector<FrontierPoint>& points,
                                         double slowdown) {
  ZEUS_TRY(require_points(points));
  if (!(slowdown >= 0.0) || !std::isfinite(slowdown)) {
    return fail(ErrorCode::kInvalidArgument,
                "--slowdown must be a fraction >= 0 (0.05 allows a 5 % longer iteration than the "
                "fastest plan)");
  }
  // A relative guard so that x = 0 always admits T_min itself.
  const double limit = points.back().time_s * (1.0 + slowdown) * (1.0 + 1e-12);
  return least_energy_within(points, limit);
}

Result<std::size_t> plan_for_straggler(const std::vector<FrontierPoint>& points,
                                       double straggler_time_s) {
  ZEUS_TRY(require_points(points));
  if (!(straggler_time_s > 0.0) || !std::isfinite(straggler_time_s)) {
    return fail(ErrorCode::kInvalidArgument,
                "--straggler-time must be a positive number of seconds");
  }
  const std::size_t best = least_energy_within(points, straggler_time_s * (1.0 + 1e-12));
  return best == points.size() ? points.size() - 1 : best;
}

double all_max_clock_energy_j(const StageProfile& profile,
                              const std::vector<std::vector<PipelineInstruction>>& schedule,
                              double p2p_power_w, double iteration_time_s) {
  // The highest profiled clock of each (stage, instruction).
  std::map<std::pair<int, int>, const ProfileRow*> top;
  for (const ProfileRow& row : profile.rows) {
    const std::pair<int, int> key{row.stage, static_cast<int>(row.instruction)};
    auto it = top.find(key);
    if (it == top.end() || row.frequency_mhz > it->second->frequency_mhz) top[key] = &row;
  }
  double energy = 0.0;
  for (const auto& stage : schedule) {
    double busy = 0.0;
    for (const PipelineInstruction& inst : stage) {
      const ProfileRow* row = top.at({inst.stage, static_cast<int>(inst.kind)});
      energy += row->energy_j;
      busy += row->time_s;
    }
    energy += p2p_power_w * (iteration_time_s - busy);
  }
  return energy;
}

double straggler_total_energy_j(const StragglerScenario& s, double plan_time_s,
                                double plan_energy_j) {
  const double straggler_time = s.straggler_base_time_s * s.slowdown;
  const double blocking = s.p2p_power_w * (straggler_time - plan_time_s) * s.num_stages;
  return s.straggler_energy_j * s.slowdown + (s.num_pipelines - 1) * (plan_energy_j + blocking);
}

}  // namespace zeus::pfo
