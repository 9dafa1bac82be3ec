// Frequency schedulers of the Perseus server: what clocks a job's ranks run each round, given the
// results of the previous rounds (upstream's FrequencyScheduler contract).
//
// A job's rounds: next_schedule() gives one FrequencySchedule per rank (any order); every rank
// runs it and reports a ProfilingResult; observe() takes the results (sorted by rank) and the
// next round begins. A scheduler with nothing new to say repeats its last schedule.
//   PointSolution      one fixed schedule (a file of `zeus pfo choose` or lowtime), a list per rank
//   PointSolution3D    the same under data/tensor parallelism: the file has a list per pipeline
//                      stage; every rank of a stage runs that stage's list (3D wrapper below)
//   InstructionProfiler  the online profiler: a round per clock, writes the stage profile
//                      (instruction_profiler.h; its arguments: profiler_scheduler.h)
//   Frontier           a planned frontier; the fastest plan, or the combined straggler policy's
//                      pick when a straggler is known (perseus/server/scheduler_frontier.h)
// Units: MHz, s, J. Thread-safety: one scheduler per job, used under the job's lock.
// Failure: kInvalidArgument when the schedule does not fit the job (wrong number of ranks),
// kNotFound for a missing file; the job manager reports them to every waiting rank.
//
//   auto make = scheduler_factory({"PointSolution", "freqs_pipeline_00042.py"});
//   Result<std::unique_ptr<FrequencyScheduler>> s = (*make)(job, ranks);   // reads the file
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "perseus/server/schedule_literal.h"
#include "zeus/common/result.h"
#include "zeus/perseus/pfo_runtime_types.h"

namespace zeus::pfo {

class FrequencyScheduler {
 public:
  virtual ~FrequencyScheduler() = default;
  // The schedules of the coming round, one per rank of the job.
  virtual Result<std::vector<FrequencySchedule>> next_schedule() = 0;
  // The results of the round just run, one per rank, sorted by rank.
  virtual Result<void> observe(const std::vector<ProfilingResult>& results) = 0;
};

// Makes a job's scheduler once all its ranks registered (ranks sorted by rank).
using SchedulerFactory = std::function<Result<std::unique_ptr<FrequencyScheduler>>(
    const JobInfo& job, const std::vector<RankInfo>& ranks)>;

// Runs one schedule forever: schedules[r] for rank r. kInvalidArgument when the number of lists
// differs from the job's world size.
Result<std::unique_ptr<FrequencyScheduler>> make_point_solution(const JobInfo& job,
                                                                 RankSchedules schedules);

// The server's choice of scheduler (flags, or upstream's ZEUS_PFO_SCHEDULER[_ARGS]).
struct SchedulerConfig {
  std::string name;                 // canonical: "PointSolution", "PointSolution3D", ...
  std::string solution_path;        // the schedule file (the point solutions need one)
  std::string scheduler_args = "";  // JSON object text: InstructionProfiler's arguments
  std::string dump_dir = "";        // InstructionProfiler's default profile folder
  std::string plans_dir = "";       // Frontier: the --out folder of `zeus pfo plan`
};

// "point-solution" / "PointSolution" -> "PointSolution", "point-solution-3d" /
// "PointSolution3D" -> "PointSolution3D", "profiler" / "InstructionProfiler" ->
// "InstructionProfiler", "frontier" / "Frontier" -> "Frontier"; nullopt for anything else.
std::optional<std::string> canonical_scheduler_name(const std::string& name);

// The factory for `config`: reads the schedule file each time a job starts (so a new file serves
// the next job). kInvalidArgument for an unknown name or a missing solution path.
Result<SchedulerFactory> scheduler_factory(const SchedulerConfig& config);

}  // namespace zeus::pfo
