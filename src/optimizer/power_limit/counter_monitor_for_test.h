// CounterMonitor (tests only): a minimal EnergyMonitor over the GPUs' energy counters and a
// Clock, so that the optimizer's tests do not depend on the monitor layer's implementation and
// can inject failures. Windows: time = clock difference, energy = counter difference (J).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "zeus/monitor/energy_monitor.h"

namespace zeus::testing_support {

class CounterMonitor final : public EnergyMonitor {
 public:
  CounterMonitor(Devices& devices, Clock& clock, std::vector<int> gpu_indices)
      : devices_(devices), clock_(clock), gpu_indices_(std::move(gpu_indices)) {}

  Result<void> begin_window(std::string_view name, bool /*sync*/, bool restart) override {
    const std::string key(name);
    if (windows_.count(key) && !restart) {
      return fail(ErrorCode::kInvalidArgument, "window " + key + " is open");
    }
    Open open{clock_.now_s(), {}};
    for (int i : gpu_indices_) open.energy_mj[i] = *devices_.gpus[i]->total_energy_mj();
    windows_[key] = open;
    begun.push_back(key);
    return ok();
  }

  Result<Measurement> end_window(std::string_view name, bool /*sync*/, bool cancel) override {
    auto it = windows_.find(std::string(name));
    if (it == windows_.end()) return fail(ErrorCode::kNotFound, "no window " + std::string(name));
    Open open = it->second;
    windows_.erase(it);
    if (cancel) {
      cancelled.emplace_back(name);
      return Measurement{};
    }
    if (end_error) return fail(*end_error);
    Measurement m;
    m.time_s = clock_.now_s() - open.start_s;
    for (int i : gpu_indices_) {
      m.gpu_energy_j[i] =
          static_cast<double>(*devices_.gpus[i]->total_energy_mj() - open.energy_mj[i]) / 1000.0;
    }
    ended.emplace_back(name);
    return m;
  }

  bool is_window_open(std::string_view name) const override {
    return windows_.count(std::string(name)) > 0;
  }
  std::vector<std::string> reset_windows() override {
    std::vector<std::string> names;
    for (const auto& [name, open] : windows_) names.push_back(name);
    windows_.clear();
    return names;
  }
  const std::vector<int>& gpu_indices() const override { return gpu_indices_; }
  const std::vector<int>& cpu_indices() const override { return cpu_indices_; }

  // What happened, for assertions.
  std::vector<std::string> begun, ended, cancelled;
  // When set, end_window (not cancelling) fails with it.
  std::optional<Error> end_error;

 private:
  struct Open {
    double start_s;
    std::map<int, uint64_t> energy_mj;
  };
  Devices& devices_;
  Clock& clock_;
  std::vector<int> gpu_indices_;
  std::vector<int> cpu_indices_;
  std::map<std::string, Open> windows_;
};

}  // namespace zeus::testing_support
