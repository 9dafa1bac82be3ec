// The Perseus server's jobs behind one lock (perseus/server/job_manager.h).
#include "perseus/server/job_manager.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ctime>
#include <filesystem>

#include "common/atomic_file.h"
#include "perseus/wire/wire.h"
#include "zeus/common/log.h"

namespace zeus::pfo {
namespace {

http::HttpResponse answer_of(const Delivery& d) {
  if (d.schedule) return json_answer(200, encode(*d.schedule));
  return json_answer(d.error.status, detail_body(d.error.detail));
}

// Writes `text` to dir/name through a temporary file, so a reader never sees half a file.
void write_file(const std::filesystem::path& dir, const std::string& name,
                const std::string& text) {
  Result<void> written = write_file_atomically(dir / name, text);
  if (!written) log_warning("zeus pfo serve: " + written.error().message + " (dump skipped)");
}

}  // namespace

JobManager::JobManager(JobManagerOptions options, const Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

Refusal JobManager::unknown(const std::string& job_id) const {
  return {404, "unknown job '" + job_id +
                   "': register it first with POST /register_job (jobs idle for more than " +
                   std::to_string(static_cast<long long>(options_.max_job_idle_s)) +
                   " s are evicted)"};
}

void JobManager::set_rank_budget(size_t ranks, std::string why) {
  std::lock_guard<std::mutex> lock(mu_);
  rank_budget_ = ranks;
  rank_budget_why_ = std::move(why);
}

Step<std::string> JobManager::register_job(JobInfo info) {
  const std::time_t now = static_cast<std::time_t>(clock_.unix_time_s());
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d-%H-%M-%S", &local);
  std::string id = std::string(stamp) + "+dp" + std::to_string(info.dp_degree) + "+pp" +
                   std::to_string(info.pp_degree) + "+tp" + std::to_string(info.tp_degree) + "+" +
                   options_.scheduler_name;
  if (info.job_metadata && !info.job_metadata->empty()) id += "+" + *info.job_metadata;
  std::lock_guard<std::mutex> lock(mu_);
  const size_t world = static_cast<size_t>(info.world_size);
  if (rank_budget_ > 0 && world > rank_budget_) {
    return tl::unexpected(Refusal{
        422, "a job of world size " + std::to_string(world) + " needs " + std::to_string(world) +
                 " connections at once (every rank waits at the schedule barrier on its own); "
                 "this server holds at most " +
                 std::to_string(rank_budget_) + " ranks per job (" + rank_budget_why_ +
                 "): start it with a higher --max-connections and `ulimit -n`, or split the job"});
  }
  if (jobs_.size() >= options_.max_jobs) {
    return tl::unexpected(Refusal{
        503, "the server holds " + std::to_string(jobs_.size()) + " jobs, its most; a job is "
                 "forgotten when it has no request for " +
                 std::to_string(static_cast<long long>(options_.max_job_idle_s)) +
                 " s (or " + std::to_string(static_cast<long long>(options_.max_registering_idle_s)) +
                 " s while its ranks register): try again later"});
  }
  size_t unclaimed = 0;
  for (const auto& [id, entry] : jobs_) {
    if (entry->job.registered() == 0)
      unclaimed += static_cast<size_t>(entry->job.info().world_size);
  }
  if (unclaimed > 0 && unclaimed + world > options_.max_total_ranks / 2) {
    return tl::unexpected(Refusal{
        503, "jobs none of whose ranks has registered yet hold " + std::to_string(unclaimed) +
                 " ranks, and " + std::to_string(world) + " more would pass half the server's " +
                 std::to_string(options_.max_total_ranks) +
                 " ranks (such a job is forgotten after " +
                 std::to_string(static_cast<long long>(options_.unclaimed_idle_s)) +
                 " s without a rank): register the earlier jobs' ranks, or try again"});
  }
  if (total_ranks_ + world > options_.max_total_ranks) {
    return tl::unexpected(Refusal{
        503, "the server's live jobs hold " + std::to_string(total_ranks_) + " ranks, and " +
                 std::to_string(world) + " more would pass its most, " +
                 std::to_string(options_.max_total_ranks) + ": try again when a job ends"});
  }
  std::string unique = id;
  for (int n = 2; jobs_.count(unique); ++n) unique = id + "+" + std::to_string(n);
  info.job_id = unique;
  jobs_.emplace(unique, std::make_unique<Entry>(std::move(info), options_.factory, clock_.now_s()));
  total_ranks_ += world;
  log_info("zeus pfo serve: job " + unique + " registered");
  return unique;
}

Step<void> JobManager::register_rank(const std::string& job_id, RankInfo rank) {
  Progress todo;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return tl::unexpected(unknown(job_id));
    Step<Progress> p = it->second->job.register_rank(std::move(rank), clock_.now_s());
    if (!p) return tl::unexpected(p.error());
    todo = settle(*it->second, std::move(*p));
  }
  dump(job_id, todo);
  return {};
}

void JobManager::ask_schedule(const std::string& job_id, int rank,
                              std::shared_ptr<http::Reply> reply) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    const Refusal r = unknown(job_id);
    reply->send(json_answer(r.status, detail_body(r.detail)));
    return;
  }
  Entry& entry = *it->second;
  const bool in_range = rank >= 0 && rank < entry.job.info().world_size;
  // A rank whose earlier request's connection is gone may ask again.
  if (in_range && entry.waiters[rank] && entry.waiters[rank]->client_gone()) {
    entry.job.forget_waiter(rank);
    entry.waiters[rank].reset();
  }
  Step<Progress> p = entry.job.ask_schedule(rank, clock_.now_s());
  if (!p) {
    reply->send(json_answer(p.error().status, detail_body(p.error().detail)));
    return;
  }
  entry.waiters[rank] = std::move(reply);
  settle(entry, std::move(*p));  // a barrier completes no dump
}

