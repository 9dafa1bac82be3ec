// plan_frontier: options and fits per operation, the 1F1B DAG, then Phillips-Dessouky steps.
#include <cmath>
#include <string>
#include <tuple>
#include <utility>

#include "perseus/planner/execution_options.h"
#include "perseus/planner/exponential_fit.h"
#include "perseus/planner/pd_step.h"
#include "perseus/planner/pipeline_dag.h"
#include "zeus/perseus/pfo_planner.h"

namespace zeus::pfo {
namespace {

// Each operation's options, stage-major, forward then backward (the order of Frontier::models).
Result<std::vector<std::vector<ExecutionOption>>> options_of_operations(
    const StageProfile& profile, const PlannerOptions& options) {
  std::vector<std::vector<ExecutionOption>> out;
  for (int stage = 0; stage < options.num_stages; ++stage) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      auto candidates =
          candidate_options(profile.rows_of(stage, kind), options.unit_time_s, options.p2p_power_w,
                            options.noise_factor, options.pareto);
      if (!candidates) return fail(candidates.error());
      out.push_back(std::move(*candidates));
    }
  }
  return out;
}

std::vector<std::vector<PipelineInstruction>> schedule_of(const PlannerOptions& options) {
  std::vector<std::vector<PipelineInstruction>> schedule;
  for (int stage = 0; stage < options.num_stages; ++stage)
    schedule.push_back(one_f_one_b_order(options.num_stages, options.num_microbatches, stage));
  return schedule;
}

// Per flat instruction (stage-major, execution order): the index of its operation.
std::vector<std::size_t> operation_index(
    const std::vector<std::vector<PipelineInstruction>>& schedule) {
  std::vector<std::size_t> index;
  for (const auto& stage : schedule) {
    for (const PipelineInstruction& inst : stage) {
      index.push_back(static_cast<std::size_t>(2 * inst.stage +
                                               (inst.kind == InstructionKind::kForward ? 0 : 1)));
    }
  }
  return index;
}

// T_min and T_max (units): every instruction at its operation's fastest / slowest option, whose
// quantised times `fastest(op)` / `slowest(op)` give; `slowest_durations` receives T_max's.
template <typename Fastest, typename Slowest>
std::pair<int64_t, int64_t> extreme_times(const PipelineDag& dag,
                                          const std::vector<std::size_t>& operation_of,
                                          Fastest fastest, Slowest slowest,
                                          std::vector<int64_t>& slowest_durations) {
  std::vector<int> critical;
  std::vector<int64_t> durations(operation_of.size());
  for (std::size_t i = 0; i < durations.size(); ++i) durations[i] = fastest(operation_of[i]);
  const int64_t min_quant_time = dag.critical_arcs(durations, critical);
  for (std::size_t i = 0; i < durations.size(); ++i) durations[i] = slowest(operation_of[i]);
  const int64_t max_quant_time = dag.critical_arcs(durations, critical);
  slowest_durations = std::move(durations);
  return {min_quant_time, max_quant_time};
}

Result<OperationModel> build_model(int stage, InstructionKind kind,
                                   std::vector<ExecutionOption> candidates,
                                   const PlannerOptions& options) {
  OperationModel model;
  model.stage = stage;
  model.instruction = kind;
  model.options = std::move(candidates);
  std::vector<FitPoint> points;
  for (const ExecutionOption& option : model.options) {
    points.push_back({static_cast<double>(option.quant_time), option.effective_energy_j});
  }
  auto injected = options.injected_costs.find({stage, kind});
  if (injected != options.injected_costs.end()) {
    model.cost = injected->second;
    model.cost_injected = true;
    model.fit_mse = fit_mse(model.cost, points);
    return model;
  }
  auto fit = fit_exponential(points, options.unit_time_s);
  if (!fit) {
    return fail(ErrorCode::kInvalidArgument, "stage " + std::to_string(stage) + " " +
                                                 std::string(instruction_name(kind)) + ": " +
                                                 fit.error().message);
  }
  model.cost = fit->cost;
  model.fit_mse = fit->mse;
  return model;
}

}  // namespace

