// MetricsExporter: serves the sampler's latest snapshot (and the nodes of a PowerStreamingClient
// when given one) on /metrics and pushes it to a Pushgateway, both through the project's HTTP layer
// (http/server.h, http/client.h); the text format is prometheus-cpp's serializer.
#include <unistd.h>

#include <prometheus/text_serializer.h>
#include <chrono>
#include <condition_variable>
#include <memory>

#include "exporter/metric_families.h"
#include "exporter/pushgateway.h"
#include "exporter/stream_metric_families.h"
#include "http/server.h"
#include "zeus/client/power_streaming_client.h"
#include "zeus/common/log.h"
#include "zeus/exporter/exporter.h"

namespace zeus {
namespace {

constexpr const char* kTextFormat = "text/plain; version=0.0.4; charset=utf-8";

// The local devices' latest snapshot, then the streamed nodes as they are now.
std::vector<prometheus::MetricFamily> families(const EnergySampler& sampler,
                                               const PowerStreamingClient* streams) {
  auto out = exporter::metric_families(*sampler.latest());
  if (streams != nullptr) {
    for (auto& family : exporter::stream_metric_families(streams->power())) {
      out.push_back(std::move(family));
    }
  }
  return out;
}

}  // namespace

struct MetricsExporter::Internals {
  std::unique_ptr<http::HttpServer> server;
  std::unique_ptr<exporter::Pushgateway> gateway;  // group /metrics/job/<job>/instance/<host>
  std::thread push_thread;
  std::mutex mutex;
  std::condition_variable stop_signal;
  bool stopping = false;  // guarded by mutex
  const PowerStreamingClient* streams = nullptr;
};

Result<std::unique_ptr<MetricsExporter>> MetricsExporter::start(Devices& devices, Clock& clock,
                                                                const ExporterOptions& options) {
  if (options.port < 0 || options.port > 65535) {
    return fail(ErrorCode::kInvalidArgument, "--port must be in 0-65535");
  }
  // At most a day: a wait converts to nanoseconds, which overflow near 9.2e9 s (the loop spun).
  if (!options.push_url.empty() &&
      !(options.push_interval_s >= 0.1 && options.push_interval_s <= 86400)) {
    return fail(ErrorCode::kInvalidArgument,
                "--push-interval must be from 0.1 s to a day (86400 s)");
  }
  std::unique_ptr<exporter::Pushgateway> gateway;
  if (!options.push_url.empty()) {
    char hostname[256] = {};
    gethostname(hostname, sizeof(hostname) - 1);
    auto connected = exporter::Pushgateway::connect(options.push_url, options.push_job,
                                                    {{"instance", hostname}}, "--push");
    if (!connected) return fail(connected.error());
    gateway = std::move(*connected);
  }
  std::unique_ptr<MetricsExporter> exporter(new MetricsExporter());
  exporter->sampler_ = std::make_unique<EnergySampler>(devices, clock);
  exporter->internals_ = std::make_unique<Internals>();
  Internals& internals = *exporter->internals_;
  internals.streams = options.streams;
  auto started = exporter->sampler_->start(options.interval_s);
  if (!started) return fail(started.error());

  // A scrape serialises the latest snapshot: cheap, no device access, answered inline.
  http::ServerOptions server_options;
  server_options.name = "zeus exporter";
  server_options.inline_request = [](const http::HttpRequest&) { return true; };
  const EnergySampler* sampler = exporter->sampler_.get();
  const PowerStreamingClient* streams = options.streams;
  auto scrape = [sampler, streams](const http::HttpRequest& request, const http::Peer&) {
    if (request.path != "/metrics") {
      return http::HttpResponse::error(404, "the metrics are at /metrics");
    }
    if (request.method != "GET" && request.method != "HEAD") {
      http::HttpResponse r = http::HttpResponse::error(405, "/metrics answers GET");
      r.headers.emplace_back("Allow", "GET, HEAD");
      return r;
    }
    const std::string text = prometheus::TextSerializer().Serialize(families(*sampler, streams));
    return http::HttpResponse{200, text, kTextFormat, {}, false};
  };
  auto server = http::HttpServer::start(server_options, http::HttpServer::blocking(scrape));
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

  if (gateway) {
    internals.gateway = std::move(gateway);
    MetricsExporter* raw = exporter.get();
    const double interval_s = options.push_interval_s;
    internals.push_thread = std::thread([raw, interval_s] {
      Internals& in = *raw->internals_;
      std::unique_lock<std::mutex> lock(in.mutex);
      while (!in.stopping) {
        lock.unlock();
        auto pushed = raw->push_now();
        if (!pushed) {
          log_warning("zeus exporter: " + pushed.error().message);
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
  return internals_->gateway->push("POST", families(*sampler_, internals_->streams));
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
