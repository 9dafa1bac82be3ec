// The Perseus server's jobs: a map of job state machines (perseus/server/job.h) behind one lock,
// the
// connections of ranks waiting at the schedule barrier (answered from whichever thread completes
// the barrier — no thread waits), the dump files, and the sweep that times out barriers and
// evicts idle jobs.
// Thread-safety: every method may be called from any thread. Failure: refusals carry the HTTP
// status and detail the routes answer with.
//
//   JobManager jobs(options, clock);
//   std::string id = jobs.register_job(info);
//   jobs.ask_schedule(id, rank, reply);   // the reply is answered when the barrier completes
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "http/server.h"
#include "perseus/server/job.h"
#include "zeus/common/clock.h"

namespace zeus::pfo {

// A JSON answer of the server (200 with a message, or an error with its detail body).
inline http::HttpResponse json_answer(int status, std::string body) {
  http::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

struct JobManagerOptions {
  std::string scheduler_name;  // in job ids ("PointSolution")
  SchedulerFactory factory;
  std::string dump_dir;        // empty: no dump
  double max_job_idle_s = 604800;
  double rank_timeout_s = 600;  // 0: never
  // What clients can make the server hold (each rank costs a few hundred bytes from its job's
  // registration on): the ranks of every live job together, and the live jobs; beyond either a
  // registration is refused with 503. A job whose ranks have not all registered after
  // max_registering_idle_s without a request is evicted (its ranks never came).
  size_t max_total_ranks = 1 << 17;
  size_t max_jobs = 1024;
  double max_registering_idle_s = 3600;
  // A job none of whose ranks has registered (unclaimed: a real job's rank 0 registers itself
  // right after the job) holds its world from the budget on nobody's behalf: unclaimed jobs
  // together may hold at most half of max_total_ranks (one job of any size alone), and one is
  // evicted after unclaimed_idle_s without a rank. So a client that only posts /register_job
  // cannot take the budget every real job needs.
  double unclaimed_idle_s = 60;
};

class JobManager {
 public:
  JobManager(JobManagerOptions options, const Clock& clock);

  // A new job; its id "YYYY-MM-DD-HH-MM-SS+dp{d}+pp{p}+tp{t}+{Scheduler}[+{metadata}]" (local
  // time; "+2", "+3", ... appended when a job with that id exists). Refused: 422 when its world
  // size is above the rank budget (every rank holds a connection at the schedule barrier), 503
  // when the live jobs or their ranks are at max_jobs / max_total_ranks.
  Step<std::string> register_job(JobInfo info);
  // The most ranks one job may have: the connections the HTTP server holds, less room for other
  // requests (set once the server knows its descriptor limit; 0: no check). `why` says where the
  // number comes from, for the refusal ("--max-connections 10000 and ulimit -n ...").
  void set_rank_budget(size_t ranks, std::string why);
  Step<void> register_rank(const std::string& job_id, RankInfo rank);
  // Answers `reply` now (a refusal, or the schedule when this request completes the barrier) or
  // later, from the thread that completes the barrier or fails the job.
  void ask_schedule(const std::string& job_id, int rank, std::shared_ptr<http::Reply> reply);
  Step<void> report_result(const std::string& job_id, ProfilingResult result);
  // POST/DELETE /straggler/{job_id} (Job::set_straggler_time); 404 for an unknown job.
  Step<void> set_straggler_time(const std::string& job_id, std::optional<double> iteration_time_s,
                                std::optional<int> pipeline = std::nullopt);
  // Fails barriers that waited past the rank timeout; evicts jobs idle past max_job_idle_s.
  void sweep();
  // Answers every waiting rank 503 (the server stops).
  void shutdown();
  // GET /info: the settings and each job's state.
  nlohmann::json info() const;

 private:
  struct Entry {
    Entry(JobInfo info, SchedulerFactory factory, double now_s)
        : job(std::move(info), std::move(factory), now_s), waiters(job.info().world_size) {}
    Job job;
    std::vector<std::shared_ptr<http::Reply>> waiters;
  };
  // A refusal for an unknown job id.
  Refusal unknown(const std::string& job_id) const;
  // Answers the deliveries (under the lock: the replies only queue their answers) and returns
  // what must be dumped after the lock is released.
  Progress settle(Entry& entry, Progress progress);
  void dump(const std::string& job_id, const Progress& progress) const;

  JobManagerOptions options_;
  const Clock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Entry>> jobs_;
  size_t total_ranks_ = 0;  // the world sizes of jobs_ together
  size_t rank_budget_ = 0;
  std::string rank_budget_why_;
};

}  // namespace zeus::pfo
