// PfoServer: the Perseus pipeline frequency server (`zeus pfo serve`; library zeus_pfo_server).
//
// Speaks Zeus 0.16's wire protocol (docs/perseus.md, "Runtime: the server"): POST /register_job
// (the job id as a JSON string), POST /register_rank/{job_id}, GET /schedule/{job_id}?rank=R (a
// barrier: answered once every rank of the job has registered and asked), POST /result/{job_id},
// and GET /info; ours besides: POST /straggler/{job_id} {"iteration_time_s": T'} and DELETE
// /straggler/{job_id} tell a Frontier job of a straggler or that it is gone. A waiting rank holds a connection, never a thread: a 1,024-rank job waits on the
// event loop. Bad bodies are 422 with FastAPI's {"detail": [...]}; other errors carry
// {"detail": "..."}: an unknown job 404, a rank out of range 400, a duplicate rank 409, a schedule
// that does not fit the job (rank count, clocks the GPU lacks, a missing or malformed file) 400
// or 500 to every waiting rank, a barrier that waits longer than rank_timeout_s 504 to every
// waiting rank, a job idle longer than max_job_idle_s is evicted (410 to any still waiting).
// With dump_dir set, each job writes DIR/<job_id>/ranks.json, and N.sched.json and N.prof.json
// for each round N, in upstream's format.
// Units: seconds, bytes. Thread-safety: start() returns a running server; stop() and the accessors
// may be called from any thread. Failure: start() returns kInvalidArgument for bad options (an
// unknown scheduler, no schedule file or plans, a bad profiler argument), kUnavailable when the
// address cannot be bound.
//
//   zeus::PfoServerOptions o;  o.port = 0;  o.solution_path = "freqs_pipeline_00042.py";
//   auto server = zeus::PfoServer::start(o);
//   std::cout << (*server)->url() << "\n";       // http://127.0.0.1:41235
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "zeus/common/clock.h"
#include "zeus/common/result.h"

namespace zeus {

struct PfoServerOptions {
  std::string host = "127.0.0.1";  // "0.0.0.0": every interface
  int port = 7787;                 // 0: a free port, read back with port()
  std::string scheduler = "PointSolution";  // or "PointSolution3D", "InstructionProfiler",
                                            // "Frontier" (or point-solution[-3d], profiler,
                                            // frontier)
  std::string solution_path;       // the schedule file (.py literal or JSON), read at job start
  std::string scheduler_args;      // JSON object: InstructionProfiler's arguments
                                   // (num_microbatches, ...:
                                   // src/perseus/server/profiler_scheduler.h)
  std::string plans_dir;           // Frontier: the --out folder of `zeus pfo plan`, read at start
  std::string dump_dir;            // empty: no dump
  double max_job_idle_s = 604800;  // a job with no request for this long is evicted (1 week)
  double rank_timeout_s = 600;     // ranks waiting at the barrier longer fail the job; 0: never
  size_t max_body_bytes = 16 << 20;  // ProfilingResults of long rounds are large
  size_t max_connections = 10000;    // one per waiting rank: a job's world size must fit (422)
  // What clients can make the server hold: the ranks of all live jobs together and the live
  // jobs (503 beyond); a job whose ranks have not all registered is evicted after this long idle.
  size_t max_total_ranks = 1 << 17;
  size_t max_jobs = 1024;
  double max_registering_idle_s = 3600;
  // A job none of whose ranks registered within this is forgotten, and such jobs together hold
  // at most half of max_total_ranks (JobManagerOptions::unclaimed_idle_s).
  double unclaimed_job_idle_s = 60;
  const Clock* clock = nullptr;      // timeouts, eviction, job ids; default: the system clock
};

class PfoServer {
 public:
  // Binds host:port and serves on background threads until stop() or destruction.
  static Result<std::unique_ptr<PfoServer>> start(PfoServerOptions options);
  virtual ~PfoServer() = default;

  virtual int port() const = 0;
  // "http://<host>:<port>" (IPv6 hosts in brackets).
  virtual std::string url() const = 0;
  // Answers waiting ranks 503, stops accepting, finishes requests in flight, joins the threads.
  // Idempotent.
  virtual void stop() = 0;
  // Runs the timeout and eviction sweep now (a background sweep runs every second or more often).
  virtual void sweep_now() = 0;
};

}  // namespace zeus
