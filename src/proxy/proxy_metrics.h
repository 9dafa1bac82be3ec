// ProxyMetrics: the Prometheus metrics of `zeus proxy` (GET /metrics), over prometheus-cpp.
//
// Per finished request, by model: histograms of its joules (zeus_proxy_request_energy_joules)
// and of its joules per output token (zeus_proxy_output_token_energy_joules, requests with at
// least one token), and its output tokens (zeus_proxy_output_tokens_total). From the meter at
// each scrape (no device access): the energy measured on the GPUs, attributed to requests and
// idle (zeus_proxy_{measured,attributed,idle}_energy_joules_total), requests in flight, and each
// GPU's power (zeus_proxy_gpu_power_watts{gpu}). Model labels come from clients' bodies: after
// kMaxModels distinct names, further ones count as "other" (a client cannot grow the series
// without bound); a request without one is "unknown".
// Thread-safety: every method from any thread. Failure: none.
//
//   ProxyMetrics metrics;
//   metrics.observe("llama", 12.5, 100);
//   std::string text = metrics.render(meter.status());  // text/plain; version=0.0.4
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "proxy/proxy.h"

namespace zeus::proxy {

class ProxyMetrics {
 public:
  static constexpr size_t kMaxModels = 64;
  static constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

  ProxyMetrics();
  ~ProxyMetrics();
  ProxyMetrics(const ProxyMetrics&) = delete;
  ProxyMetrics& operator=(const ProxyMetrics&) = delete;

  // One finished request.
  void observe(const std::string& model, double energy_j, int64_t output_tokens);
  // The text exposition of every metric, the meter's counters from `status`.
  std::string render(const ProxyStatus& status);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zeus::proxy
