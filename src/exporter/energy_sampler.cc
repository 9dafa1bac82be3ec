// EnergySampler: reads the devices on its own thread and publishes immutable snapshots.
#include "zeus/exporter/exporter.h"

#include <chrono>

#include "zeus/common/log.h"

namespace zeus {

EnergySampler::EnergySampler(Devices& devices, Clock& clock)
    : devices_(devices),
      clock_(clock),
      latest_(std::make_shared<const EnergySnapshot>()),
      integrated_j_(devices.gpus.size(), 0.0),
      last_power_(devices.gpus.size()) {}

EnergySampler::~EnergySampler() { stop(); }

void EnergySampler::warn_once(const std::string& key, const std::string& message) {
  if (warned_.insert(key).second)
    log_warning("zeus exporter: " + message + " (left out of the metrics)");
}

void EnergySampler::sample_once() {
  auto snapshot = std::make_shared<EnergySnapshot>();
  snapshot->sequence = latest()->sequence + 1;
  snapshot->time_s = clock_.now_s();
  for (size_t i = 0; i < devices_.gpus.size(); ++i) {
    Gpu& gpu = *devices_.gpus[i];
    GpuEnergyReading reading;
    reading.gpu = static_cast<int>(i);
    reading.uuid = gpu.uuid();
    reading.model = gpu.name();
    const std::string id = "GPU " + std::to_string(i);
    if (auto power = gpu.instant_power_mw()) {
      reading.power_w = *power / 1000.0;
    } else {
      warn_once(id + " power", id + " power: " + power.error().message);
    }
    if (auto limit = gpu.power_limit_mw()) {
      reading.power_limit_w = *limit / 1000.0;
    } else {
      warn_once(id + " limit", id + " power limit: " + limit.error().message);
    }
    if (gpu.has_energy_counter()) {
      if (auto energy = gpu.total_energy_mj()) {
        reading.energy_j = *energy / 1000.0;
      } else {
        warn_once(id + " energy", id + " energy: " + energy.error().message);
      }
    } else if (reading.power_w) {
      // No counter: integrate power (trapezoid between samples) since the exporter started.
      if (last_power_[i]) {
        const auto [t0_s, p0_w] = *last_power_[i];
        integrated_j_[i] +=
            0.5 * (p0_w + *reading.power_w) * std::max(0.0, snapshot->time_s - t0_s);
      }
      last_power_[i] = std::make_pair(snapshot->time_s, *reading.power_w);
      reading.energy_j = integrated_j_[i];
    }
    snapshot->gpus.push_back(std::move(reading));
  }
  for (auto& cpu : devices_.cpus) {
    const std::string id = "CPU package " + std::to_string(cpu->index());
    if (auto energy = cpu->package_energy_uj()) {
      snapshot->cpus.push_back({cpu->index(), "package", *energy / 1e6});
    } else {
      warn_once(id, id + " energy: " + energy.error().message);
    }
    if (cpu->has_dram()) {
      if (auto energy = cpu->dram_energy_uj()) {
        snapshot->cpus.push_back({cpu->index(), "dram", *energy / 1e6});
      } else {
        warn_once(id + " dram", id + " DRAM energy: " + energy.error().message);
      }
    }
  }
  std::lock_guard<std::mutex> lock(snapshot_mutex_);
  latest_ = std::move(snapshot);
}

std::shared_ptr<const EnergySnapshot> EnergySampler::latest() const {
  std::lock_guard<std::mutex> lock(snapshot_mutex_);
  return latest_;
}

Result<void> EnergySampler::start(double interval_s) {
  if (!(interval_s > 0.0) || interval_s > 3600.0) {
    return fail(ErrorCode::kInvalidArgument, "the sampling interval must be in (0, 3600] s");
  }
  ZEUS_CHECK(!thread_.joinable(), "EnergySampler::start called twice");
  sample_once();
  thread_ = std::thread([this, interval_s] {
    const auto period = std::chrono::duration<double>(interval_s);
    auto next = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(stop_mutex_);
    while (true) {
      next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(period);
      if (stop_signal_.wait_until(lock, next, [this] { return stopping_; })) return;
      lock.unlock();
      sample_once();
      lock.lock();
    }
  });
  return ok();
}

void EnergySampler::stop() {
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stopping_ = true;
  }
  stop_signal_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace zeus