Result<void> validate_planner_options(const StageProfile& profile, const PlannerOptions& options) {
  if (options.num_stages < 2 || options.num_stages > 4096) {
    return fail(
        ErrorCode::kInvalidArgument,
        "--stages must be between 2 and 4096 (pipeline parallelism has at least two stages), got " +
            std::to_string(options.num_stages));
  }
  if (options.num_microbatches < 1 || options.num_microbatches > 100000) {
    return fail(ErrorCode::kInvalidArgument, "--microbatches must be between 1 and 100000, got " +
                                                 std::to_string(options.num_microbatches));
  }
  const int64_t instructions = 2 * int64_t{options.num_stages} * options.num_microbatches;
  if (instructions > kMaxPlanInstructions) {
    return fail(ErrorCode::kInvalidArgument,
                "--stages " + std::to_string(options.num_stages) + " x --microbatches " +
                    std::to_string(options.num_microbatches) + " make " +
                    std::to_string(instructions) + " instructions per iteration, more than the " +
                    std::to_string(kMaxPlanInstructions) +
                    " the planner takes; use fewer --microbatches");
  }
  if (!(options.p2p_power_w >= 0.0) || !std::isfinite(options.p2p_power_w)) {
    return fail(
        ErrorCode::kInvalidArgument,
        "--p2p-power must be a finite number of watts >= 0 (the GPU's power while blocked on a "
        "pipeline receive, e.g. 83.64 for A100, 70.38 for A40)");
  }
  if (!(options.unit_time_s >= 1e-7) || !std::isfinite(options.unit_time_s)) {
    return fail(
        ErrorCode::kInvalidArgument,
        "--unit must be a number of seconds >= 1e-7 (e.g. 0.001; finer units only add plans)");
  }
  if (!(options.noise_factor > 0.0 && options.noise_factor <= 1.0)) {
    return fail(ErrorCode::kInvalidArgument,
                "--noise must be in (0, 1] (0.95 keeps options within 5 % noise)");
  }
  ZEUS_TRY(check_profile_covers(profile, options.num_stages));
  for (const ProfileRow& row : profile.rows) {
    if (row.time_s < options.unit_time_s) {
      return fail(ErrorCode::kInvalidArgument,
                  "--unit " + std::to_string(options.unit_time_s) + " s is longer than stage " +
                      std::to_string(row.stage) + " " +
                      std::string(instruction_name(row.instruction)) + " at " +
                      std::to_string(row.frequency_mhz) + " MHz (" + std::to_string(row.time_s) +
                      " s); use a unit well below the instructions' times, e.g. 0.001");
    }
  }
  return ok();
}

Result<void> check_plan_size(const PlanSize& size) {
  if (size.plans > kMaxPlans) {
    return fail(ErrorCode::kInvalidArgument,
                "the frontier would have about " + std::to_string(size.plans) +
                    " plans, more than the " + std::to_string(kMaxPlans) +
                    " the planner makes; use a larger --unit");
  }
  if (size.work() > kMaxPlanWork) {
    const int64_t minutes =
        std::llround(static_cast<double>(size.work()) * kSecondsPerPlanWork / 60.0);
    return fail(ErrorCode::kInvalidArgument,
                "planning " + std::to_string(size.instructions) + " instructions x about " +
                    std::to_string(size.plans) + " plans (" + std::to_string(size.work()) +
                    " instruction-plans) is more than the " + std::to_string(kMaxPlanWork) +
                    " the planner takes: roughly " + std::to_string(minutes) +
                    " minutes of CPU; use fewer --microbatches or a larger --unit");
  }
  return ok();
}

Result<PlanSize> plan_size(const StageProfile& profile, const PlannerOptions& options) {
  ZEUS_TRY(validate_planner_options(profile, options));
  auto operations = options_of_operations(profile, options);
  if (!operations) return fail(operations.error());
  const auto schedule = schedule_of(options);
  const auto operation_of = operation_index(schedule);
  std::vector<int64_t> slowest;
  const auto [min_quant_time, max_quant_time] = extreme_times(
      PipelineDag(schedule), operation_of,
      [&](std::size_t op) { return (*operations)[op].back().quant_time; },
      [&](std::size_t op) { return (*operations)[op].front().quant_time; }, slowest);
  return PlanSize{static_cast<int64_t>(operation_of.size()), max_quant_time - min_quant_time};
}

