// PfoServer over the project's HTTP layer (zeus/perseus/pfo_server.h): the routes, and the sweep
// thread.
// GET /schedule runs on the event loop (it only parks the Reply or answers the barrier's ranks);
// the other routes run on the worker pool (the last registration reads the schedule file, the
// last result of a round writes the dump).
#include "zeus/perseus/pfo_server.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "common/periodic_task.h"
#include "http/server.h"
#include "http/url.h"
#include "perseus/server/job_manager.h"
#include "perseus/wire/wire.h"
#include "zeus/common/log.h"

namespace zeus {
namespace {

using http::HttpRequest;
using http::HttpResponse;

constexpr std::string_view kRegisterRank = "/register_rank/";
constexpr std::string_view kSchedule = "/schedule/";
constexpr std::string_view kResult = "/result/";
constexpr std::string_view kStraggler = "/straggler/";

HttpResponse detail(int status, std::string_view text) {
  return pfo::json_answer(status, pfo::detail_body(text));
}
HttpResponse invalid(const pfo::WireError& e) {
  return pfo::json_answer(422, pfo::validation_error_body(e));
}
HttpResponse refused(const pfo::Refusal& r) { return detail(r.status, r.detail); }

// The job id of "/prefix/<id>" (ids hold no '/'), or "" when the path is not that route's.
std::string job_id_in(const std::string& path, std::string_view prefix) {
  if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return "";
  std::string id = path.substr(prefix.size());
  return id.find('/') == std::string::npos ? id : "";
}

Result<void> check_options(const PfoServerOptions& o) {
  auto bad = [](const std::string& m) { return fail(ErrorCode::kInvalidArgument, m); };
  if (o.host.empty()) return bad("server host is empty; use 127.0.0.1 (or 0.0.0.0 for all)");
  if (o.port < 0 || o.port > 65535) return bad("server port must be in 0-65535 (0 = any free)");
  if (!(o.max_job_idle_s > 0 && std::isfinite(o.max_job_idle_s))) {
    return bad("the maximum job idle time must be a finite number of seconds > 0");
  }
  if (!(o.rank_timeout_s >= 0 && std::isfinite(o.rank_timeout_s))) {
    return bad("the rank timeout must be a finite number of seconds >= 0 (0 = wait forever)");
  }
  if (o.max_body_bytes == 0 || o.max_connections == 0) {
    return bad("the body size and connection limits must be > 0");
  }
  return ok();
}

class HttpPfoServer final : public PfoServer {
 public:
  HttpPfoServer(PfoServerOptions options, pfo::JobManagerOptions jobs)
      : options_(std::move(options)),
        clock_(options_.clock ? *options_.clock : system_clock_),
        jobs_(std::move(jobs), clock_) {}

  ~HttpPfoServer() override { stop(); }

  Result<void> bind_and_serve() {
    http::ServerOptions o;
    o.name = "pfo server";
    o.limits.max_body_bytes = options_.max_body_bytes;
    o.max_connections = options_.max_connections;
    o.idle_timeout_s = 300;  // ranks keep their connection between rounds
    http::Handler on_workers =
        http::HttpServer::blocking([this](const HttpRequest& q, const http::Peer&) {
          return answer(q);
        });
    auto server = http::HttpServer::start(
        std::move(o), [this, on_workers](const HttpRequest& q, const http::Peer& peer,
                                         std::shared_ptr<http::Reply> reply) {
          if (q.method == "GET" && !job_id_in(q.path, kSchedule).empty()) {
            schedule(q, std::move(reply));
          } else {
            on_workers(q, peer, std::move(reply));
          }
        });
    if (!server) return fail(server.error());
    http_ = std::move(*server);
    // The HTTP layer's error names the address and the fix (another port, or 0 for any).
    Result<int> port = http_->listen_tcp(options_.host, options_.port);
    if (!port) return fail(port.error());
    port_ = *port;
    // Every rank of a job holds a connection at the schedule barrier: a job fits in the
    // connections the server holds (clamped to the descriptor limit at start), less room for
    // the other requests.
    const size_t cap = http_->stats().max_connections;
    const size_t room = std::min<size_t>(32, cap / 8);
    jobs_.set_rank_budget(cap - room,
                          std::to_string(cap) + " connections (--max-connections " +
                              std::to_string(options_.max_connections) +
                              ", and the descriptor limit, ulimit -n) less " + std::to_string(room) +
                              " for other requests");
    double interval_s = 1.0;
    if (options_.rank_timeout_s > 0) interval_s = std::clamp(options_.rank_timeout_s / 4, 0.01, 1.0);
    sweeper_ = std::make_unique<PeriodicTask>(interval_s, [this] { jobs_.sweep(); });
    return ok();
  }

  int port() const override { return port_; }
  std::string url() const override { return http::server_url(options_.host, port_); }

  void sweep_now() override { jobs_.sweep(); }

