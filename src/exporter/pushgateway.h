// Pushgateway: pushes metric families to a Prometheus Pushgateway over the project's HTTP layer,
// in the text format prometheus-cpp's TextSerializer writes (prometheus-cpp's own push library
// would bring libcurl as a second HTTP client).
//
// A push goes to /metrics/job/<job>[/<label>/<value>...] (each part URL-encoded). PUT replaces
// every metric of that group (what Python's prometheus_client.push_to_gateway does); POST
// replaces only the metric names it carries. Families without samples are left out.
// Thread-safety: push() may be called from many threads at once.
// Failure: connect() answers InvalidArgument naming `what` for a URL that is not
// http(s)://host[:port][/] or an empty job (https: the certificate checked against the system's
// CAs plus ZEUS_CA_FILE; without a port, 443 for https and 9091 for http); push() answers Unavailable when the gateway cannot be
// reached or answers other than 2xx (the message carries the start of its answer).
//
//   auto gateway = exporter::Pushgateway::connect("http://127.0.0.1:9091", "train", {}, "--push");
//   (*gateway)->push("PUT", registry.Collect());
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <prometheus/metric_family.h>

#include "zeus/common/result.h"

namespace zeus::http {
class HttpClient;
}

namespace zeus::exporter {

class Pushgateway {
 public:
  using Grouping = std::vector<std::pair<std::string, std::string>>;

  // `what` names the setting the URL came from in error messages ("--push", "pushgateway_url").
  static Result<std::unique_ptr<Pushgateway>> connect(const std::string& url,
                                                      const std::string& job,
                                                      const Grouping& grouping,
                                                      const std::string& what,
                                                      double timeout_s = 10.0);
  ~Pushgateway();
  Pushgateway(const Pushgateway&) = delete;
  Pushgateway& operator=(const Pushgateway&) = delete;

  // Sends `families` with `method` ("PUT" or "POST") to the group's path.
  Result<void> push(std::string_view method,
                    const std::vector<prometheus::MetricFamily>& families) const;
  // The URL given to connect().
  const std::string& url() const { return url_; }
  // The group's path, e.g. /metrics/job/train.
  const std::string& path() const { return path_; }

 private:
  Pushgateway() = default;
  std::unique_ptr<http::HttpClient> client_;
  std::string url_;
  std::string path_;
};

}  // namespace zeus::exporter