Step<void> JobManager::report_result(const std::string& job_id, ProfilingResult result) {
  Progress todo;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return tl::unexpected(unknown(job_id));
    Step<Progress> p = it->second->job.report_result(std::move(result), clock_.now_s());
    if (!p) return tl::unexpected(p.error());
    todo = settle(*it->second, std::move(*p));
  }
  dump(job_id, todo);
  return {};
}

Step<void> JobManager::set_straggler_time(const std::string& job_id,
                                          std::optional<double> iteration_time_s,
                                          std::optional<int> pipeline) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return tl::unexpected(unknown(job_id));
  return it->second->job.set_straggler_time(iteration_time_s, clock_.now_s(), pipeline);
}

void JobManager::sweep() {
  std::lock_guard<std::mutex> lock(mu_);
  const double now = clock_.now_s();
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    Entry& entry = *it->second;
    // A waiting rank whose connection is gone (it hung up, or was closed) no longer counts at
    // the barrier: it would otherwise complete the barrier for a schedule nobody receives.
    for (size_t r = 0; r < entry.waiters.size(); ++r) {
      if (entry.waiters[r] && entry.waiters[r]->client_gone()) {
        entry.job.forget_waiter(static_cast<int>(r));
        entry.waiters[r].reset();
      }
    }
    settle(entry, entry.job.expire(now, options_.rank_timeout_s));
    const double idle = now - entry.job.last_active_s();
    const bool registering = entry.job.registered() < entry.job.info().world_size;
    double limit = registering ? std::min(options_.max_registering_idle_s, options_.max_job_idle_s)
                               : options_.max_job_idle_s;
    if (entry.job.registered() == 0) limit = std::min(limit, options_.unclaimed_idle_s);
    if (idle > limit) {
      const std::string why =
          "no request for more than " + std::to_string(static_cast<long long>(limit)) + " s" +
          (registering ? " while " + std::to_string(entry.job.info().world_size -
                                                    entry.job.registered()) +
                             " of its ranks had not registered"
                       : "");
      log_info("zeus pfo serve: job " + it->first + " evicted (" + why + ")");
      settle(entry, entry.job.fail({410, "job " + it->first + " was evicted: " + why}));
      total_ranks_ -= static_cast<size_t>(entry.job.info().world_size);
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

void JobManager::shutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, entry] : jobs_) {
    settle(*entry, entry->job.fail({503, "the pipeline frequency server is stopping"}));
  }
}

nlohmann::json JobManager::info() const {
  nlohmann::json jobs = nlohmann::json::array();
  size_t rank_budget = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    rank_budget = rank_budget_;
    const double now = clock_.now_s();
    for (const auto& [id, entry] : jobs_) {
      const Job& job = entry->job;
      jobs.push_back({{"job_id", id},
                      {"world_size", job.info().world_size},
                      {"registered_ranks", job.registered()},
                      {"waiting_ranks", job.waiting()},
                      {"round", job.round()},
                      {"state", job.state()},
                      {"idle_s", now - job.last_active_s()}});
      if (std::string plan = job.straggler_state(); !plan.empty()) jobs.back()["plan"] = plan;
    }
  }
  return {{"scheduler", options_.scheduler_name},
          {"dump_data", !options_.dump_dir.empty()},
          {"dump_dir", options_.dump_dir},
          {"max_job_idle_time", options_.max_job_idle_s},
          {"rank_timeout", options_.rank_timeout_s},
          {"max_ranks_per_job", rank_budget},
          {"max_total_ranks", options_.max_total_ranks},
          {"max_jobs", options_.max_jobs},
          {"jobs", jobs}};
}

Progress JobManager::settle(Entry& entry, Progress progress) {
  for (const Delivery& d : progress.deliveries) {
    std::shared_ptr<http::Reply> reply = std::move(entry.waiters[d.rank]);
    if (reply) reply->send(answer_of(d));
  }
  progress.deliveries.clear();
  return progress;
}

void JobManager::dump(const std::string& job_id, const Progress& progress) const {
  if (options_.dump_dir.empty()) return;
  const std::filesystem::path dir = std::filesystem::path(options_.dump_dir) / job_id;
  if (progress.ranks_complete) write_file(dir, "ranks.json", encode_list(*progress.ranks_complete));
  if (progress.round_done) {
    const std::string n = std::to_string(progress.round_done->round);
    write_file(dir, n + ".prof.json", encode_list(progress.round_done->results));
    write_file(dir, n + ".sched.json", encode_list(progress.round_done->schedules));
  }
}

}  // namespace zeus::pfo
