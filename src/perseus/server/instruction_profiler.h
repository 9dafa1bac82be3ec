// InstructionProfiler: the online profiler of the Perseus server (upstream's artifact scheduler of
// that name). It measures every pipeline stage's forward and backward time and energy at each SM
// clock while the job trains, and produces the stage profile `zeus pfo plan` reads.
//
// Rounds: `warmup_rounds` rounds at the highest clock (results ignored: the GPUs warm up), then
// one round per profiled clock from the highest down; in a round every instruction of every rank
// runs at that clock. Each rank's schedule is its stage's synchronous 1F1B order for
// `num_microbatches` (Zeus 0.16's RankInfo carries no instruction list, so the profiler is told
// the microbatch count). The profiled clocks are `frequencies_mhz` if given, else those every rank
// listed in available_frequencies; clocks below `minimum_frequency_mhz` are never run.
// From each round's results: the ranks of a stage are merged (time: the maximum over the stage's
// ranks; energy: the sum over them divided by dp_degree, i.e. one pipeline replica's energy, tensor
// parallel ranks included); of each instruction's iterations the first max(1, ⌊ratio·n⌋) are
// dropped as warm-up and the rest averaged over all instances. Profiling stops after the lowest
// clock, or once the round's energy (all stages' forward + backward means summed) has risen
// `max_energy_rises` times in a row (Zeus's guidance: lower clocks only cost more time and energy).
// Then every later schedule request fails with "[profiling-done] ..." (as upstream's, so training
// stops) naming the profile file and the `zeus pfo plan` command.
// The profile: one CSV row per (stage, instruction, clock), in Zeus's form
//   rank,dp_rank,pp_rank,tp_rank,stage,instruction,frequency,time,energy
// (the rank columns name each stage's dp_rank = tp_rank = 0 rank). Pure: no I/O — the caller
// writes profile_csv() (rewritten after each clock, so a stopped job leaves what it measured).
// Units: MHz, s, J. Thread-safety: none (one per job, under the job's lock).
// Failure: make() kInvalidArgument when the options or the ranks' clocks leave fewer than two
// clocks to profile; observe() kInvalidArgument naming the stage and instruction of a result
// without breakdowns or with too few iterations.
//
//   auto p = InstructionProfiler::make(job, ranks, {.num_microbatches = 8});
//   auto round = (*p)->next_schedule();  ...  (*p)->observe(results);
//   if ((*p)->profiled_clocks() > 0) write(path, (*p)->profile_csv());
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "perseus/server/scheduler.h"
#include "zeus/perseus/pfo_profile.h"

namespace zeus::pfo {

struct InstructionProfilerOptions {
  int num_microbatches = 0;          // microbatches per iteration (required, >= 1)
  int warmup_rounds = 2;             // rounds at the highest clock before measuring (>= 0)
  double warmup_step_ratio = 0.1;    // share of a round's iterations dropped, in [0, 1)
  int minimum_frequency_mhz = 850;   // clocks below are not profiled (upstream's default)
  int max_energy_rises = 5;          // stop after this many rises in a row (0: never)
  std::vector<int> frequencies_mhz;  // the clocks to profile; empty: every rank's common clocks
  std::string profile_path;          // where the caller writes the profile (named in messages)
};

class InstructionProfiler final : public FrequencyScheduler {
 public:
  // `ranks` sorted by rank, one per rank of `job`.
  static Result<std::unique_ptr<InstructionProfiler>> make(const JobInfo& job,
                                                           std::vector<RankInfo> ranks,
                                                           InstructionProfilerOptions options);

  Result<std::vector<FrequencySchedule>> next_schedule() override;
  Result<void> observe(const std::vector<ProfilingResult>& results) override;

  // The clocks to run, highest first (those at or above the floor).
  const std::vector<int>& clocks_mhz() const { return clocks_; }
  // How many clocks have been measured so far; done() once profiling stopped.
  int profiled_clocks() const { return measured_; }
  bool done() const { return done_; }
  // The profile so far: one row per (stage, instruction, clock) measured, the mean time and
  // energy of one instance.
  const std::vector<ProfileRow>& records() const { return records_; }
  // The profile so far as CSV text (header and one row per record).
  std::string profile_csv() const;

 private:
  InstructionProfiler(JobInfo job, std::vector<RankInfo> ranks, InstructionProfilerOptions options,
                      std::vector<int> clocks);
  // The schedules of a round that runs every instruction at `mhz`.
  std::vector<FrequencySchedule> round_at(int mhz) const;
  std::string done_message() const;

  JobInfo job_;
  std::vector<RankInfo> ranks_;
  InstructionProfilerOptions options_;
  std::vector<int> clocks_;
  std::vector<std::vector<std::string>> stage_names_;  // 1F1B instruction names per stage
  int warmups_done_ = 0;
  int measured_ = 0;
  int rises_ = 0;
  double last_energy_j_ = 0.0;
  bool done_ = false;
  std::string stop_reason_;
  std::vector<ProfileRow> records_;
};

// kInvalidArgument naming the first option out of range (num_microbatches missing, ...).
Result<void> check_profiler_options(const InstructionProfilerOptions& options);

// The clocks InstructionProfiler runs: `options.frequencies_mhz` (each supported by every rank
// that lists clocks) or the clocks every rank lists, highest first, without those below the
// floor. kInvalidArgument naming the rank and clock, or when fewer than two remain.
Result<std::vector<int>> profiler_clocks(const std::vector<RankInfo>& ranks,
                                         const InstructionProfilerOptions& options);

}  // namespace zeus::pfo
