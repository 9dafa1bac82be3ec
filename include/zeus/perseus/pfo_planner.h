// The Perseus planner: the iteration time-energy frontier of a pipeline-parallel training job.
//
// Perseus (SOSP '24) locks one GPU SM clock per forward/backward instruction of a 1F1B pipeline
// iteration. Instructions off the critical path run slower at no cost in time; the planner finds,
// for every achievable iteration time T (in units of `unit_time_s`), the plan of least energy:
//   1. per (stage, instruction), the profiled clocks become options (Pareto filter, quantised
//      time, effective energy e' = e - P_b * t) and a convex fit e'(q) = a*exp(b*q) + c;
//   2. the 1F1B DAG of all instructions (activity-on-arc form), every instruction at its slowest
//      option (T_max);
//   3. repeatedly, the cheapest way to shorten the critical path by one unit: a minimum cut with
//      lower bounds over the critical sub-DAG (Phillips-Dessouky; two max-flows by Dinic), some
//      instructions sped up and some slowed back down; until nothing can be shortened (T_min).
// Plan energy E = sum of e'(d_i) + N_stages * T * P_b (blocking power while stages wait).
// Each plan gives every instruction the slowest profiled clock whose quantised time fits its
// planned duration. The frontier runs from T_max - unit (slowest first) to T_min, as the authors'
// planner's does; the schedule with every instruction at its slowest clock (T_max itself) is kept
// apart, as all_slowest(). Energy is U-shaped in T with the minimum at T* (going slower than T*
// only adds blocking energy), and T* may be T_max itself: choose plans with
// zeus/perseus/pfo_plan_choice.h,
// which weighs both.
// Units: seconds, joules, watts, MHz.
// Thread-safety: pure functions and values; deterministic (no clock, no I/O, no globals).
// Failure: kInvalidArgument for bad options or a profile that cannot be planned, naming the fix.
//
//   auto frontier = zeus::pfo::plan_frontier(profile, {.num_stages = 8, .num_microbatches = 12,
//                                                      .p2p_power_w = 83.64});
//   for (const auto& point : frontier->points()) use(point.time_s, point.energy_j);
//   auto clocks = frontier->clocks_mhz(frontier->points().size() - 1);  // the fastest plan
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/perseus/pfo_profile.h"

namespace zeus::pfo {

// The fitted effective-energy model of one operation: e'(q) = a * exp(b * q) + c, q in units.
struct ExponentialCost {
  double a = 0.0;
  double b = 0.0;
  double c = 0.0;
  double operator()(int64_t quant_time) const;
};

// One candidate clock of an operation (docs/perseus.md).
struct ExecutionOption {
  int frequency_mhz = 0;
  double time_s = 0.0;              // measured
  double energy_j = 0.0;            // measured
  int64_t quant_time = 0;           // time // unit
  double effective_energy_j = 0.0;  // energy - P_b * quant_time * unit
};

// The planner's model of one (stage, instruction).
struct OperationModel {
  int stage = 0;
  InstructionKind instruction = InstructionKind::kForward;
  std::vector<ExecutionOption> options;  // Pareto candidates, slowest (largest quant_time) first
  ExponentialCost cost;
  double fit_mse = 0.0;        // mean squared error of the fit over the options (0 when injected)
  bool cost_injected = false;  // coefficients came from PlannerOptions::injected_costs

