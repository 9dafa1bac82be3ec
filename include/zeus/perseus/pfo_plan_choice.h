// Choosing a plan from the Perseus frontier (docs/perseus.md), and the energy accounting that
// compares plans with the GPUs' default behaviour. The candidates are the frontier's plans and,
// apart from them, the all-slowest schedule (every instruction at its slowest clock, T_max),
// which the frontier does not list but which costs least when slower clocks save more than the
// blocking power adds.
//   - No straggler ("0 % slowdown"): the fastest plan, T_min.
//   - A slowdown budget x: the least-energy candidate with T <= (1 + x) * T_min.
//   - A straggler finishing at T' (every other pipeline waits for it): the least-energy
//     candidate with T <= T' — the slowest one not past T' while T' <= T*, and T* beyond (going
//     slower than T* only adds blocking energy).
//   - T*: the least-energy candidate of all.
// Ties go to the slower candidate. Units: seconds, joules, watts. Pure functions.
// Failure: kInvalidArgument for a bad budget or straggler time, naming the fix.
//
//   auto choice = zeus::pfo::plan_for_straggler(zeus::pfo::plan_candidates(frontier), 3.3);
//   auto clocks = choice->plan ? frontier.clocks_mhz(*choice->plan)
//                              : frontier.all_slowest_clocks_mhz();
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/perseus/pfo_planner.h"
#include "zeus/perseus/pfo_profile.h"

namespace zeus::pfo {

// What a plan choice picks among.
struct PlanCandidates {
  FrontierPoint all_slowest;             // every instruction at its slowest clock: T_max
  std::span<const FrontierPoint> plans;  // the frontier, slowest (T_max - unit) first
};
// The candidates of `frontier` (which must outlive them).
PlanCandidates plan_candidates(const Frontier& frontier);

// A chosen candidate.
struct PlanChoice {
  std::optional<std::size_t> plan;  // the frontier plan's index; empty for the all-slowest schedule
  FrontierPoint point;              // its time and energy
};

// The fastest plan: the frontier's last (the all-slowest schedule when the frontier is empty).
PlanChoice fastest_plan(const PlanCandidates& candidates);
// The candidate of least energy overall: T*.
PlanChoice min_energy_plan(const PlanCandidates& candidates);
// The least-energy candidate with T <= (1 + slowdown) * T_min; slowdown >= 0.
Result<PlanChoice> plan_within_slowdown(const PlanCandidates& candidates, double slowdown);
// The least-energy candidate with T <= straggler_time_s; when T' is shorter than every plan, the
// fastest plan (the pipeline cannot go faster than T_min).
Result<PlanChoice> plan_for_straggler(const PlanCandidates& candidates, double straggler_time_s);

// Energy of one pipeline iteration with every instruction at its highest profiled clock and
// the blocking power filling each stage's idle time up to `iteration_time_s` (the authors'
// baseline: the GPUs' default behaviour, measured times and energies, no fit).
double all_max_clock_energy_j(const StageProfile& profile,
                              const std::vector<std::vector<PipelineInstruction>>& schedule,
                              double p2p_power_w, double iteration_time_s);
// The same pricing (measured rows, blocking power in the idle time) for a plan's clocks
// (`clocks_mhz[stage][k]` for the schedule's instruction k of that stage, as
// Frontier::clocks_mhz gives them), so that a plan and the baseline compare like with like: the
// all-max plan costs exactly the baseline. NaN when a clock has no profiled row.
double measured_plan_energy_j(const StageProfile& profile,
                              const std::vector<std::vector<PipelineInstruction>>& schedule,
                              const std::vector<std::vector<int>>& clocks_mhz, double p2p_power_w,
                              double iteration_time_s);

// Energy of P data-parallel pipelines when one straggler runs `slowdown` times slower (the
// authors' emulation): the straggler's energy scales with the slowdown, the other P - 1 run
// `plan_energy_j` in `plan_time_s` and block until T' = slowdown * straggler_base_time_s.
//   E = straggler_energy_j * slowdown + (P - 1) * (plan_energy_j + P_b * N_stages * (T' -
//   plan_time_s)), the waiting counted as energy_at_straggler_time_j
// (zeus/perseus/pfo_straggler_policy.h)
struct StragglerScenario {
  int num_pipelines = 1;
  int num_stages = 0;
  double p2p_power_w = 0.0;
  double slowdown = 1.0;               // T' / T
  double straggler_base_time_s = 0.0;  // T: the straggler's own iteration time before slowing down
  double straggler_energy_j = 0.0;     // its energy per iteration before slowing down
};
double straggler_total_energy_j(const StragglerScenario& scenario, double plan_time_s,
                                double plan_energy_j);

}  // namespace zeus::pfo
