#include "proxy/proxy.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "http/async_client.h"
#include "http/client.h"
#include "http/server.h"
#include "proxy/error_answer.h"
#include "proxy/live_routes.h"
#include "proxy/meter.h"
#include "proxy/proxy_metrics.h"
#include "proxy/relay.h"
#include "proxy/run_report.h"
#include "proxy/serving.h"
#include "proxy/upstream.h"
#include "proxy/clock_governor.h"
#include "zeus/common/log.h"

namespace zeus::proxy {
namespace {

using http::HttpRequest;
using http::HttpResponse;

class Proxy final : public LlmProxy {
 public:
  Proxy(ProxyOptions options, std::unique_ptr<http::HttpClient> upstream,
        std::shared_ptr<http::AsyncHttpClient> relay_upstream, std::string upstream_path,
        std::unique_ptr<Meter> meter)
      : options_(std::move(options)), upstream_(std::move(upstream)), meter_(std::move(meter)) {
    meter_->publish_to(&feed_,
                       feed_.add_source("proxy", LiveFeed::gpus_label(options_.gpu_indices)));
    relay_.upstream = std::move(relay_upstream);
    relay_.meter = meter_.get();
    relay_.metrics = &metrics_;
    relay_.upstream_timeout_s = options_.upstream_timeout_s;
    relay_.upstream_path = std::move(upstream_path);
  }
  ~Proxy() override { stop(); }

  Result<void> listen() {
    http::ServerOptions server_options;
    server_options.name = "zeus proxy";
    server_options.limits.max_body_bytes = options_.max_body_bytes;
    server_options.workers = 4;  // /metrics only: it asks the upstream for its own, blocking
    server_options.body_timeout_s = 120;
    server_options.write_timeout_s = options_.upstream_timeout_s;
    server_options.max_stream_buffer_bytes = 1 << 20;
    server_options.error_answer = openai_error;
    server_options.io_threads = options_.io_threads;
    http::Handler metrics = http::HttpServer::blocking(
        [this](const HttpRequest&, const http::Peer&) { return metrics_page(); });
    // On the I/O thread: the live page's routes answer at once and a relay never blocks.
    return serving_.start_on_loop(
        server_options,
        [this, metrics = std::move(metrics)](const HttpRequest& request, const http::Peer& peer,
                                             std::shared_ptr<http::Reply> reply) {
          if (serve_live(feed_, request, *reply)) return;
          if (request.path == "/metrics" && request.method == "GET") {
            return metrics(request, peer, std::move(reply));
          }
          start_relay(relay_, request, std::move(reply));
        },
        options_.host, options_.port);
  }

  // --govern: the clock governor on `gpus`, publishing to the live page.
  Result<void> govern(const std::vector<Gpu*>& gpus) {
    std::unique_ptr<EngineScraper> scraper;
    if (options_.govern.engine_metrics != "off") {
      // Half a period at most: the decision waits for it.
      auto made = EngineScraper::create(options_.upstream, options_.govern.engine_metrics,
                                        std::min(0.5 * options_.govern.period_s, 1.0));
      if (!made) return fail(made.error());
      scraper = std::move(*made);
    }
    auto loop =
        ClockGovernorLoop::start(gpus, *meter_, options_.govern, &feed_, 0, std::move(scraper));
    if (!loop) return fail(loop.error());
    governor_ = std::move(*loop);
    return ok();
  }

  int port() const override { return serving_.port(); }
  void stop() override {
    serving_.stop();
    relay_.upstream->close_idle();  // its connections belong to the stopped loop
    if (governor_) governor_->stop();  // the clocks back to the driver's
  }
  ProxySummary summary() override { return meter_->summary(); }
  ProxyStatus status() override {
    ProxyStatus s = meter_->status();
    if (governor_) governor_->add_status(s);
    return s;
  }
  RunReport report() override { return meter_->report(); }

 private:
  HttpResponse metrics_page();

