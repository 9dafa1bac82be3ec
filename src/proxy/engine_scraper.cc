// EngineScraper (engine_scraper.h).
#include "proxy/engine_scraper.h"

#include "zeus/common/redact_url.h"

namespace zeus::proxy {

Result<std::unique_ptr<EngineScraper>> EngineScraper::create(const UpstreamUrl& upstream,
                                                             const std::string& setting,
                                                             double timeout_s) {
  UpstreamUrl from = upstream;
  std::string target;
  if (setting == "auto") {
    auto t = upstream_target(upstream.path, "/metrics");
    if (!t) return fail(t.error());
    target = *t;
  } else {
    auto url = parse_upstream_url(setting, "--engine-metrics");
    if (!url) {
      return fail(ErrorCode::kInvalidArgument,
                  url.error().message + " (--engine-metrics takes auto, off or the URL of the "
                                        "engine's Prometheus page, e.g. http://127.0.0.1:30001/metrics)");
    }
    from = *url;
    target = from.path.empty() ? "/metrics" : from.path;
  }
  http::ClientOptions options;
  options.timeout_s = timeout_s;
  options.max_body_bytes = kEngineMetricsMaxBytes;
  options.max_idle_connections = 1;
  options.retry_on_stale_connection = true;  // a GET
  auto client = http::HttpClient::for_scheme(from.url.scheme, from.url.host, from.url.port, options);
  if (!client) return fail(client.error());
  const std::string where =
      setting == "auto" ? redact_url(upstream.text) + " (its " + target + ")" : redact_url(setting);
  return std::unique_ptr<EngineScraper>(new EngineScraper(std::move(*client), target, where));
}

Result<EngineSignals> EngineScraper::scrape() {
  Result<http::HttpResponse> answer = client_->request("GET", target_);
  if (!answer) return fail(answer.error().code, where_ + ": " + answer.error().message);
  if (answer->status != 200) {
    return fail(ErrorCode::kNotFound, where_ + " answered " + std::to_string(answer->status));
  }
  const std::string& type = answer->content_type;
  if (type.rfind("text/plain", 0) != 0 && type.rfind("application/openmetrics-text", 0) != 0) {
    return fail(ErrorCode::kNotFound,
                where_ + " answered " + (type.empty() ? "no content type" : type) +
                    ", not Prometheus text");
  }
  auto signals = read_engine_signals(answer->body);
  if (!signals) return fail(signals.error().code, where_ + ": " + signals.error().message);
  return signals;
}

}  // namespace zeus::proxy