  void stop() override {
    if (stopped_.exchange(true)) return;
    if (sweeper_) sweeper_->stop();
    jobs_.shutdown();
    if (http_) http_->stop();
  }

 private:
  void schedule(const HttpRequest& q, std::shared_ptr<http::Reply> reply) {
    pfo::Decoded<int> rank = pfo::decode_rank_query(q.query_value("rank"));
    if (!rank) {
      reply->send(invalid(rank.error()));
      return;
    }
    jobs_.ask_schedule(job_id_in(q.path, kSchedule), *rank, std::move(reply));
  }

  HttpResponse answer(const HttpRequest& q) {
    const bool post = q.method == "POST";
    if (q.path == "/register_job") {
      if (!post) return detail(405, "Method Not Allowed");
      pfo::Decoded<pfo::JobInfo> job = pfo::decode_job_info(q.body);
      if (!job) return invalid(job.error());
      pfo::Step<std::string> id = jobs_.register_job(std::move(*job));
      return id ? pfo::json_answer(200, nlohmann::json(*id).dump()) : refused(id.error());
    }
    if (std::string id = job_id_in(q.path, kRegisterRank); !id.empty()) {
      if (!post) return detail(405, "Method Not Allowed");
      pfo::Decoded<pfo::RankInfo> rank = pfo::decode_rank_info(q.body);
      if (!rank) return invalid(rank.error());
      pfo::Step<void> done = jobs_.register_rank(id, std::move(*rank));
      return done ? pfo::json_answer(200, "null") : refused(done.error());
    }
    if (std::string id = job_id_in(q.path, kResult); !id.empty()) {
      if (!post) return detail(405, "Method Not Allowed");
      pfo::Decoded<pfo::ProfilingResult> result = pfo::decode_profiling_result(q.body);
      if (!result) return invalid(result.error());
      pfo::Step<void> done = jobs_.report_result(id, std::move(*result));
      return done ? pfo::json_answer(200, "null") : refused(done.error());
    }
    if (std::string id = job_id_in(q.path, kStraggler); !id.empty()) {
      // Ours: an operator tells a Frontier job of a straggler (POST) or that it is gone (DELETE).
      std::optional<double> time_s;
      std::optional<int> pipeline;
      if (post) {
        pfo::Decoded<pfo::StragglerRequest> t = pfo::decode_straggler_time(q.body);
        if (!t) return invalid(t.error());
        time_s = t->iteration_time_s;
        pipeline = t->pipeline;
      } else if (q.method != "DELETE") {
        return detail(405, "Method Not Allowed");
      }
      pfo::Step<void> done = jobs_.set_straggler_time(id, time_s, pipeline);
      return done ? pfo::json_answer(200, "null") : refused(done.error());
    }
    if (!job_id_in(q.path, kSchedule).empty()) return detail(405, "Method Not Allowed");
    if (q.path == "/info") {
      if (q.method != "GET" && q.method != "HEAD") return detail(405, "Method Not Allowed");
      nlohmann::json info = jobs_.info();
      info["scheduler_args"] = {{"solution_path", options_.solution_path}};
      if (!options_.scheduler_args.empty()) {
        info["scheduler_args"] = nlohmann::json::parse(options_.scheduler_args, nullptr, false);
      }
      if (!options_.plans_dir.empty()) info["scheduler_args"]["plans_dir"] = options_.plans_dir;
      return pfo::json_answer(200, info.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    return detail(404, "Not Found");
  }

  PfoServerOptions options_;
  SystemClock system_clock_;
  const Clock& clock_;
  pfo::JobManager jobs_;
  std::unique_ptr<http::HttpServer> http_;
  int port_ = -1;
  std::unique_ptr<PeriodicTask> sweeper_;  // idle jobs, ranks past their timeout
  std::atomic<bool> stopped_{false};
};

}  // namespace

Result<std::unique_ptr<PfoServer>> PfoServer::start(PfoServerOptions options) {
  ZEUS_TRY(check_options(options));
  const std::optional<std::string> name = pfo::canonical_scheduler_name(options.scheduler);
  Result<pfo::SchedulerFactory> factory =
      pfo::scheduler_factory({options.scheduler, options.solution_path, options.scheduler_args,
                              options.dump_dir, options.plans_dir});
  if (!factory) return fail(factory.error());
  pfo::JobManagerOptions jobs{*name,
                              std::move(*factory),
                              options.dump_dir,
                              options.max_job_idle_s,
                              options.rank_timeout_s,
                              options.max_total_ranks,
                              options.max_jobs,
                              options.max_registering_idle_s,
                              options.unclaimed_job_idle_s};
  auto server = std::make_unique<HttpPfoServer>(std::move(options), std::move(jobs));
  ZEUS_TRY(server->bind_and_serve());
  return std::unique_ptr<PfoServer>(std::move(server));
}

}  // namespace zeus
