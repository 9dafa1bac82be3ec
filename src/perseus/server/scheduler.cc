// PointSolution and the scheduler factory (perseus/server/scheduler.h).
#include "perseus/server/scheduler.h"

#include "perseus/server/profiler_scheduler.h"
#include "perseus/server/scheduler_3d.h"
#include "perseus/server/scheduler_frontier.h"

namespace zeus::pfo {
namespace {

class PointSolution final : public FrequencyScheduler {
 public:
  explicit PointSolution(std::vector<FrequencySchedule> schedules)
      : schedules_(std::move(schedules)) {}
  Result<std::vector<FrequencySchedule>> next_schedule() override { return schedules_; }
  Result<void> observe(const std::vector<ProfilingResult>&) override { return ok(); }

 private:
  std::vector<FrequencySchedule> schedules_;
};

}  // namespace

Result<std::unique_ptr<FrequencyScheduler>> make_point_solution(const JobInfo& job,
                                                                 RankSchedules schedules) {
  if (static_cast<int>(schedules.size()) != job.world_size) {
    return fail(ErrorCode::kInvalidArgument,
                "the schedule holds " + std::to_string(schedules.size()) +
                    " ranks' clocks but the job has " + std::to_string(job.world_size) +
                    " ranks (pp " + std::to_string(job.pp_degree) + " x dp " +
                    std::to_string(job.dp_degree) + " x tp " + std::to_string(job.tp_degree) +
                    ")" +
                    (job.world_size > job.pp_degree
                         ? "; under data or tensor parallelism use PointSolution3D with one list "
                           "per pipeline stage"
                         : ""));
  }
  std::vector<FrequencySchedule> out;
  for (size_t r = 0; r < schedules.size(); ++r) {
    out.push_back({static_cast<int>(r), std::move(schedules[r])});
  }
  return std::unique_ptr<FrequencyScheduler>(std::make_unique<PointSolution>(std::move(out)));
}

std::optional<std::string> canonical_scheduler_name(const std::string& name) {
  if (name == "point-solution" || name == "PointSolution") return "PointSolution";
  if (name == "point-solution-3d" || name == "PointSolution3D") return "PointSolution3D";
  if (name == "profiler" || name == "InstructionProfiler") return "InstructionProfiler";
  if (name == "frontier" || name == "Frontier") return "Frontier";
  return std::nullopt;
}

Result<SchedulerFactory> scheduler_factory(const SchedulerConfig& config) {
  const std::optional<std::string> name = canonical_scheduler_name(config.name);
  if (!name) {
    return fail(ErrorCode::kInvalidArgument,
                "unknown scheduler '" + config.name +
                    "'; the schedulers are point-solution (PointSolution), point-solution-3d "
                    "(PointSolution3D), profiler (InstructionProfiler) and frontier (Frontier)");
  }
  if (*name == "InstructionProfiler") {
    return instruction_profiler_factory(config.scheduler_args, config.dump_dir);
  }
  if (*name == "Frontier") {
    Result<FrontierSchedulerOptions> options = parse_frontier_args(config.scheduler_args);
    if (!options) return fail(options.error());
    return frontier_scheduler_factory(config.plans_dir, *options);
  }
  if (!config.scheduler_args.empty()) {
    return fail(ErrorCode::kInvalidArgument, "scheduler arguments (" + config.scheduler_args +
                                                 ") are InstructionProfiler's and Frontier's; " +
                                                 *name +
                                                 " takes only its schedule file (--schedule FILE)");
  }
  if (config.solution_path.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                *name + " needs a schedule file (--schedule FILE, or solution_path in "
                        "ZEUS_PFO_SCHEDULER_ARGS)");
  }
  const std::string path = config.solution_path;
  SchedulerFactory point = [path](const JobInfo& job, const std::vector<RankInfo>&)
      -> Result<std::unique_ptr<FrequencyScheduler>> {
    Result<RankSchedules> schedules = read_schedule_file(path);
    if (!schedules) return fail(schedules.error());
    return make_point_solution(job, std::move(*schedules));
  };
  if (*name == "PointSolution") return point;
  return SchedulerFactory([point](const JobInfo& job, const std::vector<RankInfo>& ranks) {
    return make_3d_parallel(job, ranks, point);
  });
}

}  // namespace zeus::pfo