// Builds a Frontier step by step (a friend of Frontier).
class FrontierBuilder {
 public:
  static Result<Frontier> build(const StageProfile& profile, const PlannerOptions& options,
                                const PlanProgress& progress);
};

Result<Frontier> FrontierBuilder::build(const StageProfile& profile, const PlannerOptions& options,
                                        const PlanProgress& progress) {
  ZEUS_TRY(validate_planner_options(profile, options));
  Frontier frontier;
  frontier.options_ = options;
  auto candidates = options_of_operations(profile, options);
  if (!candidates) return fail(candidates.error());
  for (std::size_t op = 0; op < candidates->size(); ++op) {
    const int stage = static_cast<int>(op / 2);
    const InstructionKind kind =
        op % 2 == 0 ? InstructionKind::kForward : InstructionKind::kBackward;
    auto model = build_model(stage, kind, std::move((*candidates)[op]), options);
    if (!model) return fail(model.error());
    frontier.models_.push_back(std::move(*model));
  }
  frontier.schedule_ = schedule_of(options);
  std::vector<StepOperation> operations;
  for (const OperationModel& model : frontier.models_) operations.push_back(step_operation(model));
  // Per flat instruction: its operation.
  std::vector<const StepOperation*> operation_of;
  const std::vector<std::size_t> index = operation_index(frontier.schedule_);
  for (std::size_t op : index) operation_of.push_back(&operations[op]);
  const std::size_t n = operation_of.size();
  // The plan of `durations` that takes `quant_time` units.
  auto point_of = [&](const std::vector<int64_t>& durations, int64_t quant_time) {
    FrontierPoint point;
    point.quant_time = quant_time;
    point.time_s = static_cast<double>(quant_time) * options.unit_time_s;
    for (std::size_t i = 0; i < n; ++i)
      point.effective_energy_j += operation_of[i]->cost(durations[i]);
    point.energy_j =
        point.effective_energy_j + options.num_stages * point.time_s * options.p2p_power_w;
    return point;
  };

  const PipelineDag dag(frontier.schedule_);
  std::vector<int64_t> durations;
  std::tie(frontier.min_quant_time_, frontier.max_quant_time_) = extreme_times(
      dag, index, [&](std::size_t op) { return operations[op].min_quant_time; },
      [&](std::size_t op) { return operations[op].max_quant_time; }, durations);
  frontier.initial_durations_ = durations;
  frontier.all_slowest_ = point_of(durations, frontier.max_quant_time_);
  frontier.change_offsets_.push_back(0);
  const PlanSize size{static_cast<int64_t>(n), frontier.max_quant_time_ - frontier.min_quant_time_};
  ZEUS_TRY(check_plan_size(size));
  const int64_t total_steps = size.plans;
  std::vector<int> critical;
  dag.critical_arcs(durations, critical);
  PhillipsDessoukyStep step;
  while (true) {
    StepResult result = step.run(dag, critical, operation_of, durations);
    if (result.stop) {
      frontier.stop_reason_ = *result.stop;
      break;
    }
    for (int inst : result.sped_up) frontier.changes_.push_back({static_cast<uint32_t>(inst), -1});
    for (int inst : result.slowed_down)
      frontier.changes_.push_back({static_cast<uint32_t>(inst), +1});
    frontier.change_offsets_.push_back(frontier.changes_.size());
    FrontierPoint point = point_of(durations, dag.critical_arcs(durations, critical));
    point.cost_change_j = result.cost_change;
    frontier.points_.push_back(point);
    if (progress) progress(static_cast<int64_t>(frontier.points_.size()), total_steps);
  }
  return frontier;
}

Result<Frontier> plan_frontier(const StageProfile& profile, const PlannerOptions& options,
                               const PlanProgress& progress) {
  return FrontierBuilder::build(profile, options, progress);
}

}  // namespace zeus::pfo
