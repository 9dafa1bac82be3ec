// ProxyMetrics over prometheus-cpp (proxy/proxy_metrics.h).
#include "proxy/proxy_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <mutex>
#include <set>

#include "proxy/request_fields.h"

namespace zeus::proxy {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// Joules per request: from a short answer on a small GPU to a long reasoning trace on eight.
const prometheus::Histogram::BucketBoundaries kRequestBuckets = {
    0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000};
// Joules per output token: the leaderboard's range is about 0.01-10 J/token.
const prometheus::Histogram::BucketBoundaries kTokenBuckets = {
    0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20};

MetricFamily scalar(const char* name, const char* help, MetricType type, double value) {
  ClientMetric metric;
  if (type == MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  return MetricFamily{name, help, type, {std::move(metric)}};
}

}  // namespace

struct ProxyMetrics::Impl {
  std::mutex mutex;  // guards models (prometheus-cpp's families are thread-safe)
  std::set<std::string> models;
  prometheus::Registry registry;
  prometheus::Family<prometheus::Histogram>& request_energy =
      prometheus::BuildHistogram()
          .Name("zeus_proxy_request_energy_joules")
          .Help("GPU energy attributed to each finished request (J), by model")
          .Register(registry);
  prometheus::Family<prometheus::Histogram>& token_energy =
      prometheus::BuildHistogram()
          .Name("zeus_proxy_output_token_energy_joules")
          .Help("Each finished request's energy per output token (J/token), by model")
          .Register(registry);
  prometheus::Family<prometheus::Counter>& tokens =
      prometheus::BuildCounter()
          .Name("zeus_proxy_output_tokens_total")
          .Help("Output tokens of finished requests, by model")
          .Register(registry);

  std::string label(const std::string& given) {
    if (given.empty()) return "unknown";
    const std::string model = clip_label(given);  // a label's bytes are bounded too
    std::lock_guard<std::mutex> lock(mutex);
    if (models.count(model) || models.size() < kMaxModels) {
      models.insert(model);
      return model;
    }
    return "other";
  }
};

ProxyMetrics::ProxyMetrics() : impl_(std::make_unique<Impl>()) {}
ProxyMetrics::~ProxyMetrics() = default;

void ProxyMetrics::observe(const std::string& model, double energy_j, int64_t output_tokens) {
  const prometheus::Labels labels = {{"model", impl_->label(model)}};
  impl_->request_energy.Add(labels, kRequestBuckets).Observe(energy_j);
  prometheus::Counter& tokens = impl_->tokens.Add(labels);
  if (output_tokens > 0) {
    tokens.Increment(static_cast<double>(output_tokens));
    impl_->token_energy.Add(labels, kTokenBuckets)
        .Observe(energy_j / static_cast<double>(output_tokens));
  }
}

std::string ProxyMetrics::render(const ProxyStatus& status) {
  std::vector<MetricFamily> families = impl_->registry.Collect();
  families.push_back(scalar("zeus_proxy_measured_energy_joules_total",
                            "GPU energy measured since the proxy started (J)", MetricType::Counter,
                            status.measured_j));
  families.push_back(scalar("zeus_proxy_attributed_energy_joules_total",
                            "GPU energy attributed to finished requests (J)", MetricType::Counter,
                            status.attributed_j));
  families.push_back(scalar("zeus_proxy_idle_energy_joules_total",
                            "GPU energy while no request was in flight (J), never attributed",
                            MetricType::Counter, status.idle_j));
  families.push_back(scalar("zeus_proxy_requests_in_flight", "Requests being relayed now",
                            MetricType::Gauge, static_cast<double>(status.in_flight)));
  MetricFamily power{"zeus_proxy_gpu_power_watts",
                     "Mean power of each measured GPU over the last interval (W)",
                     MetricType::Gauge,
                     {}};
  for (size_t i = 0; i < status.gpu_power_w.size() && i < status.gpu_indices.size(); ++i) {
    ClientMetric metric;
    metric.label = {{"gpu", std::to_string(status.gpu_indices[i])}};
    metric.gauge.value = status.gpu_power_w[i];
    power.metric.push_back(std::move(metric));
  }
  families.push_back(std::move(power));
  if (status.governing) {  // --govern
    families.push_back(scalar("zeus_proxy_governor_clock_mhz",
                              "SM clock the governor chose for the measured GPUs (MHz)",
                              MetricType::Gauge, status.clock_mhz));
    families.push_back(scalar("zeus_proxy_governor_max_clock_mhz",
                              "The highest SM clock the governor may choose (MHz)",
                              MetricType::Gauge, status.max_clock_mhz));
    families.push_back(scalar("zeus_proxy_governor_clock_changes_total",
                              "Clock changes the governor made", MetricType::Counter,
                              static_cast<double>(status.clock_changes)));
    families.push_back(scalar("zeus_proxy_governor_slo_attainment_ratio",
                              "Share of streamed requests within both latency SLOs (0-1)",
                              MetricType::Gauge, status.slo_attainment));
    families.push_back(scalar("zeus_proxy_governor_slo_requests_total",
                              "Streamed requests counted in the SLO attainment",
                              MetricType::Counter, static_cast<double>(status.slo_requests)));
    families.push_back(scalar("zeus_proxy_governor_energy_saved_joules_total",
                              "An ESTIMATE, not a measurement: GPU energy (J) the maximum clock "
                              "would have spent beyond what was measured, from the serving "
                              "profile (or the parametric model); measure a run without --govern "
                              "to know",
                              MetricType::Counter, status.energy_saved_j));
  }
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace zeus::proxy
