// The 3D-parallel wrapper of a frequency scheduler (upstream's make_3d_parallel): the wrapped
// scheduler sees a pure pipeline — one rank per stage, rank = pp_rank, dp = tp = 1 — and every
// rank of a stage runs that stage's schedule. Each round's results of the ranks of one stage are
// merged into the stage's result: iteration times and time breakdowns by the maximum, energies
// and energy breakdowns by the sum, element by element (over the length all of them have, as
// upstream's zip).
// Unlike upstream, the wrapped scheduler is given the renumbered stage ranks (upstream computes
// them and then passes the original list).
// Thread-safety: as the wrapped scheduler. Failure: kInvalidArgument when a stage has no rank or
// a rank's breakdown lacks an instruction another rank of its stage reported.
//
//   SchedulerFactory stage_level = ...;        // e.g. a PointSolution of one list per stage
//   auto s = make_3d_parallel(job, ranks, stage_level);
#pragma once

#include <memory>
#include <vector>

#include "perseus/server/scheduler.h"

namespace zeus::pfo {

// The job as the wrapped scheduler sees it: dp = tp = 1, world size = pp, and one RankInfo per
// stage (that of the rank with dp_rank = tp_rank = 0) whose rank is its pp_rank.
JobInfo pipeline_job(const JobInfo& job);
std::vector<RankInfo> pipeline_ranks(const std::vector<RankInfo>& ranks);

// One result per stage (rank = stage) from the results of all ranks; ranks[i].rank == i.
Result<std::vector<ProfilingResult>> merge_stage_results(
    const JobInfo& job, const std::vector<RankInfo>& ranks,
    const std::vector<ProfilingResult>& results);

// The wrapper around the scheduler `stage_level` makes for the pipeline job.
Result<std::unique_ptr<FrequencyScheduler>> make_3d_parallel(const JobInfo& job,
                                                             const std::vector<RankInfo>& ranks,
                                                             const SchedulerFactory& stage_level);

}  // namespace zeus::pfo
