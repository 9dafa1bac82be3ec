// Choosing a plan from the Perseus frontier (docs/perseus.md), and the energy accounting that
// compares plans with the GPUs' default behaviour.
//   - No straggler ("0 % slowdown"): the fastest plan, T_min.
//   - A slowdown budget x: the least-energy plan with T <= (1 + x) * T_min.
//   - A straggler finishing at T' (every other pipeline waits for it): the least-energy plan
//     with T <= T' — the slowest plan not past T' while T' <= T*, and the T* plan beyond (going
//     slower than T* only adds blocking energy).
// Units: seconds, joules, watts. Pure functions over the frontier's points (slowest first).
// Failure: kInvalidArgument for an empty frontier or a bad budget, naming the fix.
//
//   auto index = zeus::pfo::plan_for_straggler(frontier.points(), /*straggler_time_s=*/3.3);
//   auto clocks = frontier.clocks_mhz(*index);
#pragma once

#include <cstddef>
#include <vector>

#include "zeus/pfo_planner.h"
#include "zeus/pfo_profile.h"
#include "zeus/result.h"

namespace zeus::pfo {

// The fastest plan (the last point).
Result<std::size_t> fastest_plan(const std::vector<FrontierPoint>& points);
// The plan of least energy overall: T*.
Result<std::size_t> min_energy_plan(const std::vector<FrontierPoint>& points);
// The least-energy plan with T <= (1 + slowdown) * T_min; slowdown >= 0.
Result<std::size_t> plan_within_slowdown(const std::vector<FrontierPoint>& points, double slowdown);
// The least-energy plan with T <= straggler_time_s; when T' is shorter than every plan, the
// fastest plan (the pipeline cannot go faster than T_min).
Result<std::size_t> plan_for_straggler(const std::vector<FrontierPoint>& points,
                                       double straggler_time_s);

// Energy of one pipeline iteration with every instruction at its highest profiled clock and
// the blocking power filling each stage's idle time up to `iteration_time_s` (the authors'
// baseline: the GPUs' default behaviour, measured times and energies, no fit).
double all_max_clock_energy_j(const StageProfile& profile,
                              const std::vector<std::vector<PipelineInstruction>>& schedule,
                              double p2p_power_w, double iteration_time_s);

// Energy of P data-parallel pipelines when one straggler runs `slowdown` times slower (the
// authors' emulation): the straggler's energy scales with the slowdown, the other P - 1 run
// `plan_energy_j` in `plan_time_s` and block until T' = slowdown * straggler_base_time_s.
//   E = straggler_energy_j * slowdown + (P - 1) * (plan_energy_j + P_b * N_stages * (T' -
//   plan_time_s))
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
