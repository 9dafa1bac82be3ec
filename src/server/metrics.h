// ServerMetrics: the batch-size service's Prometheus metrics (GET /metrics), over prometheus-cpp.
//
// Per process: requests by route template, method and status; request latency histogram by
// route (s); trials dispatched; reports by decision; trials expired. Store-wide gauges,
// set from StoreTotals at each scrape (so every replica on a shared database reports the same):
// jobs, trials by status, and the energy (J) and time (s) reported — the sum over trials of each
// trial's last cumulative report. Thread-safety: every method may be called from any thread.
// Failure: none (prometheus-cpp aborts only on invalid metric names, which are constants here).
//
//   ServerMetrics metrics;
//   metrics.observe_request("/report", "POST", 200, 0.0004);
//   std::string text = metrics.render(totals);   // text/plain; version=0.0.4
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "zeus/optimizer/bso_types.h"

namespace zeus::server {

// What the store holds, summed over all jobs.
struct StoreTotals {
  int jobs = 0;
  std::array<int, 4> trials_by_status{};  // indexed by TrialStatus
  double energy_j = 0.0;
  double time_s = 0.0;
};

class ServerMetrics {
 public:
  ServerMetrics();
  ~ServerMetrics();
  ServerMetrics(const ServerMetrics&) = delete;
  ServerMetrics& operator=(const ServerMetrics&) = delete;

  // One answered request. route is the route template ("/jobs/{job_id}"), never the raw path.
  void observe_request(std::string_view route, std::string_view method, int status,
                       double duration_s);
  // A request answered before routing (413, malformed HTTP): counted, no latency.
  void count_request(std::string_view route, std::string_view method, int status);
  void count_dispatch();
  void count_report(bool stop_train);
  void count_expired(int trials);

  // The text exposition of every metric, with the store-wide gauges set from totals.
  std::string render(const StoreTotals& totals);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zeus::server
