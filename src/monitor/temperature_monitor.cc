#include "zeus/monitor/temperature_monitor.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "common/periodic_task.h"
#include "zeus/common/log.h"

namespace zeus {

TemperatureMonitor::TemperatureMonitor(Clock& clock, std::map<int, Gpu*> gpus,
                                       TemperatureMonitorOptions options)
    : clock_(clock), gpus_(std::move(gpus)), options_(options) {
  for (const auto& [index, gpu] : gpus_) rings_.emplace(index, Ring(options_.max_samples_per_gpu));
}

Result<std::unique_ptr<TemperatureMonitor>> TemperatureMonitor::create(
    Clock& clock, std::map<int, Gpu*> gpus, TemperatureMonitorOptions options) {
  if (gpus.empty()) {
    return fail(ErrorCode::kInvalidArgument, "a TemperatureMonitor needs at least one GPU");
  }
  if (!(std::isfinite(options.update_period_s) && options.update_period_s > 0)) {
    return fail(ErrorCode::kInvalidArgument,
                "update_period must be a positive number of seconds, got " +
                    std::to_string(options.update_period_s));
  }
  if (options.max_samples_per_gpu < 2) {
    return fail(ErrorCode::kInvalidArgument, "max_samples_per_gpu must be at least 2");
  }
  for (const auto& [index, gpu] : gpus) {
    if (auto celsius = gpu->temperature_c(); !celsius) {
      return fail(celsius.error().code,
                  "GPU " + std::to_string(index) +
                      " cannot be monitored for temperature: " + celsius.error().message);
    }
  }
  std::unique_ptr<TemperatureMonitor> monitor(
      new TemperatureMonitor(clock, std::move(gpus), options));
  monitor->sample_once();
  TemperatureMonitor* self = monitor.get();
  monitor->task_ =
      std::make_unique<PeriodicTask>(options.update_period_s, [self] { self->sample_once(); });
  return monitor;
}

TemperatureMonitor::~TemperatureMonitor() { stop(); }

void TemperatureMonitor::stop() {
  if (task_) task_->stop();
}

void TemperatureMonitor::sample_once() {
  std::lock_guard<std::mutex> sample_lock(sample_mutex_);
  for (const auto& [index, gpu] : gpus_) {
    auto celsius = gpu->temperature_c();
    const double time_s = clock_.now_s();
    bool log_failure = false;
    {
      std::lock_guard<std::mutex> data_lock(data_mutex_);
      Ring& ring = rings_.at(index);
      if (celsius) {
        ring.push({time_s, *celsius});
        continue;
      }
      log_failure = !ring.read_failed_logged;
      ring.read_failed_logged = true;
    }
    if (log_failure) {
      log_warning("temperature monitor: reading GPU " + std::to_string(index) + " failed (" +
                  celsius.error().to_string() + "); skipped until reads succeed");
    }
  }
}

std::vector<int> TemperatureMonitor::gpu_indices() const {
  std::vector<int> out;
  for (const auto& [index, gpu] : gpus_) out.push_back(index);
  return out;
}

Result<std::vector<TemperatureSample>> TemperatureMonitor::timeline(
    int gpu_index, std::optional<double> start_s, std::optional<double> end_s) const {
  ZEUS_TRY(check_monitored_gpu(gpu_index, gpu_indices()));
  std::vector<TemperatureSample> samples;
  {
    std::lock_guard<std::mutex> lock(data_mutex_);
    samples = rings_.at(gpu_index).copy();
  }
  return samples_between<&TemperatureSample::celsius>(std::move(samples), start_s, end_s);
}

Result<std::optional<int>> TemperatureMonitor::temperature_c(int gpu_index,
                                                             std::optional<double> time_s) const {
  auto samples = timeline(gpu_index);
  if (!samples) return fail(samples.error());
  if (samples->empty()) return std::optional<int>();
  if (!time_s) return std::optional<int>(samples->back().celsius);
  auto sample = closest_sample(*samples, *time_s, options_.update_period_s);
  if (!sample) return std::optional<int>();
  return std::optional<int>(sample->celsius);
}

}  // namespace zeus
