// The Frontier scheduler of the Perseus server (`zeus pfo serve --scheduler frontier --plans DIR`):
// holds a planned frontier (DIR/plans.bin, zeus/pfo_plan_store.h), serves every rank the fastest
// plan (each rank runs its pipeline stage's clocks: rank r gets stage pp_rank's list), and when a
// straggler is known switches every pipeline to what the combined straggler policy picks for the
// straggler's time T' (zeus/pfo_straggler_policy.h: the least-energy frontier plan finishing by
// T', or one global clock for every instruction when that costs less at T').
// A straggler becomes known in two ways; the operator's, when set, wins:
//   - an operator sets T' (POST /straggler/{job_id}, {"iteration_time_s": T'}), in the plans'
//     seconds, and clears it (DELETE /straggler/{job_id});
//   - the reported results: the round's iteration time is the longest of the ranks' mean
//     iter_time. The first round (the fastest plan) calibrates measured against planned seconds;
//     later rounds give the slowdown s = measured / (planned x calibration) of the plan served,
//     and s above 1 + tolerance means a straggler at T' = s x T_min.
// Every pipeline switches, the straggler's as well: ranks of one stage share a schedule (as under
// upstream's 3D wrapper). A choice takes effect in the next round the server computes (when the
// current round's results are all in).
// Units: seconds, joules, MHz. Thread-safety: one scheduler per job, used under the job's lock.
// Failure: kInvalidArgument when the job's pipeline does not match the plans (stage count), or
// for a straggler time that is not a positive number of seconds.
//
//   auto factory = frontier_scheduler_factory("plans/");         // reads plans.bin once
//   auto s = (*factory)(job, ranks);
//   dynamic_cast<StragglerAware&>(**s).set_straggler_time(3.6);   // the next round's plan
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "pfo_server/scheduler.h"
#include "zeus/pfo_plan_store.h"

namespace zeus::pfo {

// A scheduler that an operator can tell of a straggler (an optional capability of a
// FrequencyScheduler).
class StragglerAware {
 public:
  virtual ~StragglerAware() = default;
  // Sets (a value) or clears (nullopt) the straggler's iteration time in seconds.
  virtual Result<void> set_straggler_time(std::optional<double> iteration_time_s) = 0;
  // What the last round served and why, for GET /info ("fastest plan 638 (2.818 s)",
  // "straggler at 3.600 s (operator): global clock 1020 MHz (3.412 s)").
  virtual std::string straggler_state() const = 0;
};

struct FrontierSchedulerOptions {
  // Measured slowdowns up to 1 + tolerance are noise, not a straggler.
  double straggler_tolerance = 0.05;
};

// The scheduler for one job over `store`.
Result<std::unique_ptr<FrequencyScheduler>> make_frontier_scheduler(
    const JobInfo& job, const std::vector<RankInfo>& ranks, std::shared_ptr<const PlanStore> store,
    FrontierSchedulerOptions options = {});

// Opens DIR/plans.bin once (kNotFound or kInvalidArgument naming the fix) and makes each job's
// Frontier scheduler over it.
Result<SchedulerFactory> frontier_scheduler_factory(const std::string& plans_dir,
                                                    FrontierSchedulerOptions options = {});

}  // namespace zeus::pfo