  int64_t min_quant_time() const { return options.back().quant_time; }
  int64_t max_quant_time() const { return options.front().quant_time; }
  // The slowest option whose quantised time is <= `duration` (the fastest when none is).
  const ExecutionOption& option_for(int64_t duration) const;
};

// One instruction of a pipeline iteration.
struct PipelineInstruction {
  int stage = 0;
  InstructionKind kind = InstructionKind::kForward;
  int microbatch = 0;
};

// The synchronous 1F1B order of one stage (DeepSpeed's TrainSchedule): S - s warm-up forwards,
// then alternating, 2 * M instructions. For S = 4, M = 8, stage 0 runs
// F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7.
std::vector<PipelineInstruction> one_f_one_b_order(int num_stages, int num_microbatches, int stage);

// Which energy the Pareto filter of each operation's clocks compares.
enum class ParetoEnergy {
  // The measured energy, as the authors' artifact (which produced all published data): a clock
  // slower and costlier than another is dropped even when its effective energy is lower, so the
  // frontier stops at the slowest "efficient" clock.
  kMeasured,
  // The effective energy e - P_b * t, as Zeus 0.16's example: keeps slower clocks that save
  // blocking energy, so the frontier reaches further (useful against long stragglers).
  kEffective,
};

struct PlannerOptions {
  int num_stages = 0;        // >= 2
  int num_microbatches = 0;  // >= 1
  double p2p_power_w = 0.0;  // GPU power while blocked on a pipeline receive, >= 0
  double unit_time_s = 0.001;
  // Pareto filter slack used when the strict filter leaves 3 or fewer options (0 < x <= 1).
  double noise_factor = 0.95;
  ParetoEnergy pareto = ParetoEnergy::kMeasured;
  // Coefficients to use instead of fitting, keyed by (stage, instruction): to reproduce a
  // reference planner bit for bit, or to plan with a model fitted elsewhere.
  std::map<std::pair<int, InstructionKind>, ExponentialCost> injected_costs;
};

// Checks the options (and the unit against the profile's fastest instruction, and stages x
// microbatches against kMaxPlanInstructions); the message names the offending option as the CLI
// spells it (--stages, --microbatches, --p2p-power, --unit, --noise).
Result<void> validate_planner_options(const StageProfile& profile, const PlannerOptions& options);

// Bounds on the planner's work, beyond which it refuses (kInvalidArgument naming the bound and
// the fix) instead of running for hours or filling memory and disk. Each plan is one step: a
// critical-path pass over every instruction and two max-flows.
inline constexpr int64_t kMaxPlanInstructions = 200'000;  // 2 x stages x microbatches
inline constexpr int64_t kMaxPlans = 5'000'000;           // (T_max - T_min) / unit
inline constexpr int64_t kMaxPlanWork = 1'000'000'000;    // instructions x plans
// Roughly the CPU time of one instruction-plan (measured on one core of a shared 2-core x86
// machine: kMaxPlanWork takes a few minutes), for the estimate in check_plan_size's message.
inline constexpr double kSecondsPerPlanWork = 2e-7;

// The size of a planning job.
struct PlanSize {
  int64_t instructions = 0;  // per iteration: 2 x stages x microbatches
  int64_t plans = 0;         // about (T_max - T_min) / unit: the steps the planner takes
  int64_t work() const { return instructions * plans; }
};
// The size of planning `options` on `profile`, from the quantised clocks alone (no fit, no
// step): fast, to refuse a job before it starts. Fails as validate_planner_options does.
Result<PlanSize> plan_size(const StageProfile& profile, const PlannerOptions& options);
// kInvalidArgument when `size` is beyond kMaxPlans or kMaxPlanWork (kMaxPlanInstructions is
// validate_planner_options's), naming the bound and the fix.
Result<void> check_plan_size(const PlanSize& size);

// One plan of the frontier.
struct FrontierPoint {
  int64_t quant_time = 0;           // iteration time in units
  double time_s = 0.0;              // quant_time * unit
  double effective_energy_j = 0.0;  // sum of e'(d) over instructions (the fitted model)
  double energy_j = 0.0;            // effective_energy_j + N_stages * time_s * P_b
  double cost_change_j = 0.0;       // effective-energy increase of this step
};

// Why the planner stopped shortening the iteration.
enum class StopReason {
  kNoFeasibleFlow,  // the lower bounds admit no flow: no cheaper cut exists
  kCannotSpeedUp,   // the cut crosses an instruction already at its fastest clock (T_min)
  kCannotSlowDown,  // the cut would slow an instruction past its slowest clock
  kNoCostChange,    // the cheapest cut changes nothing
};
std::string_view stop_reason_text(StopReason reason);

// The whole frontier and what is needed to read each plan back.
class Frontier {
 public:
  const PlannerOptions& options() const { return options_; }
  const std::vector<FrontierPoint>& points() const { return points_; }
  // Every instruction at its slowest option: T_max. Not one of points() (the frontier starts one
  // unit faster), yet a candidate for every plan choice.
  const FrontierPoint& all_slowest() const { return all_slowest_; }
  // Per stage, its instructions in execution order.
  const std::vector<std::vector<PipelineInstruction>>& schedule() const { return schedule_; }
  const OperationModel& model(int stage, InstructionKind kind) const;
  const std::vector<OperationModel>& models() const { return models_; }
  // Iteration time with every instruction at its slowest / fastest option, in units.
  int64_t max_quant_time() const { return max_quant_time_; }
  int64_t min_quant_time() const { return min_quant_time_; }
  StopReason stop_reason() const { return stop_reason_; }

  // Planned duration (units) of every instruction of plan `index` (0 = slowest), per stage in
  // execution order. O(changes up to that plan).
  std::vector<std::vector<int64_t>> durations(std::size_t index) const;
  // The SM clock (MHz) of every instruction of plan `index`, per stage in execution order.
  std::vector<std::vector<int>> clocks_mhz(std::size_t index) const;
  // The SM clock (MHz) of every instruction of the all-slowest schedule (T_max).
  std::vector<std::vector<int>> all_slowest_clocks_mhz() const;
  // Calls fn(index, clocks) for every plan in order, slowest first, in one pass.
  void for_each_plan(
      const std::function<void(std::size_t, const std::vector<std::vector<int>>&)>& fn) const;

 private:
  friend class FrontierBuilder;
  struct Change {
    uint32_t instruction;  // flat index: stage-major, execution order
    int32_t delta;         // units
  };
  std::vector<std::vector<int>> clocks_from(const std::vector<int64_t>& flat_durations) const;
  void apply(std::size_t index, std::vector<int64_t>& flat_durations) const;

  PlannerOptions options_;
  std::vector<std::vector<PipelineInstruction>> schedule_;
  std::vector<OperationModel> models_;  // stage-major, forward then backward
  std::vector<FrontierPoint> points_;
  FrontierPoint all_slowest_;
  std::vector<int64_t> initial_durations_;  // flat, every instruction at its slowest option
  std::vector<Change> changes_;
  std::vector<std::size_t> change_offsets_;  // plan i's changes: [offsets[i], offsets[i+1])
  int64_t max_quant_time_ = 0;
  int64_t min_quant_time_ = 0;
  StopReason stop_reason_ = StopReason::kCannotSpeedUp;
};

// Progress of plan_frontier: steps done and the expected total (T_max - T_min).
using PlanProgress = std::function<void(int64_t done, int64_t total)>;

// Computes the frontier. Deterministic; the same inputs give the same bits. Refuses jobs beyond
// the bounds above (check_plan_size) before the first step.
Result<Frontier> plan_frontier(const StageProfile& profile, const PlannerOptions& options,
                               const PlanProgress& progress = {});

}  // namespace zeus::pfo
