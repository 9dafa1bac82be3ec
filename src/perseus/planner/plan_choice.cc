#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "zeus/perseus/pfo_plan_choice.h"
#include "zeus/perseus/pfo_straggler_policy.h"

namespace zeus::pfo {
namespace {

// The least-energy candidate with time <= limit, the all-slowest schedule first and then the plans
// slowest first (ties go to the slower one); empty when none finishes by the limit.
std::optional<PlanChoice> least_energy_within(const PlanCandidates& candidates, double limit_s) {
  std::optional<PlanChoice> best;
  auto consider = [&](std::optional<std::size_t> plan, const FrontierPoint& point) {
    if (point.time_s > limit_s) return;
    if (!best || point.energy_j < best->point.energy_j) best = PlanChoice{plan, point};
  };
  consider(std::nullopt, candidates.all_slowest);
  for (std::size_t i = 0; i < candidates.plans.size(); ++i) consider(i, candidates.plans[i]);
  return best;
}

}  // namespace

PlanCandidates plan_candidates(const Frontier& frontier) {
  return {frontier.all_slowest(), frontier.points()};
}

PlanChoice fastest_plan(const PlanCandidates& candidates) {
  if (candidates.plans.empty()) return {std::nullopt, candidates.all_slowest};
  return {candidates.plans.size() - 1, candidates.plans.back()};
}

PlanChoice min_energy_plan(const PlanCandidates& candidates) {
  return *least_energy_within(candidates, std::numeric_limits<double>::infinity());
}

Result<PlanChoice> plan_within_slowdown(const PlanCandidates& candidates, double slowdown) {
  if (!(slowdown >= 0.0) || !std::isfinite(slowdown)) {
    return fail(ErrorCode::kInvalidArgument,
                "--slowdown must be a fraction >= 0 (0.05 allows a 5 % longer iteration than the "
                "fastest plan)");
  }
  // A relative guard so that x = 0 always admits T_min itself.
  const double limit = fastest_plan(candidates).point.time_s * (1.0 + slowdown) * (1.0 + 1e-12);
  return *least_energy_within(candidates, limit);
}

Result<PlanChoice> plan_for_straggler(const PlanCandidates& candidates, double straggler_time_s) {
  if (!(straggler_time_s > 0.0) || !std::isfinite(straggler_time_s)) {
    return fail(ErrorCode::kInvalidArgument,
                "--straggler-time must be a positive number of seconds");
  }
  auto best = least_energy_within(candidates, straggler_time_s * (1.0 + 1e-12));
  return best ? *best : fastest_plan(candidates);
}

double all_max_clock_energy_j(const StageProfile& profile,
                              const std::vector<std::vector<PipelineInstruction>>& schedule,
                              double p2p_power_w, double iteration_time_s) {
  // The highest profiled clock of each (stage, instruction).
  std::map<std::pair<int, int>, int> top;
  for (const ProfileRow& row : profile.rows) {
    int& mhz = top[{row.stage, static_cast<int>(row.instruction)}];
    mhz = std::max(mhz, row.frequency_mhz);
  }
  std::vector<std::vector<int>> clocks;
  for (const auto& stage : schedule) {
    clocks.emplace_back();
    for (const PipelineInstruction& inst : stage) {
      clocks.back().push_back(top.at({inst.stage, static_cast<int>(inst.kind)}));
    }
  }
  return measured_plan_energy_j(profile, schedule, clocks, p2p_power_w, iteration_time_s);
}

double measured_plan_energy_j(const StageProfile& profile,
                              const std::vector<std::vector<PipelineInstruction>>& schedule,
                              const std::vector<std::vector<int>>& clocks_mhz, double p2p_power_w,
                              double iteration_time_s) {
  std::map<std::tuple<int, int, int>, const ProfileRow*> rows;
  for (const ProfileRow& row : profile.rows) {
    rows.emplace(std::make_tuple(row.stage, static_cast<int>(row.instruction), row.frequency_mhz), &row);
  }
  double energy = 0.0;
  for (size_t s = 0; s < schedule.size(); ++s) {
    double busy = 0.0;
    for (size_t k = 0; k < schedule[s].size(); ++k) {
      const PipelineInstruction& inst = schedule[s][k];
      if (s >= clocks_mhz.size() || k >= clocks_mhz[s].size()) return std::nan("");
      const auto row = rows.find({inst.stage, static_cast<int>(inst.kind), clocks_mhz[s][k]});
      if (row == rows.end()) return std::nan("");
      energy += row->second->energy_j;
      busy += row->second->time_s;
    }
    energy += p2p_power_w * (iteration_time_s - busy);
  }
  return energy;
}

double straggler_total_energy_j(const StragglerScenario& s, double plan_time_s,
                                double plan_energy_j) {
  const double straggler_time = s.straggler_base_time_s * s.slowdown;
  return s.straggler_energy_j * s.slowdown +
         (s.num_pipelines - 1) * energy_at_straggler_time_j({s.num_stages, s.p2p_power_w},
                                                            plan_time_s, plan_energy_j,
                                                            straggler_time);
}

}  // namespace zeus::pfo