  ProxyOptions options_;
  LiveFeed feed_;  // the live page's (/zeus/); before the meter, which publishes to it
  std::unique_ptr<http::HttpClient> upstream_;  // /metrics
  std::unique_ptr<Meter> meter_;
  std::unique_ptr<ClockGovernorLoop> governor_;  // --govern; before the meter goes
  ProxyMetrics metrics_;
  RelayContext relay_;
  Serving serving_;
};

// GET /metrics: the upstream's own metrics (vLLM, TGI and SGLang serve them there), then the
// proxy's; only the proxy's when the upstream has none.
HttpResponse Proxy::metrics_page() {
  std::string text;
  Result<HttpResponse> upstream =
      upstream_->request("GET", *upstream_target(relay_.upstream_path, "/metrics"));
  if (upstream && upstream->status == 200 && upstream->content_type.rfind("text/plain", 0) == 0) {
    text = std::move(upstream->body);
    if (!text.empty() && text.back() != '\n') text += '\n';
  }
  text += metrics_.render(status());
  return HttpResponse{200, std::move(text), ProxyMetrics::kContentType, {}, false};
}

}  // namespace

Result<std::unique_ptr<LlmProxy>> LlmProxy::start(Devices& devices, ProxyOptions options) {
  if (!(options.sample_interval_s > 0)) {
    return fail(ErrorCode::kInvalidArgument, "the sampling interval must be > 0 s");
  }
  if (options.steady_state_window < 1) {
    return fail(ErrorCode::kInvalidArgument, "--steady-state-window must be at least 1 request");
  }
  auto client = upstream_client(options.upstream, options.upstream_timeout_s, 4);
  if (!client) return fail(client.error());
  auto relay_client = async_upstream_client(options.upstream, options.upstream_timeout_s,
                                            options.max_idle_upstream_connections);
  if (!relay_client) return fail(relay_client.error());
  Result<GpuEnergyReader> reader = GpuEnergyReader::create(devices, options.gpu_indices);
  if (!reader) return fail(reader.error());
  const GovernOptions& govern = options.govern;
  if (govern.enabled && (govern.governor.ttft_slo_s == 0 || govern.governor.tpot_slo_s == 0)) {
    return fail(ErrorCode::kInvalidArgument,
                "--govern needs both SLOs, e.g. --ttft-slo 2s --tpot-slo 100ms");
  }
  std::vector<Gpu*> governed;
  for (int index : reader->indices()) governed.push_back(devices.gpus[static_cast<size_t>(index)].get());
  auto meter = std::make_unique<Meter>(std::move(*reader), options.sample_interval_s,
                                       options.log_path, options.steady_state_window);
  ZEUS_TRY(meter->open_log());
  auto proxy = std::make_unique<Proxy>(options, std::move(*client), std::move(*relay_client),
                                       options.upstream.path, std::move(meter));
  if (govern.enabled) ZEUS_TRY(proxy->govern(governed));
  ZEUS_TRY(proxy->listen());
  return std::unique_ptr<LlmProxy>(std::move(proxy));
}

std::string format_joules(double j) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", j);
  return text;
}

std::string format_summary(const ProxySummary& s) {
  std::ostringstream out;
  // The Colosseum prints one summary per side: each names its model(s).
  const std::string who = s.source.empty() ? "zeus proxy: " : "zeus proxy (" + s.source + "): ";
  // "1 request, 1 output token", "2 requests, 0 output tokens".
  const auto count = [](int64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  out << who << count(s.requests, "request", "requests") << ", "
      << count(s.output_tokens, "output token", "output tokens") << "; "
      << format_joules(s.measured_j) << " J measured = " << format_joules(s.attributed_j)
      << " J attributed + " << format_joules(s.idle_j) << " J idle";
  if (s.measured_j - s.attributed_j - s.idle_j > 1e-6) {
    out << " + " << format_joules(s.measured_j - s.attributed_j - s.idle_j) << " J in flight";
  }
  out << "\n";
  if (s.output_tokens > 0) {
    out << who << format_joules(s.attributed_j / static_cast<double>(s.output_tokens))
        << " J/token attributed";
  }
  if (s.steady_state_found) {
    out << "; steady state (benchmark method) " << format_joules(s.steady_state_j_per_token)
        << " J/token";
  } else if (!s.steady_state_why.empty()) {
    out << "; steady state: " << s.steady_state_why;
  }
  out << "\n";
  return out.str();
}

}  // namespace zeus::proxy
