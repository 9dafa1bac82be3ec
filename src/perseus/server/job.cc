// The job state machine of the Perseus server (perseus/server/job.h).
#include "perseus/server/job.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "perseus/server/scheduler_frontier.h"

namespace zeus::pfo {
namespace {

int status_of(const Error& e) { return e.code == ErrorCode::kInvalidArgument ? 400 : 500; }

// A call into the scheduler (its factory, next_schedule, observe) whose exception becomes its
// error: whatever a scheduler throws fails the job, naming why, at every waiting rank; it never
// escapes to the HTTP layer with ranks left waiting at the barrier.
template <typename Call>
auto guarded(Call&& call) -> decltype(call()) {
  try {
    return call();
  } catch (const std::exception& e) {
    return zeus::fail(ErrorCode::kInternal, std::string("the scheduler failed: ") + e.what());
  }
}

// "3, 5, 9" (at most 16, then "and N more").
std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size() && i < 16; ++i) {
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  }
  if (ranks.size() > 16) out += " and " + std::to_string(ranks.size() - 16) + " more";
  return out;
}

// One schedule per rank, every clock supported by the rank's GPU; sorted by rank.
Result<std::vector<FrequencySchedule>> check_round(std::vector<FrequencySchedule> schedules,
                                                   const std::vector<std::optional<RankInfo>>& ranks) {
  const int world = static_cast<int>(ranks.size());
  std::vector<std::optional<FrequencySchedule>> by_rank(world);
  for (FrequencySchedule& s : schedules) {
    if (s.rank < 0 || s.rank >= world) {
      return zeus::fail(ErrorCode::kInternal, "the scheduler gave a schedule for rank " +
                                                  std::to_string(s.rank) + ", which the job "
                                                  "does not have");
    }
    if (by_rank[s.rank]) {
      return zeus::fail(ErrorCode::kInternal,
                        "the scheduler gave two schedules for rank " + std::to_string(s.rank));
    }
    by_rank[s.rank] = std::move(s);
  }
  std::vector<FrequencySchedule> out;
  for (int r = 0; r < world; ++r) {
    if (!by_rank[r]) {
      return zeus::fail(ErrorCode::kInternal,
                        "the scheduler gave no schedule for rank " + std::to_string(r));
    }
    const std::vector<int>& supported = ranks[r]->available_frequencies;
    const std::set<int> allowed(supported.begin(), supported.end());
    const auto& freqs = by_rank[r]->frequencies;
    for (size_t k = 0; k < freqs.size(); ++k) {
      const int mhz = freqs[k].second;
      if (mhz == 0 || allowed.empty() || allowed.count(mhz)) continue;
      std::string shown;
      for (size_t i = 0; i < supported.size() && i < 8; ++i) {
        shown += (i ? ", " : "") + std::to_string(supported[i]);
      }
      if (supported.size() > 8) shown += ", ... (" + std::to_string(supported.size()) + " clocks)";
      return zeus::fail(ErrorCode::kInvalidArgument,
                        "the schedule does not fit the job: rank " + std::to_string(r) +
                            " (pp_rank " + std::to_string(ranks[r]->pp_rank) + ") instruction " +
                            std::to_string(k) + " ('" + freqs[k].first + "') asks for " +
                            std::to_string(mhz) + " MHz, which its GPU does not support (" +
                            shown + " MHz)");
    }
    out.push_back(std::move(*by_rank[r]));
  }
  return out;
}

}  // namespace

Job::Job(JobInfo info, SchedulerFactory factory, double now_s)
    : info_(std::move(info)),
      factory_(std::move(factory)),
      last_active_s_(now_s),
      ranks_(info_.world_size),
      waiting_(info_.world_size, 0),
      results_(info_.world_size) {}

std::string Job::state() const {
  switch (phase_) {
    case Phase::kRegistering: return "registering";
    case Phase::kHandout: return "hand-out";
    case Phase::kRunning: return "running";
    case Phase::kFailed: return "failed: " + failure_.detail;
  }
  return "";
}

std::optional<Refusal> Job::check_rank(int rank) const {
  if (rank < 0 || rank >= info_.world_size) {
    return Refusal{400, "rank " + std::to_string(rank) + " is out of range: job " + info_.job_id +
                            " has world size " + std::to_string(info_.world_size) + " (ranks 0-" +
                            std::to_string(info_.world_size - 1) + ")"};
  }
  return std::nullopt;
}

