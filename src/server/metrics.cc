// ServerMetrics over prometheus-cpp (server/metrics.h).
#include "server/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <mutex>

namespace zeus::server {

struct ServerMetrics::Impl {
  prometheus::Registry registry;
  prometheus::Family<prometheus::Counter>& requests =
      prometheus::BuildCounter()
          .Name("zeus_bso_http_requests_total")
          .Help("HTTP requests answered, by route template, method and status")
          .Register(registry);
  prometheus::Family<prometheus::Histogram>& latency =
      prometheus::BuildHistogram()
          .Name("zeus_bso_http_request_duration_seconds")
          .Help("Time to answer a request (s), by route template")
          .Register(registry);
  prometheus::Counter& dispatched = prometheus::BuildCounter()
                                        .Name("zeus_bso_trials_dispatched_total")
                                        .Help("Trials dispatched by this process")
                                        .Register(registry)
                                        .Add({});
  prometheus::Family<prometheus::Counter>& reports =
      prometheus::BuildCounter()
          .Name("zeus_bso_reports_total")
          .Help("Training reports answered by this process, by decision (continue, stop)")
          .Register(registry);
  prometheus::Counter& expired = prometheus::BuildCounter()
                                     .Name("zeus_bso_trials_expired_total")
                                     .Help("Dispatched trials this process marked failed after "
                                           "the trial timeout")
                                     .Register(registry)
                                     .Add({});
  prometheus::Family<prometheus::Gauge>& jobs = prometheus::BuildGauge()
                                                    .Name("zeus_bso_jobs")
                                                    .Help("Jobs registered in the store")
                                                    .Register(registry);
  prometheus::Family<prometheus::Gauge>& trials =
      prometheus::BuildGauge()
          .Name("zeus_bso_trials")
          .Help("Trials in the store, by status (dispatched, converged, not_converged, failed)")
          .Register(registry);
  prometheus::Family<prometheus::Gauge>& energy =
      prometheus::BuildGauge()
          .Name("zeus_bso_reported_energy_joules")
          .Help("Energy reported (J): sum over trials of the last cumulative report")
          .Register(registry);
  prometheus::Family<prometheus::Gauge>& time =
      prometheus::BuildGauge()
          .Name("zeus_bso_reported_time_seconds")
          .Help("Training time reported (s): sum over trials of the last cumulative report")
          .Register(registry);
  std::mutex render_mu;
};

namespace {

// 100 µs to ~13 s, ×2 per bucket.
prometheus::Histogram::BucketBoundaries latency_buckets_s() {
  prometheus::Histogram::BucketBoundaries b;
  for (double s = 1e-4; s < 20; s *= 2) b.push_back(s);
  return b;
}

}  // namespace

ServerMetrics::ServerMetrics() : impl_(std::make_unique<Impl>()) {}
ServerMetrics::~ServerMetrics() = default;

void ServerMetrics::observe_request(std::string_view route, std::string_view method, int status,
                                    double duration_s) {
  count_request(route, method, status);
  static const prometheus::Histogram::BucketBoundaries buckets = latency_buckets_s();
  impl_->latency.Add({{"route", std::string(route)}}, buckets).Observe(duration_s);
}

void ServerMetrics::count_request(std::string_view route, std::string_view method, int status) {
  impl_->requests
      .Add({{"route", std::string(route)},
            {"method", std::string(method)},
            {"status", std::to_string(status)}})
      .Increment();
}

void ServerMetrics::count_dispatch() { impl_->dispatched.Increment(); }

void ServerMetrics::count_report(bool stop_train) {
  impl_->reports.Add({{"decision", stop_train ? "stop" : "continue"}}).Increment();
}

void ServerMetrics::count_expired(int trials) {
  if (trials > 0) impl_->expired.Increment(trials);
}

std::string ServerMetrics::render(const StoreTotals& totals) {
  std::lock_guard<std::mutex> lock(impl_->render_mu);
  impl_->jobs.Add({}).Set(totals.jobs);
  for (TrialStatus s : {TrialStatus::kDispatched, TrialStatus::kConverged,
                        TrialStatus::kNotConverged, TrialStatus::kFailed}) {
    impl_->trials.Add({{"status", std::string(trial_status_name(s))}})
        .Set(totals.trials_by_status[static_cast<size_t>(s)]);
  }
  impl_->energy.Add({}).Set(totals.energy_j);
  impl_->time.Add({}).Set(totals.time_s);
  return prometheus::TextSerializer().Serialize(impl_->registry.Collect());
}

}  // namespace zeus::server
