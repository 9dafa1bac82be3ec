// The Frontier scheduler of the Perseus server (`zeus pfo serve --scheduler frontier --plans DIR`):
// holds a planned frontier (DIR/plans.bin, zeus/perseus/pfo_plan_store.h), serves every rank the
// fastest
// plan (each rank runs its pipeline stage's clocks: rank r gets stage pp_rank's list), and when a
// straggler is known serves the other pipelines what the combined straggler policy picks for the
// straggler's time T' (zeus/perseus/pfo_straggler_policy.h: the least-energy frontier plan
// finishing by
// T', or one global clock for every instruction when that costs less at T'); the straggler's own
// pipeline (its dp rank) keeps the fastest plan, as in Perseus.
// A straggler becomes known in two ways; the operator's, when set, wins:
//   - an operator sets T' (POST /straggler/{job_id}, {"iteration_time_s": T', "pipeline": p}),
//     in the plans' seconds, and clears it (DELETE /straggler/{job_id}); without "pipeline"
//     every pipeline gets the policy's plan;
//   - the reported results (perseus/server/straggler_detect.h): per pipeline the longest of its
//     ranks' mean iter_time; a pipeline more than 1 + tolerance slower than the median of the
//     others is a straggler at T' = its time / the calibration of the first round. Relative, so
//     a uniformly slower job is none; with one pipeline only the operator's route detects one.
//     Rounds served under an operator's straggler are not measured.
// A choice takes effect in the next round the server computes (when the current round's results
// are all in).
// Units: seconds, joules, MHz. Thread-safety: one scheduler per job, used under the job's lock.
// Failure: kInvalidArgument when the job's pipeline does not match the plans (stage count), or
// for a straggler time that is not a positive number of seconds, or a pipeline out of range.
//
//   auto factory = frontier_scheduler_factory("plans/");         // reads plans.bin once
//   auto s = (*factory)(job, ranks);
//   dynamic_cast<StragglerAware&>(**s).set_straggler_time(3.6, 1);  // the next round's plans
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "perseus/server/scheduler.h"
#include "zeus/perseus/pfo_plan_store.h"

namespace zeus::pfo {

// A scheduler that an operator can tell of a straggler (an optional capability of a
// FrequencyScheduler).
class StragglerAware {
 public:
  virtual ~StragglerAware() = default;
  // Sets (a value) or clears (nullopt) the straggler's iteration time in seconds; `pipeline`
  // (its dp rank), when given, keeps the fastest plan.
  virtual Result<void> set_straggler_time(std::optional<double> iteration_time_s,
                                          std::optional<int> pipeline = std::nullopt) = 0;
  // What the last round served and why, for GET /info ("no straggler: fastest plan 638
  // (2.8180 s)", "straggler at 3.6000 s (measured, pipeline 1): global clock 1020 MHz
  // (3.4120 s); pipeline 1: the fastest plan").
  virtual std::string straggler_state() const = 0;
};

struct FrontierSchedulerOptions {
  // A pipeline up to 1 + tolerance slower than the others' median is noise, not a straggler.
  double straggler_tolerance = 0.05;
};

// The Frontier's scheduler arguments (--scheduler-args / ZEUS_PFO_SCHEDULER_ARGS), strictly: a
// JSON object whose one key is "straggler_tolerance" (a number in 0-10); "" gives the defaults.
Result<FrontierSchedulerOptions> parse_frontier_args(std::string_view args_json);

// The scheduler for one job over `store`.
Result<std::unique_ptr<FrequencyScheduler>> make_frontier_scheduler(
    const JobInfo& job, const std::vector<RankInfo>& ranks, std::shared_ptr<const PlanStore> store,
    FrontierSchedulerOptions options = {});

// Opens DIR/plans.bin once (kNotFound or kInvalidArgument naming the fix) and makes each job's
// Frontier scheduler over it.
Result<SchedulerFactory> frontier_scheduler_factory(const std::string& plans_dir,
                                                    FrontierSchedulerOptions options = {});

}  // namespace zeus::pfo