Step<Progress> Job::register_rank(RankInfo rank, double now_s) {
  if (auto bad = check_rank(rank.rank)) return tl::unexpected(*bad);
  const auto position = [](const RankInfo& r) {
    return "dp_rank " + std::to_string(r.dp_rank) + ", pp_rank " + std::to_string(r.pp_rank) +
           ", tp_rank " + std::to_string(r.tp_rank);
  };
  if (rank.dp_rank >= info_.dp_degree || rank.pp_rank >= info_.pp_degree ||
      rank.tp_rank >= info_.tp_degree) {
    return tl::unexpected(Refusal{
        400, "rank " + std::to_string(rank.rank) + " claims " + position(rank) +
                 ", outside the job's degrees (dp " + std::to_string(info_.dp_degree) + ", pp " +
                 std::to_string(info_.pp_degree) + ", tp " + std::to_string(info_.tp_degree) + ")"});
  }
  if (ranks_[rank.rank]) {
    return tl::unexpected(Refusal{409, "rank " + std::to_string(rank.rank) +
                                           " is registered already in job " + info_.job_id});
  }
  for (const auto& other : ranks_) {
    if (other && std::tie(other->dp_rank, other->pp_rank, other->tp_rank) ==
                     std::tie(rank.dp_rank, rank.pp_rank, rank.tp_rank)) {
      return tl::unexpected(Refusal{409, "rank " + std::to_string(rank.rank) + " claims " +
                                             position(rank) + ", which rank " +
                                             std::to_string(other->rank) + " registered"});
    }
  }
  last_active_s_ = now_s;
  ranks_[rank.rank] = std::move(rank);
  Progress progress;
  if (++registered_count_ < info_.world_size || phase_ == Phase::kFailed) return progress;
  std::vector<RankInfo> sorted;
  for (const auto& r : ranks_) sorted.push_back(*r);
  progress.ranks_complete = sorted;
  Result<std::unique_ptr<FrequencyScheduler>> scheduler =
      guarded([&] { return factory_(info_, sorted); });
  if (!scheduler) {
    fail_into({status_of(scheduler.error()), scheduler.error().message}, &progress);
    return progress;
  }
  scheduler_ = std::move(*scheduler);
  start_round(&progress);
  return progress;
}

Step<Progress> Job::ask_schedule(int rank, double now_s) {
  if (auto bad = check_rank(rank)) return tl::unexpected(*bad);
  if (phase_ == Phase::kFailed) return tl::unexpected(failure_);
  if (!ranks_[rank]) {
    return tl::unexpected(Refusal{400, "rank " + std::to_string(rank) +
                                           " has not registered (POST /register_rank/" +
                                           info_.job_id + " first)"});
  }
  if (waiting_[rank]) {
    return tl::unexpected(
        Refusal{409, "rank " + std::to_string(rank) + " is waiting for its schedule already"});
  }
  last_active_s_ = now_s;
  waiting_[rank] = 1;
  if (waiting_count_++ == 0) barrier_since_s_ = now_s;
  Progress progress;
  try_handout(&progress);
  return progress;
}

Step<Progress> Job::report_result(ProfilingResult result, double now_s) {
  if (auto bad = check_rank(result.rank)) return tl::unexpected(*bad);
  if (phase_ == Phase::kFailed) return tl::unexpected(failure_);
  if (phase_ != Phase::kRunning) {
    return tl::unexpected(Refusal{409, "no round of job " + info_.job_id +
                                           " is running: a result follows the schedule handed "
                                           "out at GET /schedule"});
  }
  const int rank = result.rank;
  if (results_[rank]) {
    return tl::unexpected(Refusal{409, "rank " + std::to_string(rank) +
                                           " reported its result of round " +
                                           std::to_string(round_) + " already"});
  }
  last_active_s_ = now_s;
  results_[rank] = std::move(result);
  Progress progress;
  if (++results_count_ < info_.world_size) return progress;
  RoundRecord record{round_, current_, {}};
  for (auto& r : results_) record.results.push_back(std::move(*r));
  results_.assign(info_.world_size, std::nullopt);
  results_count_ = 0;
  Result<void> observed = guarded([&] { return scheduler_->observe(record.results); });
  progress.round_done = std::move(record);
  if (!observed) {
    fail_into({status_of(observed.error()), observed.error().message}, &progress);
    return progress;
  }
  ++round_;
  start_round(&progress);
  return progress;
}

void Job::forget_waiter(int rank) {
  if (rank < 0 || rank >= info_.world_size || !waiting_[rank]) return;
  waiting_[rank] = 0;
  --waiting_count_;
}

