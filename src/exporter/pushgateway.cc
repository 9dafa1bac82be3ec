#include "exporter/pushgateway.h"

#include <prometheus/text_serializer.h>
#include "http/client.h"
#include "http/uri.h"
#include "http/url.h"
#include "zeus/common/redact_url.h"

namespace zeus::exporter {
namespace {

constexpr const char* kTextFormat = "text/plain; version=0.0.4; charset=utf-8";

std::string encoded(const std::string& part) { return http::percent_encode(part); }

}  // namespace

Result<std::unique_ptr<Pushgateway>> Pushgateway::connect(const std::string& url,
                                                          const std::string& job,
                                                          const Grouping& grouping,
                                                          const std::string& what,
                                                          double timeout_s) {
  const std::string invalid = what + " '" + redact_url(url) +
                              "' is not a Pushgateway URL like http://host:9091 (or https://)";
  Result<http::HttpUrl> u = http::parse_http_url(url);
  if (!u) return fail(ErrorCode::kInvalidArgument, invalid + " (it " + u.error().message + ")");
  if ((u->scheme != "http" && u->scheme != "https") || (!u->path.empty() && u->path != "/")) {
    return fail(ErrorCode::kInvalidArgument, invalid);
  }
  if (job.empty()) {
    return fail(ErrorCode::kInvalidArgument, "the Pushgateway job name is empty: give a job name");
  }
  std::string path = "/metrics/job/" + encoded(job);
  for (const auto& [label, value] : grouping) {
    if (label.empty() || value.empty()) {
      return fail(ErrorCode::kInvalidArgument,
                  "a Pushgateway grouping label and its value must not be empty");
    }
    path += "/" + encoded(label) + "/" + encoded(value);
  }
  http::ClientOptions options;
  options.timeout_s = timeout_s;
  // https without a port: a TLS front of the Pushgateway on 443 (u->port); http: its own 9091.
  const int port = u->port_given || u->scheme == "https" ? u->port : 9091;
  auto client = http::HttpClient::for_scheme(u->scheme, u->host, port, options);
  if (!client) return fail(client.error());
  std::unique_ptr<Pushgateway> gateway(new Pushgateway());
  gateway->client_ = std::move(*client);
  gateway->url_ = url;
  gateway->path_ = std::move(path);
  return gateway;
}

Pushgateway::~Pushgateway() = default;

Result<void> Pushgateway::push(std::string_view method,
                               const std::vector<prometheus::MetricFamily>& families) const {
  std::vector<prometheus::MetricFamily> with_samples;
  for (const auto& family : families) {
    if (!family.metric.empty()) with_samples.push_back(family);
  }
  const std::string body = prometheus::TextSerializer().Serialize(with_samples);
  Result<http::HttpResponse> answer =
      client_->request(method, path_, body, {{"Content-Type", kTextFormat}});
  if (!answer) {
    return fail(ErrorCode::kUnavailable,
                "cannot push to the Pushgateway at " + url_ + ": " + answer.error().message);
  }
  if (answer->status < 200 || answer->status >= 300) {
    return fail(ErrorCode::kUnavailable, "the Pushgateway at " + url_ + " answered HTTP " +
                                             std::to_string(answer->status) + ": " +
                                             answer->body.substr(0, 200));
  }
  return ok();
}

}  // namespace zeus::exporter
