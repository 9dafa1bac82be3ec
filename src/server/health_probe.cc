#include "server/health_probe.h"

namespace zeus::server {

HealthProbe::HealthProbe(Store& store, HealthProbeOptions options)
    : store_(store), options_(options) {
  ping_once();
  task_ = std::make_unique<PeriodicTask>(options_.interval_s, [this] { ping_once(); });
}

HealthProbe::~HealthProbe() { task_->stop(); }

Result<void> HealthProbe::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (pinging_) {
    const double running_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - ping_started_).count();
    if (running_s > options_.stall_s) {
      return fail(ErrorCode::kUnavailable,
                  "the store has not answered a ping for " + std::to_string(static_cast<int>(running_s)) +
                      " s; check that the database server runs and is reachable");
    }
  }
  if (!error_.empty()) return fail(ErrorCode::kUnavailable, error_);
  return ok();
}

void HealthProbe::ping_once() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pinging_ = true;
    ping_started_ = std::chrono::steady_clock::now();
  }
  Result<void> alive = store_.ping();
  std::lock_guard<std::mutex> lock(mu_);
  pinging_ = false;
  error_ = alive ? std::string() : alive.error().message;
}

}  // namespace zeus::server