std::string Job::missing_ranks() const {
  std::vector<int> unregistered, silent, unreported;
  for (int r = 0; r < info_.world_size; ++r) {
    if (!ranks_[r]) {
      unregistered.push_back(r);
    } else if (phase_ == Phase::kRunning && !results_[r]) {
      unreported.push_back(r);
    } else if (!waiting_[r]) {
      silent.push_back(r);
    }
  }
  std::string out;
  const auto add = [&](const std::vector<int>& ranks, const std::string& what) {
    if (ranks.empty()) return;
    out += (out.empty() ? "" : "; ") + std::string(ranks.size() == 1 ? "rank " : "ranks ") +
           rank_list(ranks) + " " + what;
  };
  add(unregistered, "never registered");
  add(unreported, "did not report the result of round " + std::to_string(round_));
  add(silent, "did not ask for a schedule");
  return out;
}

Progress Job::expire(double now_s, double rank_timeout_s) {
  Progress progress;
  if (phase_ == Phase::kFailed || waiting_count_ == 0 || !(rank_timeout_s > 0) ||
      now_s - barrier_since_s_ <= rank_timeout_s) {
    return progress;
  }
  const std::string missing = missing_ranks();
  fail_into({504, "job " + info_.job_id + ": timed out after " +
                      std::to_string(static_cast<long long>(std::round(rank_timeout_s))) +
                      " s waiting for all " + std::to_string(info_.world_size) +
                      " ranks at the schedule barrier of round " + std::to_string(round_) + ": " +
                      (missing.empty() ? "every rank asked, but the round never started"
                                       : missing) +
                      ". The job cannot go on; register it again"},
            &progress);
  return progress;
}

Progress Job::fail(Refusal why) {
  Progress progress;
  if (phase_ != Phase::kFailed) fail_into(std::move(why), &progress);
  return progress;
}

Step<void> Job::set_straggler_time(std::optional<double> iteration_time_s, double now_s,
                                   std::optional<int> pipeline) {
  if (phase_ == Phase::kFailed) return tl::unexpected(failure_);
  if (pipeline && (*pipeline < 0 || *pipeline >= info_.dp_degree)) {
    return tl::unexpected(Refusal{422, "pipeline " + std::to_string(*pipeline) +
                                           " is not a dp rank of job " + info_.job_id +
                                           " (dp " + std::to_string(info_.dp_degree) +
                                           ": 0-" + std::to_string(info_.dp_degree - 1) + ")"});
  }
  if (!scheduler_) {
    return tl::unexpected(Refusal{409, "job " + info_.job_id + " has " +
                                           std::to_string(registered_count_) + " of " +
                                           std::to_string(info_.world_size) +
                                           " ranks registered; tell it of a straggler once "
                                           "every rank has registered"});
  }
  auto* target = dynamic_cast<StragglerAware*>(scheduler_.get());
  if (!target) {
    return tl::unexpected(Refusal{400, "job " + info_.job_id +
                                           "'s scheduler does not take a straggler; start the "
                                           "server with --scheduler frontier --plans DIR"});
  }
  Result<void> set = target->set_straggler_time(iteration_time_s, pipeline);
  if (!set) return tl::unexpected(Refusal{status_of(set.error()), set.error().message});
  last_active_s_ = now_s;
  return {};
}

std::string Job::straggler_state() const {
  const auto* frontier = dynamic_cast<const StragglerAware*>(scheduler_.get());
  return frontier ? frontier->straggler_state() : std::string();
}

void Job::start_round(Progress* progress) {
  Result<std::vector<FrequencySchedule>> next = guarded([&] { return scheduler_->next_schedule(); });
  if (next) next = check_round(std::move(*next), ranks_);
  if (!next) {
    fail_into({status_of(next.error()), next.error().message}, progress);
    return;
  }
  current_ = std::move(*next);
  phase_ = Phase::kHandout;
  try_handout(progress);
}

void Job::try_handout(Progress* progress) {
  if (phase_ != Phase::kHandout || waiting_count_ < info_.world_size) return;
  for (int r = 0; r < info_.world_size; ++r) {
    progress->deliveries.push_back({r, current_[r], {}});
  }
  waiting_.assign(info_.world_size, 0);
  waiting_count_ = 0;
  phase_ = Phase::kRunning;
}

void Job::fail_into(Refusal why, Progress* progress) {
  phase_ = Phase::kFailed;
  failure_ = std::move(why);
  for (int r = 0; r < info_.world_size; ++r) {
    if (waiting_[r]) progress->deliveries.push_back({r, std::nullopt, failure_});
  }
  waiting_.assign(info_.world_size, 0);
  waiting_count_ = 0;
}

}  // namespace zeus::pfo
