// MetricsExporter: serves the sampler's latest snapshot on /metrics (prometheus-cpp Exposer) and
// pushes it to a Pushgateway (prometheus-cpp Gateway).
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/gateway.h>

#include "exporter/metric_families.h"
#include "zeus/exporter.h"
#include "zeus/log.h"

namespace zeus {
namespace {

// What a scrape or a push collects: the latest snapshot, turned into metrics. No device access.
class SnapshotCollectable final : public prometheus::Collectable {
 public:
  explicit SnapshotCollectable(const EnergySampler& sampler) : sampler_(sampler) {}
  std::vector<prometheus::MetricFamily> Collect() const override {
    return exporter::metric_families(*sampler_.latest());
  }

 private:
  const EnergySampler& sampler_;
};

struct PushTarget {
  std::string host;  // with the scheme, as prometheus::Gateway wants it: "http://host"
  std::string port;
};

// "http://host:port[/]" -> {"http://host", "port"} (port 9091 when absent).
Result<PushTarget> parse_push_url(const std::string& url) {
  const std::string invalid = "--push '" + url + "' is not a Pushgateway URL like http://host:9091";
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos ||
      (url.compare(0, scheme_end, "http") != 0 && url.compare(0, scheme_end, "https") != 0)) {
    return fail(ErrorCode::kInvalidArgument, invalid);
  }
  std::string authority = url.substr(scheme_end + 3);
  while (!authority.empty() && authority.back() == '/') authority.pop_back();
  if (authority.empty() || authority.find('/') != std::string::npos)
    return fail(ErrorCode::kInvalidArgument, invalid);
  const size_t colon = authority.rfind(':');
  PushTarget target{url.substr(0, scheme_end + 3) + authority, "9091"};
  if (colon != std::string::npos && authority.find(']') == std::string::npos) {
    target.host = url.substr(0, scheme_end + 3) + authority.substr(0, colon);
    target.port = authority.substr(colon + 1);
    if (target.port.empty() || target.port.find_first_not_of("0123456789") != std::string::npos) {
      return fail(ErrorCode::kInvalidArgument, invalid);
    }
  }
  return target;
}

}  // namespace

struct MetricsExporter::Internals {
  std::shared_ptr<SnapshotCollectable> collectable;
  std::unique_ptr<prometheus::Exposer> exposer;
  std::unique_ptr<prometheus::Gateway> gateway;
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
  internals.collectable = std::make_shared<SnapshotCollectable>(*exporter->sampler_);
  auto started = exporter->sampler_->start(options.interval_s);
  if (!started) return fail(started.error());

  const std::string address = options.bind_address + ":" + std::to_string(options.port);
  try {
    internals.exposer = std::make_unique<prometheus::Exposer>(address, 2);
  } catch (const std::exception& e) {
    return fail(ErrorCode::kUnavailable, "cannot serve metrics on " + address + ": " + e.what() +
                                             " (is the port in use? choose another with --port)");
  }
  internals.exposer->RegisterCollectable(internals.collectable);
  const auto ports = internals.exposer->GetListeningPorts();
  if (ports.empty()) return fail(ErrorCode::kUnavailable, "cannot serve metrics on " + address);
  exporter->port_ = ports.front();

  if (push_target) {
    char hostname[256] = {};
    gethostname(hostname, sizeof(hostname) - 1);
    internals.gateway = std::make_unique<prometheus::Gateway>(
        push_target->host, push_target->port, options.push_job,
        prometheus::Gateway::GetInstanceLabel(hostname));
    internals.gateway->RegisterCollectable(internals.collectable);
    MetricsExporter* raw = exporter.get();
    const double interval_s = options.push_interval_s;
    const std::string url = options.push_url;
    internals.push_thread = std::thread([raw, interval_s, url] {
      Internals& in = *raw->internals_;
      std::unique_lock<std::mutex> lock(in.mutex);
      while (!in.stopping) {
        lock.unlock();
        auto pushed = raw->push_now();
        if (!pushed)
          log_warning("zeus exporter: push to " + url + " failed: " + pushed.error().message);
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
  const int status = internals_->gateway->Push();
  if (status < 200 || status >= 300) {
    return fail(ErrorCode::kUnavailable,
                "the Pushgateway answered " +
                    (status < 0 ? std::string("nothing") : "HTTP " + std::to_string(status)));
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
    internals_->exposer.reset();  // no scrape runs after this
  }
  if (sampler_) sampler_->stop();
}

}  // namespace zeus
