// EnergyCumulativeCounter (zeus/exporter/metric.h): per open window, a thread adds each update
// period's
// energy to the window's counters and pushes.
#include <prometheus/counter.h>

#include <map>
#include <mutex>

#include "common/periodic_task.h"
#include "exporter/pushed_registry.h"
#include "exporter/window_monitor.h"
#include "zeus/common/log.h"
#include "zeus/exporter/metric.h"

namespace zeus {
namespace {

using prometheus::Counter;
using prometheus::Family;

const std::string kWindowPrefix = "__EnergyCumulativeCounter_";

class EnergyCumulativeCounterImpl final : public EnergyCumulativeCounter {
 public:
  EnergyCumulativeCounterImpl(std::unique_ptr<EnergyMonitor> monitor,
                              std::unique_ptr<exporter::PushedRegistry> pushed, double period_s)
      : monitor_(std::move(monitor)), pushed_(std::move(pushed)), period_s_(period_s) {
    auto build = [&](const char* name, const char* help) -> Family<Counter>& {
      return prometheus::BuildCounter().Name(name).Help(help).Register(pushed_->registry());
    };
    if (!monitor_->gpu_indices().empty()) {
      gpu_ = &build("energy_monitor_gpu_energy_joules_total", "GPU energy consumption");
    }
    if (!monitor_->cpu_indices().empty()) {
      cpu_ = &build("energy_monitor_cpu_energy_joules_total", "CPU energy consumption");
      dram_ = &build("energy_monitor_dram_energy_joules_total", "DRAM energy consumption");
    }
  }

  ~EnergyCumulativeCounterImpl() override {
    while (!windows_.empty()) {
      const std::string name = windows_.begin()->first;
      auto ended = end_window(name, false);
      if (!ended) log_warning("EnergyCumulativeCounter: " + ended.error().message);
    }
  }

  Result<void> begin_window(std::string_view name_view, bool sync) override {
    const std::string name(name_view);
    if (windows_.count(name) != 0) {
      return fail(ErrorCode::kInvalidArgument,
                  "EnergyCumulativeCounter window '" + name + "' is open already: end it first");
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ZEUS_TRY(monitor_->begin_window(kWindowPrefix + name, sync));
      add(name, zero());  // the window's series start at 0
    }
    auto pushed = pushed_->push();
    if (!pushed) {
      std::lock_guard<std::mutex> lock(mutex_);
      (void)monitor_->end_window(kWindowPrefix + name, false, /*cancel=*/true);
      return fail(pushed.error());
    }
    windows_[name] = std::make_unique<PeriodicTask>(period_s_, [this, name] {
      auto updated = update(name, false);
      if (updated) updated = pushed_->push();
      if (!updated) log_warning("EnergyCumulativeCounter: " + updated.error().message);
    });
    return ok();
  }

  Result<void> end_window(std::string_view name_view, bool sync) override {
    const std::string name(name_view);
    auto window = windows_.find(name);
    if (window == windows_.end()) {
      return fail(ErrorCode::kNotFound,
                  "no EnergyCumulativeCounter window '" + name + "' is open: begin it first");
    }
    window->second.reset();  // stops and joins the thread
    windows_.erase(window);
    Result<void> updated = update(name, sync, /*last=*/true);
    if (!updated) return updated;
    return pushed_->push();
  }

  double gpu_energy_j(std::string_view name, int index) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto window = gpu_totals_j_.find(std::string(name));
    if (window == gpu_totals_j_.end()) return 0.0;
    auto total = window->second.find(index);
    return total == window->second.end() ? 0.0 : total->second;
  }

  const std::vector<int>& gpu_indices() const override { return monitor_->gpu_indices(); }
  const std::vector<int>& cpu_indices() const override { return monitor_->cpu_indices(); }

 private:
  // Ends the monitor's window, adds its energy and (unless last) begins it again.
  Result<void> update(const std::string& name, bool sync, bool last = false) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto measured = monitor_->end_window(kWindowPrefix + name, sync);
    if (!measured) return fail(measured.error());
    add(name, *measured);
    if (!last) ZEUS_TRY(monitor_->begin_window(kWindowPrefix + name, false));
    return ok();
  }

  // Caller holds mutex_.
  void add(const std::string& name, const Measurement& m) {
    auto add_kind = [&](Family<Counter>* family, const std::map<int, double>& energy_j) {
      if (family == nullptr) return;
      for (const auto& [index, joules] : energy_j) {
        family->Add({{"window", name}, {"index", std::to_string(index)}}).Increment(joules);
      }
    };
    add_kind(gpu_, m.gpu_energy_j);
    add_kind(cpu_, m.cpu_energy_j);
    add_kind(dram_, m.dram_energy_j);
    for (const auto& [index, joules] : m.gpu_energy_j) gpu_totals_j_[name][index] += joules;
  }

  // 0 J for every GPU and CPU package (the series a window starts with).
  Measurement zero() const {
    Measurement m;
    for (int index : monitor_->gpu_indices()) m.gpu_energy_j[index] = 0.0;
    for (int index : monitor_->cpu_indices()) m.cpu_energy_j[index] = 0.0;
    return m;
  }

  std::unique_ptr<EnergyMonitor> monitor_;  // guarded by mutex_
  std::unique_ptr<exporter::PushedRegistry> pushed_;
  double period_s_;
  Family<Counter>* gpu_ = nullptr;
  Family<Counter>* cpu_ = nullptr;
  Family<Counter>* dram_ = nullptr;
  mutable std::mutex mutex_;
  std::map<std::string, std::map<int, double>> gpu_totals_j_;     // guarded by mutex_
  std::map<std::string, std::unique_ptr<PeriodicTask>> windows_;  // the user's thread only
};

}  // namespace

Result<std::unique_ptr<EnergyCumulativeCounter>> EnergyCumulativeCounter::create(
    Devices& devices, Clock& clock, EnergyCumulativeCounterOptions options) {
  ZEUS_TRY(exporter::check_update_period(options.update_period_s));
  auto pushed = exporter::PushedRegistry::connect(options.pushgateway_url, options.job);
  if (!pushed) return fail(pushed.error());
  auto monitor = exporter::window_monitor(devices, clock, options.gpu_indices, options.cpu_indices,
                                          options.sync);
  if (!monitor) return fail(monitor.error());
  return std::unique_ptr<EnergyCumulativeCounter>(new EnergyCumulativeCounterImpl(
      std::move(*monitor), std::move(*pushed), options.update_period_s));
}

}  // namespace zeus
