// BsoServer over the project's HTTP layer (zeus/server/bso_server.h, http/server.h): the transport
// around server::Api, and the background sweep that expires abandoned trials.
#include "zeus/server/bso_server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/periodic_task.h"
#include "http/server.h"
#include "http/url.h"
#include "server/api.h"
#include "server/health_probe.h"
#include "server/json_text.h"
#include "server/metrics.h"
#include "zeus/common/log.h"
#include "zeus/optimizer/batch_size_optimizer.h"

namespace zeus {
namespace {

Result<void> check_options(const BsoServerOptions& o) {
  auto bad = [](const std::string& m) { return fail(ErrorCode::kInvalidArgument, m); };
  if (o.host.empty()) return bad("server host is empty; use 127.0.0.1 (or 0.0.0.0 for all)");
  if (o.port < 0 || o.port > 65535) return bad("server port must be in 0-65535 (0 = any free)");
  if (o.workers < 1 || o.workers > 1024) return bad("server workers must be in 1-1024");
  if (!(o.trial_timeout_s >= 0 && std::isfinite(o.trial_timeout_s))) {
    return bad("trial timeout must be a finite value >= 0 s (0 = never expire)");
  }
  if (o.max_body_bytes == 0) return bad("the request size limit must be > 0 bytes");
  if (o.max_connections < 1) return bad("the connection limit must be at least 1");
  if (!(o.header_timeout_s > 0 && o.idle_timeout_s > 0)) {
    return bad("the header and idle timeouts must be > 0 s");
  }
  if (o.token.find_first_of("\r\n") != std::string::npos) {
    return bad("the token holds a line break; check the token file");
  }
  return ok();
}

// The Api's request from the HTTP layer's (HEAD is answered as GET, without the body).
server::ApiRequest api_request(const http::HttpRequest& request) {
  server::ApiRequest out;
  out.method = request.method == "HEAD" ? "GET" : request.method;
  out.path = request.path;
  out.query = request.query;
  if (const std::string* auth = request.header("authorization")) out.authorization = *auth;
  out.body = request.body;
  return out;
}

class HttpBsoServer final : public BsoServer {
 public:
  HttpBsoServer(Store& store, BsoServerOptions options)
      : options_(std::move(options)),
        optimizer_(store, {}, options_.clock),
        health_(store, {}),
        api_(store, optimizer_, &metrics_,
             {options_.token, options_.upstream_rules ? upstream_rules(JobSpec{}) : JobSpec{},
              [this] { return health_.status(); }}) {}

  ~HttpBsoServer() override { stop(); }

  Result<void> bind_and_serve() {
    http::ServerOptions o;
    o.name = "bso service";
    o.workers = options_.workers;
    o.limits.max_body_bytes = options_.max_body_bytes;
    o.max_connections = options_.max_connections;
    o.max_connections_per_peer = options_.max_connections_per_peer;
    o.header_timeout_s = options_.header_timeout_s;
    o.idle_timeout_s = options_.idle_timeout_s;
    // The health check skips the queue of store work: it answers even when every worker waits
    // on the database.
    o.inline_request = [](const http::HttpRequest& q) { return q.path == "/healthz"; };
    Result<std::unique_ptr<http::HttpServer>> server = http::HttpServer::start(
        std::move(o), http::HttpServer::blocking([this](const http::HttpRequest& q, const http::Peer&) {
          return answer(q);
        }));
    if (!server) return fail(server.error());
    http_ = std::move(*server);
    // The HTTP layer's error names the address and the fix (another port, or 0 for any).
    Result<int> port = http_->listen_tcp(options_.host, options_.port);
    if (!port) return fail(port.error());
    port_ = *port;
    if (options_.trial_timeout_s > 0) {
      sweeper_ = std::make_unique<PeriodicTask>(
          std::clamp(options_.trial_timeout_s / 4, 0.01, 30.0), [this] {
            Result<std::vector<Trial>> r = expire_trials_now();
            if (!r) log_warning("bso service: trial expiry failed: " + r.error().message);
          });
    }
    return ok();
  }

  int port() const override { return port_; }

  std::string url() const override { return http::server_url(options_.host, port_); }

  void stop() override {
    if (sweeper_) sweeper_->stop();  // first: no sweep starts while requests finish
    if (http_) http_->stop();
  }

  Result<std::vector<Trial>> expire_trials_now() override {
    if (!(options_.trial_timeout_s > 0)) {
      return fail(ErrorCode::kInvalidArgument,
                  "trial expiry is off; start the server with a trial timeout (--trial-timeout)");
    }
    Result<std::vector<Trial>> expired = optimizer_.expire_trials(options_.trial_timeout_s);
    if (expired && !expired->empty()) {
      metrics_.count_expired(static_cast<int>(expired->size()));
      log_info("bso service: " + std::to_string(expired->size()) +
               " dispatched trial(s) older than " + std::to_string(options_.trial_timeout_s) +
               " s marked failed");
    }
    return expired;
  }

 private:
  http::HttpResponse answer(const http::HttpRequest& request) {
    server::ApiResponse a = api_.handle(api_request(request));
    http::HttpResponse out;
    out.status = a.status;
    out.body = std::move(a.body);
    out.content_type = std::move(a.content_type);
    out.headers = std::move(a.headers);
    return out;
  }

  BsoServerOptions options_;
  server::ServerMetrics metrics_;
  BatchSizeOptimizer optimizer_;
  server::HealthProbe health_;  // /healthz is answered inline: never a store call on the loop
  server::Api api_;
  std::unique_ptr<http::HttpServer> http_;
  int port_ = -1;
  std::unique_ptr<PeriodicTask> sweeper_;  // abandoned trials, with a trial timeout
};

}  // namespace

Result<std::unique_ptr<BsoServer>> BsoServer::start(Store& store, BsoServerOptions options) {
  ZEUS_TRY(check_options(options));
  auto server = std::make_unique<HttpBsoServer>(store, std::move(options));
  ZEUS_TRY(server->bind_and_serve());
  return std::unique_ptr<BsoServer>(std::move(server));
}

}  // namespace zeus
