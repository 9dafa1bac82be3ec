// HealthProbe: the store's health as `GET /healthz` reports it, checked by a thread of its own.
// /healthz is answered on the HTTP layer's event loop, ahead of the queue of store work, so that
// it answers while every worker waits on the database; a ping there could block the whole loop
// (a PostgreSQL server that does not answer a connect). So a thread pings the store every
// `interval_s` and /healthz reads the newest outcome, which is never older than a ping: a ping
// still running after `stall_s` is reported as the store not answering.
// Thread-safety: status() from any thread.
//
//   HealthProbe probe(store, {});
//   Result<void> healthy = probe.status();
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "common/periodic_task.h"
#include "zeus/optimizer/bso_store.h"

namespace zeus::server {

struct HealthProbeOptions {
  double interval_s = 1.0;  // between pings
  double stall_s = 2.0;     // a ping running longer: "the store does not answer"
};

class HealthProbe {
 public:
  // Pings once before returning (so the first status is a real one), then every interval_s.
  HealthProbe(Store& store, HealthProbeOptions options);
  ~HealthProbe();
  HealthProbe(const HealthProbe&) = delete;
  HealthProbe& operator=(const HealthProbe&) = delete;

  Result<void> status() const;

 private:
  void ping_once();

  Store& store_;
  HealthProbeOptions options_;
  mutable std::mutex mu_;
  bool pinging_ = false;
  std::chrono::steady_clock::time_point ping_started_;
  std::string error_;  // of the newest finished ping; "" when it succeeded
  std::unique_ptr<PeriodicTask> task_;  // last: stopped first
};

}  // namespace zeus::server
