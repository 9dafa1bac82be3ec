// TemperatureMonitor: the temperature timeline of some GPUs, read by one background thread
// every update period (default 1 s, as Zeus), deduplicated and kept in a ring per GPU.
//
// Units: seconds on the Clock, degrees Celsius. Thread-safety: every method may be called from
// any thread while the thread runs. Failure: create() fails when a GPU cannot report its
// temperature (the message says which); a read failing later is skipped (logged once per GPU);
// queries return NotFound for a GPU not monitored, InvalidArgument for start > end.
//
//   auto monitor = zeus::TemperatureMonitor::create(clock, {{0, gpu}}, {.update_period_s = 0.5});
//   auto timeline = (*monitor)->timeline(0);  // [(time_s, celsius), ...]
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "zeus/common/clock.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"
#include "zeus/monitor/sample_ring.h"

namespace zeus {

class PeriodicTask;

struct TemperatureSample {
  double time_s = 0.0;
  int celsius = 0;
};

struct TemperatureMonitorOptions {
  double update_period_s = 1.0;
  // Samples kept per GPU (after deduplication); the oldest are dropped first. At least 2.
  size_t max_samples_per_gpu = 65536;
};

class TemperatureMonitor {
 public:
  // Reads every GPU once (failing if one cannot report its temperature) and starts the thread.
  // The Gpus (keyed by the caller's index) and the clock must outlive the monitor.
  static Result<std::unique_ptr<TemperatureMonitor>> create(Clock& clock, std::map<int, Gpu*> gpus,
                                                            TemperatureMonitorOptions options = {});
  ~TemperatureMonitor();
  TemperatureMonitor(const TemperatureMonitor&) = delete;
  TemperatureMonitor& operator=(const TemperatureMonitor&) = delete;

  // Stops the thread; the samples stay queryable.
  void stop();
  // Reads every GPU once now.
  void sample_once();

  std::vector<int> gpu_indices() const;
  double update_period_s() const { return options_.update_period_s; }

  // The samples of a GPU with time in [start_s, end_s] (nullopt: unbounded), oldest first.
  Result<std::vector<TemperatureSample>> timeline(int gpu_index,
                                                  std::optional<double> start_s = std::nullopt,
                                                  std::optional<double> end_s = std::nullopt) const;
  // The sample closest to `time_s` (the newest when nullopt); nullopt without samples or for
  // a time outside [first sample, newest sample + update period].
  Result<std::optional<int>> temperature_c(int gpu_index,
                                           std::optional<double> time_s = std::nullopt) const;

 private:
  using Ring = SampleRing<TemperatureSample, &TemperatureSample::celsius>;
  TemperatureMonitor(Clock& clock, std::map<int, Gpu*> gpus, TemperatureMonitorOptions options);

  Clock& clock_;
  std::map<int, Gpu*> gpus_;
  TemperatureMonitorOptions options_;
  std::mutex sample_mutex_;        // one reader at a time, so samples stay time-ordered
  mutable std::mutex data_mutex_;  // guards rings_
  std::map<int, Ring> rings_;
  std::unique_ptr<PeriodicTask> task_;
};

}  // namespace zeus
