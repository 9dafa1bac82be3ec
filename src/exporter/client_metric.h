// One Prometheus sample: a ClientMetric with its labels and its value set as a counter's or a
// gauge's, per `type` (any type but Counter sets the gauge). Pure. Thread-safety: stateless.
//
//   family.metric.push_back(client_metric({{"node", "a:4938"}}, 12.5, MetricType::Gauge));
#pragma once

#include <utility>
#include <vector>

#include <prometheus/client_metric.h>
#include <prometheus/metric_type.h>

namespace zeus::exporter {

inline prometheus::ClientMetric client_metric(std::vector<prometheus::ClientMetric::Label> labels,
                                              double value, prometheus::MetricType type) {
  prometheus::ClientMetric metric;
  metric.label = std::move(labels);
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  return metric;
}

}  // namespace zeus::exporter
