// InstructionProfiler as the server runs it: its arguments (upstream's ZEUS_PFO_SCHEDULER_ARGS
// JSON object, or `zeus pfo serve --scheduler-args`) and the stage-profile file it leaves.
//
// Arguments (all optional but num_microbatches):
//   num_microbatches   microbatches per iteration: each rank is sent its stage's 1F1B order
//   frequencies        the SM clocks to profile (MHz); default: every clock all ranks listed
//   minimum_frequency  clocks below are not profiled (MHz, default 850; upstream's
//                      minimum_power_state is accepted as a synonym)
//   warmup_rounds      rounds at the highest clock first (default 2)
//   warmup_step_ratio  share of each round's iterations dropped (default 0.1; at least one is)
//   max_energy_rises   stop once energy rose this many times in a row (default 5; 0: never)
//   profile_path       the CSV to write ("{job_id}" is replaced by the job's id); default
//                      <dump dir>/<job id>/stage_profile.csv
// The file is rewritten (by rename) after each profiled clock. This is the I/O edge of the pure
// profiler (perseus/server/instruction_profiler.h).
// Failure: kInvalidArgument naming the argument (unknown, wrong type, out of range) or asking for
// a dump folder when no profile_path is given; a file that cannot be written fails the job with
// the reason (every waiting rank learns it).
//
//   auto make = instruction_profiler_factory(R"({"num_microbatches": 8})", "dump");
//   auto scheduler = (*make)(job, ranks);
#pragma once

#include <string>
#include <string_view>

#include "perseus/server/instruction_profiler.h"
#include "perseus/server/scheduler.h"

namespace zeus::pfo {

// The profiler's options from the arguments' JSON object text ("" or "{}": defaults, which lack
// num_microbatches).
Result<InstructionProfilerOptions> parse_profiler_args(std::string_view args_json);

// Checks the arguments now (at server start) and makes a profiler for each job.
Result<SchedulerFactory> instruction_profiler_factory(std::string_view args_json,
                                                      const std::string& dump_dir);

}  // namespace zeus::pfo
