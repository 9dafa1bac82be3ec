// The combined straggler policy of the Perseus frontier scheduler (docs/perseus.md, "Stragglers:
// the combined policy"). When another pipeline straggles to an iteration time T', every other
// pipeline waits for it, drawing the blocking power P_b on each stage until T'. Two ways to
// spend that time:
//   (a) the frontier: the least-energy candidate finishing by T' (plan_for_straggler: the slowest
//       plan within T' while T' <= T*, the T* plan beyond);
//   (b) a global clock: every instruction at one SM clock, the clock whose run finishes by T'
//       at the least energy.
// The frontier ends at T_max (every instruction at its slowest *efficient* clock), so for long
// stragglers a lower global clock can cost less than waiting at T*. The policy compares both at
// T' — each plan's energy plus P_b x N_stages x (T' - its time) of waiting — and takes the
// cheaper, so it never saves less than either. Ties go to the frontier.
// Units: seconds, joules, watts, MHz. Pure functions; no I/O.
// Failure: kInvalidArgument for a bad straggler time or stage count, naming the fix.
//
//   auto choice = zeus::pfo::combined_straggler_plan(zeus::pfo::plan_candidates(frontier),
//                                                    global_clocks, {8, 83.64}, 3.6);
//   if (choice->global_clock_mhz) every_instruction_at(*choice->global_clock_mhz);
#pragma once

#include <optional>
#include <span>

#include "zeus/common/result.h"
#include "zeus/perseus/pfo_plan_choice.h"

namespace zeus::pfo {

// Every instruction of one iteration at one SM clock: its time and energy (blocking power
// included), as the pipeline executor replays it (zeus/perseus/sim_perseus.h, global_clock_plans).
struct GlobalClockPlan {
  int clock_mhz = 0;
  double time_s = 0.0;
  double energy_j = 0.0;
};

// What waiting costs: the pipeline's stages and their blocking power.
struct WaitingCost {
  int num_stages = 0;
  double p2p_power_w = 0.0;
};

// A plan's energy counted up to the straggler's time T': its own energy plus the blocking power
// of every stage while it waits from its end to T' (no waiting when it ends after T').
double energy_at_straggler_time_j(const WaitingCost& waiting, double plan_time_s,
                                  double plan_energy_j, double straggler_time_s);

// The policy's pick.
struct CombinedChoice {
  PlanChoice frontier;                  // branch (a), always computed
  std::optional<int> global_clock_mhz;  // set when branch (b) wins: run every instruction here
  double time_s = 0.0;                  // the picked plan's own iteration time and energy
  double energy_j = 0.0;
  double energy_at_straggler_j = 0.0;  // the picked plan's energy counted up to T'
};

// The cheaper at T' of (a) and (b). `global_clocks` may be empty (then always (a)); clocks
// slower than T' are not candidates.
Result<CombinedChoice> combined_straggler_plan(const PlanCandidates& candidates,
                                               std::span<const GlobalClockPlan> global_clocks,
                                               const WaitingCost& waiting, double straggler_time_s);

}  // namespace zeus::pfo
