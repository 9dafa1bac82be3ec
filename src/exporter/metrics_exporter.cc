// MetricsExporter: serves the sampler's latest snapshot on /metrics and pushes it to a
// Pushgateway, both through the project's HTTP layer (http/server.h, http/client.h); the text
// format is prometheus-cpp's serializer.
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <prometheus/text_serializer.h>

#include "exporter/metric_families.h"
#include "http/client.h"
#include "http/server.h"
#include "http/uri.h"
#include "http/url.h"
#include "zeus/exporter.h"
#include "zeus/log.h"

namespace zeus {
namespace {

constexpr const char* kTextFormat = "text/plain; version=0.0.4; charset=utf-8";

std::string exposition(const EnergySampler& sampler) {
  return prometheus::TextSerializer().Serialize(exporter::metric_families(*sampler.latest()));
}

struct PushTarget {
  std::string host;
  int port = 9091;
};

// "http://host[:port][/]" (port 9091 when absent).
Result<PushTarget> parse_push_url(const std::string& url) {
  const std::string invalid = "--push '" + url + "' is not a Pushgateway URL like http://host:9091";
  Result<http::HttpUrl> u = http::parse_http_url(url);
  if (!u) return fail(ErrorCode::kInvalidArgument, invalid + " (it " + u.error().message + ")");
  if (u->scheme != "http" || (!u->path.empty() && u->path != "/")) {
    return fail(ErrorCode::kInvalidArgument, invalid);
  }
  return PushTarget{u->host, u->port_given ? u->port : 9091};
}

}  // namespace

struct MetricsExporter::Internals {
  std::unique_ptr<http::HttpServer> server;
  std::unique_ptr<http::HttpClient> gateway;
  std::string push_path;  // /metrics/job/<job>/instance/<host>
  std::string push_url;
  std::thread push_thread;
  std::mutex mutex;
  std::condition_variable stop_signal;
  bool stopping = false;  // guarded by mutex
};

Result<std::unique_ptr<MetricsExporter>> MetricsExporter::start(Devices& devices, Clock& clock,
                                                                const ExporterOptions& options) {
  if (options.port < 0 || options.port > 65535) {
    return fail(ErrorCode::kInvalidArgument, "--port must be in 0-65535");
  }
  if (!options.push_url.empty() && !(options.push_interval_s >= 0.1)) {
    return fail(ErrorCode::kInvalidArgument, "--push-interval must be at least 0.1 s");
  }
  std::optional<PushTarget> push_target;
  if (!options.push_url.empty()) {
    auto parsed = parse_push_url(options.push_url);
    if (!parsed) return fail(parsed.error());
    push_target = *parsed;
  }
  std::unique_ptr<MetricsExporter> exporter(new MetricsExporter());
  exporter->sampler_ = std::make_unique<EnergySampler>(devices, clock);
  exporter->internals_ = std::make_unique<Internals>();
  Internals& internals = *exporter->internals_;
  auto started = exporter->sampler_->start(options.interval_s);
  if (!started) return fail(started.error());

  // A scrape serialises the latest snapshot: cheap, no device access, answered inline.
  http::ServerOptions server_options;
  server_options.name = "zeus exporter";
  server_options.inline_request = [](const http::HttpRequest&) { return true; };
  const EnergySampler* sampler = exporter->sampler_.get();
  auto server = http::HttpServer::start(
      server_options,
      http::HttpServer::blocking([sampler](const http::HttpRequest& request, const http::Peer&) {
        if (request.path != "/metrics") {
          return http::HttpResponse::error(404, "the metrics are at /metrics");
        }
        if (request.method != "GET" && request.method != "HEAD") {
          http::HttpResponse r = http::HttpResponse::error(405, "/metrics answers GET");
          r.headers.emplace_back("Allow", "GET, HEAD");
          return r;
        }
        return http::HttpResponse{200, exposition(*sampler), kTextFormat, {}, false};
      }));
  if (!server) return fail(server.error());
  internals.server = std::move(*server);
  const std::string address = options.bind_address + ":" + std::to_string(options.port);
  Result<int> port = internals.server->listen_tcp(options.bind_address, options.port);
  if (!port) {
    return fail(ErrorCode::kUnavailable, "cannot serve metrics on " + address + ": " +
                                             port.error().message +
                                             " (is the port in use? choose another with --port)");
  }
  exporter->port_ = *port;

  if (push_target) {
    char hostname[256] = {};
    gethostname(hostname, sizeof(hostname) - 1);
    http::ClientOptions client_options;
    client_options.timeout_s = 10;
    auto gateway = http::HttpClient::tcp(push_target->host, push_target->port, client_options);
    if (!gateway) return fail(gateway.error());
    internals.gateway = std::move(*gateway);
    internals.push_path = "/metrics/job/" +
                          http::percent_encode(options.push_job) + "/instance/" +
                          http::percent_encode(hostname);
    internals.push_url = options.push_url;
    MetricsExporter* raw = exporter.get();
    const double interval_s = options.push_interval_s;
    internals.push_thread = std::thread([raw, interval_s] {
      Internals& in = *raw->internals_;
      std::unique_lock<std::mutex> lock(in.mutex);
      while (!in.stopping) {
        lock.unlock();
        auto pushed = raw->push_now();
        if (!pushed) {
          log_warning("zeus exporter: push to " + in.push_url + " failed: " +
                      pushed.error().message);
        }
        lock.lock();
        in.stop_signal.wait_for(lock, std::chrono::duration<double>(interval_s),
                                [&] { return in.stopping; });
      }
    });
  }
  return exporter;
}

Result<void> MetricsExporter::push_now() {
  if (!internals_->gateway) return fail(ErrorCode::kInvalidArgument, "no --push URL was given");
  // POST replaces the pushed metrics of the same names in the group (job, instance).
  Result<http::HttpResponse> answer = internals_->gateway->request(
      "POST", internals_->push_path, exposition(*sampler_), {{"Content-Type", kTextFormat}});
  if (!answer) return fail(answer.error());
  if (answer->status < 200 || answer->status >= 300) {
    return fail(ErrorCode::kUnavailable,
                "the Pushgateway answered HTTP " + std::to_string(answer->status) + ": " +
                    answer->body.substr(0, 200));
  }
  return ok();
}

MetricsExporter::~MetricsExporter() {
  if (internals_) {
    {
      std::lock_guard<std::mutex> lock(internals_->mutex);
      internals_->stopping = true;
    }
    internals_->stop_signal.notify_all();
    if (internals_->push_thread.joinable()) internals_->push_thread.join();
    if (internals_->server) internals_->server->stop();  // no scrape runs after this
  }
  if (sampler_) sampler_->stop();
}

}  // namespace zeus
