// PushedRegistry: a prometheus-cpp Registry and the Pushgateway group it is pushed to, with PUT
// (the group holds exactly what the registry holds) — the common part of the window metrics
// (zeus/exporter/metric.h). Also the checks of their settings.
// Thread-safety: registry() families are thread-safe (prometheus-cpp); push() is serialised.
//
//   auto pushed = exporter::PushedRegistry::connect(url, "train");
//   auto& family = prometheus::BuildGauge().Name("x").Register((*pushed)->registry());
//   (*pushed)->push();
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/registry.h>

#include "exporter/pushgateway.h"
#include "zeus/common/result.h"

namespace zeus::exporter {

class PushedRegistry {
 public:
  // InvalidArgument for a URL that is not http://host[:port] or an empty job.
  static Result<std::unique_ptr<PushedRegistry>> connect(const std::string& url,
                                                         const std::string& job);
  prometheus::Registry& registry() { return registry_; }
  // PUTs every family of the registry to /metrics/job/<job>.
  Result<void> push();

 private:
  PushedRegistry() = default;
  prometheus::Registry registry_;
  std::unique_ptr<Pushgateway> gateway_;
  std::mutex push_mutex_;
};

// InvalidArgument unless `buckets` is non-empty, finite and strictly increasing.
Result<void> check_buckets(const std::vector<double>& buckets, const std::string& what);
// InvalidArgument unless `period_s` is finite and > 0.
Result<void> check_update_period(double period_s);

}  // namespace zeus::exporter
