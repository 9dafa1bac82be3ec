// BsoServer over cpp-httplib (zeus/bso_server.h): the transport around server::Api, and the
// background sweep that expires abandoned trials.
#include "zeus/bso_server.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "server/api.h"
#include "server/json_text.h"
#include "server/metrics.h"
#include "zeus/batch_size_optimizer.h"
#include "zeus/log.h"

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
  if (o.token.find_first_of("\r\n") != std::string::npos) {
    return bad("the token holds a line break; check the token file");
  }
  return ok();
}

class HttpBsoServer final : public BsoServer {
 public:
  HttpBsoServer(Store& store, BsoServerOptions options)
      : options_(std::move(options)),
        optimizer_(store, {}, options_.clock),
        api_(store, optimizer_, &metrics_, {options_.token}) {}

  ~HttpBsoServer() override { stop(); }

  Result<void> bind_and_serve() {
    configure();
    if (options_.port == 0) {
      port_ = http_.bind_to_any_port(options_.host);
    } else {
      port_ = http_.bind_to_port(options_.host, options_.port) ? options_.port : -1;
    }
    if (port_ <= 0) {
      return fail(ErrorCode::kUnavailable,
                  "cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                      " (address in use, not local, or not permitted); pick another --host/"
                      "--port, or --port 0 for any free port");
    }
    listener_ = std::thread([this] {
      http_.listen_after_bind();
      listener_done_ = true;
    });
    // stop() only takes effect once the accept loop runs: wait for it.
    while (!http_.is_running() && !listener_done_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (options_.trial_timeout_s > 0) sweeper_ = std::thread([this] { sweep_loop(); });
    return ok();
  }

  int port() const override { return port_; }

  std::string url() const override {
    const bool v6 = options_.host.find(':') != std::string::npos;
    return "http://" + (v6 ? "[" + options_.host + "]" : options_.host) + ":" +
           std::to_string(port_);
  }

  void stop() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    http_.stop();
    if (listener_.joinable()) listener_.join();
    if (sweeper_.joinable()) sweeper_.join();
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
  void configure() {
    const int workers = options_.workers;
    http_.new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
    http_.set_payload_max_length(options_.max_body_bytes);
    http_.set_tcp_nodelay(true);
    // SO_REUSEADDR only: httplib's default SO_REUSEPORT would let a second server silently
    // share a busy port.
    http_.set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    http_.set_keep_alive_max_count(100000);
    http_.set_keep_alive_timeout(5);
    http_.set_read_timeout(10);
    http_.set_write_timeout(10);
    const httplib::Server::Handler handler = [this](const httplib::Request& req,
                                                     httplib::Response& res) {
      server::ApiRequest request;
      request.method = req.method == "HEAD" ? "GET" : req.method;
      request.path = req.path;
      for (const auto& [name, value] : req.params) request.query.emplace_back(name, value);
      request.authorization = req.get_header_value("Authorization");
      request.body = req.body;
      server::ApiResponse answer = api_.handle(request);
      res.status = answer.status;
      for (const auto& [name, value] : answer.headers) res.set_header(name.c_str(), value);
      res.set_content(std::move(answer.body), answer.content_type.c_str());
    };
    const std::string any = R"([\s\S]*)";
    http_.Get(any, handler);
    http_.Post(any, handler);
    http_.Patch(any, handler);
    http_.Delete(any, handler);
    http_.Put(any, handler);
    http_.Options(any, handler);
    // Answers httplib gives before routing (413, 400 for malformed HTTP): the same {"message"}.
    http_.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;  // an answer of the Api
      std::string message;
      if (res.status == 413) {
        message = "request body larger than " + std::to_string(options_.max_body_bytes) +
                  " bytes; the service's requests are small JSON objects";
      } else if (res.status == 404) {
        message = "no route " + req.method + " " + req.path;
      } else {
        message = "malformed HTTP request (status " + std::to_string(res.status) + ")";
      }
      res.set_content(server::error_json(message), "application/json");
      metrics_.count_request(server::Api::route_of(req.path), "other", res.status);
    });
    http_.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
          std::string what = "unknown exception";
          try {
            if (error) std::rethrow_exception(error);
          } catch (const std::exception& e) {
            what = e.what();
          } catch (...) {
          }
          log_error("bso service: request failed with an exception: " + what);
          res.status = 500;
          res.set_content(server::error_json("internal error: " + what), "application/json");
        });
  }

  void sweep_loop() {
    const double interval_s = std::clamp(options_.trial_timeout_s / 4, 0.01, 30.0);
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      cv_.wait_for(lock, std::chrono::duration<double>(interval_s), [this] { return stopping_; });
      if (stopping_) break;
      lock.unlock();
      Result<std::vector<Trial>> r = expire_trials_now();
      if (!r) log_warning("bso service: trial expiry failed: " + r.error().message);
      lock.lock();
    }
  }

  BsoServerOptions options_;
  server::ServerMetrics metrics_;
  BatchSizeOptimizer optimizer_;
  server::Api api_;
  httplib::Server http_;
  int port_ = -1;
  std::thread listener_;
  std::atomic<bool> listener_done_{false};
  std::thread sweeper_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
};

}  // namespace

Result<std::unique_ptr<BsoServer>> BsoServer::start(Store& store, BsoServerOptions options) {
  ZEUS_TRY(check_options(options));
  auto server = std::make_unique<HttpBsoServer>(store, std::move(options));
  ZEUS_TRY(server->bind_and_serve());
  return std::unique_ptr<BsoServer>(std::move(server));
}

}  // namespace zeus
