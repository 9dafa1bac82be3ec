// One job of the Perseus server as a pure state machine: ranks register, then round after round
// every rank asks for its schedule (a barrier: nobody gets one before all have asked), runs it
// and reports its result; the scheduler sees all results before the next round's schedules.
//
//   registering --all ranks registered--> hand-out(n) --all asked--> running(n)
//   running(n) --all results--> hand-out(n+1)            any state --error--> failed
// Ranks may ask for round n+1 while round n runs (they wait for the barrier as anyone else).
// What the machine decides comes back as a Progress: answers owed to ranks waiting at /schedule
// (a schedule, or an error for every waiting rank at once), and what to dump (ranks.json when the
// ranks are complete, N.sched.json and N.prof.json when a round ends). A refused request comes
// back as a Refusal: the HTTP status and FastAPI's "detail" text.
// Before a round is handed out its schedules are checked: one per rank, and every clock among the
// rank's available_frequencies (0 = leave the clock; a rank listing no clocks is not checked);
// a schedule that does not fit fails the job, and every rank learns why at /schedule — nothing is
// half-applied. A barrier that waits longer than the rank timeout fails the job too (504, naming
// the missing ranks); a failed job answers every later request with its error.
// No I/O, no clock (the caller passes now_s), no threads: the caller serialises calls.
//
//   Job job(info, factory, now);
//   job.register_rank(r0, now);  ...
//   Step<Progress> p = job.ask_schedule(0, now);   // p->deliveries: the answers now due
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "perseus/server/scheduler.h"
#include "zeus/perseus/pfo_runtime_types.h"

namespace zeus::pfo {

// A request refused, or an error owed to a waiting rank: HTTP status and its "detail".
struct Refusal {
  int status = 400;
  std::string detail;
};

template <typename T>
using Step = tl::expected<T, Refusal>;

// The answer owed to one rank waiting at /schedule.
struct Delivery {
  int rank = 0;
  std::optional<FrequencySchedule> schedule;  // set: 200 with it; else `error`
  Refusal error;
};

// A finished round, for the dump files.
struct RoundRecord {
  int round = 0;
  std::vector<FrequencySchedule> schedules;  // sorted by rank
  std::vector<ProfilingResult> results;      // sorted by rank
};

struct Progress {
  std::vector<Delivery> deliveries;
  std::optional<std::vector<RankInfo>> ranks_complete;  // all ranks registered (sorted)
  std::optional<RoundRecord> round_done;
};

class Job {
 public:
  Job(JobInfo info, SchedulerFactory factory, double now_s);

  const JobInfo& info() const { return info_; }
  double last_active_s() const { return last_active_s_; }
  int round() const { return round_; }
  int registered() const { return registered_count_; }
  int waiting() const { return waiting_count_; }
  bool failed() const { return phase_ == Phase::kFailed; }
  // "registering", "hand-out", "running" or "failed: <why>".
  std::string state() const;

  // POST /register_rank: 400 out of range, 409 for a rank (or dp/pp/tp position) registered
  // already. The last rank's registration makes the scheduler and round 0.
  Step<Progress> register_rank(RankInfo rank, double now_s);
  // GET /schedule: the rank waits (it is in a later Progress's deliveries, possibly this one's).
  // 400 out of range or not registered, 409 when it waits already; a failed job's error.
  Step<Progress> ask_schedule(int rank, double now_s);
  // POST /result: 400 out of range, 409 when no round runs or the rank reported this round.
  Step<Progress> report_result(ProfilingResult result, double now_s);
  // POST/DELETE /straggler: tells the job's scheduler of a straggler's iteration time (nullopt
  // clears it); the next round computed uses it. 409 before every rank registered, 400 when the
  // scheduler takes no straggler (only Frontier does) or for a bad time.
  // `pipeline`: the straggler's dp rank, which keeps the fastest plan (422 outside the job's dp).
  Step<void> set_straggler_time(std::optional<double> iteration_time_s, double now_s,
                                std::optional<int> pipeline = std::nullopt);
  // A Frontier scheduler's straggler_state() (what it served and why); "" for other schedulers
  // or before the scheduler exists.
  std::string straggler_state() const;
  // A waiting rank's client is gone: it no longer waits (it may ask again).
  void forget_waiter(int rank);
  // Fails the job when ranks have waited at the barrier for more than rank_timeout_s (> 0).
  Progress expire(double now_s, double rank_timeout_s);
  // Fails the job with `why` (eviction, shutdown): every waiting rank gets it.
  Progress fail(Refusal why);

 private:
  enum class Phase { kRegistering, kHandout, kRunning, kFailed };

  std::optional<Refusal> check_rank(int rank) const;
  void start_round(Progress* progress);  // compute and check the next schedules
  void try_handout(Progress* progress);
  void fail_into(Refusal why, Progress* progress);
  std::string missing_ranks() const;

  JobInfo info_;
  SchedulerFactory factory_;
  std::unique_ptr<FrequencyScheduler> scheduler_;
  Phase phase_ = Phase::kRegistering;
  Refusal failure_;
  double last_active_s_;
  std::vector<std::optional<RankInfo>> ranks_;
  int registered_count_ = 0;
  std::vector<char> waiting_;
  int waiting_count_ = 0;
  double barrier_since_s_ = 0;
  int round_ = 0;
  std::vector<FrequencySchedule> current_;  // this round's, by rank
  std::vector<std::optional<ProfilingResult>> results_;
  int results_count_ = 0;
};

}  // namespace zeus::pfo
