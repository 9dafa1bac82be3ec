#include "zeus/monitor/accounting_monitor.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <iterator>
#include <limits>
#include <mutex>
#include <thread>

#include "zeus/common/log.h"

namespace zeus {
namespace {

constexpr double kJoulesPerKwh = 3.6e6;

// Charges each device's whole-window energy at the rate its parts were charged: the parts'
// energy-weighted mean rate (time-weighted where the parts read no energy), so that the amount
// always matches the energy the window reports even when counter resolution makes the parts'
// sum differ from it by a few millijoules.
void charge(std::map<int, double>& out, const std::vector<AccountedPart>& parts,
            std::map<int, double> Measurement::*field, const std::map<int, double>& whole) {
  for (const auto& [index, joules] : whole) {
    double energy = 0, energy_rate = 0, time = 0, time_rate = 0;
    for (const AccountedPart& part : parts) {
      const auto& energies = part.energy.*field;
      const auto found = energies.find(index);
      const double e = found == energies.end() ? 0.0 : found->second;
      energy += e;
      energy_rate += e * *part.value;
      time += part.end_s - part.start_s;
      time_rate += (part.end_s - part.start_s) * *part.value;
    }
    const double rate = energy > 0 ? energy_rate / energy
                        : time > 0 ? time_rate / time
                        : (parts.empty() ? 0.0 : *parts.front().value);
    out[index] = joules / kJoulesPerKwh * rate;
  }
}

double sum(const std::map<int, double>& values) {
  double total = 0;
  for (const auto& [index, v] : values) total += v;
  return total;
}

class AccountingMonitorImpl final : public AccountingMonitor {
 public:
  AccountingMonitorImpl(std::unique_ptr<EnergyMonitor> monitor, Clock& clock,
                        std::shared_ptr<IntensityProvider> provider)
      : monitor_(std::move(monitor)), clock_(clock), provider_(std::move(provider)) {}

  ~AccountingMonitorImpl() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  void start_thread() {
    thread_ = std::thread([this] { run_boundaries(); });
  }

  Result<void> begin_window(std::string_view name, bool sync) override {
    const std::string key(name);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (windows_.count(key) != 0) {
        return fail(ErrorCode::kInvalidArgument,
                    "measurement window '" + key + "' is already open");
      }
      ZEUS_TRY(monitor_->begin_window(key, sync));
      OpenWindow window;
      window.part_start_s = clock_.unix_time_s();
      if (auto part = monitor_->begin_window(part_name(key, 0), false); !part) {
        (void)monitor_->end_window(key, false, /*cancel=*/true);
        return tl::unexpected(part.error());
      }
      windows_.emplace(key, std::move(window));
    }
    wake_.notify_all();  // the thread's next boundary may be sooner now
    return ok();
  }

  Result<AccountedMeasurement> end_window(std::string_view name, bool sync) override {
    const std::string key(name);
    Measurement whole;
    std::vector<AccountedPart> parts;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto found = windows_.find(key);
      if (found == windows_.end()) {
        return fail(ErrorCode::kNotFound, "measurement window '" + key + "' is not open");
      }
      auto measured = monitor_->end_window(key, sync);
      if (!measured) return tl::unexpected(measured.error());
      whole = std::move(*measured);
      OpenWindow& window = found->second;
      auto last = monitor_->end_window(part_name(key, window.parts.size()), false);
      if (last) {
        window.parts.push_back({window.part_start_s, clock_.unix_time_s(), std::move(*last), {}});
      }
      parts = std::move(window.parts);
      windows_.erase(found);
    }
    std::vector<Result<double>> values;
    values.reserve(parts.size());
    for (const AccountedPart& part : parts) values.push_back(provider_->value_at(part.start_s));
    return account_window(whole, std::move(parts), values, provider_->unit());
  }

  void split_due_parts() override {
    std::lock_guard<std::mutex> lock(mutex_);
    split_due_parts_locked();
  }

  const std::vector<int>& gpu_indices() const override { return monitor_->gpu_indices(); }
  const std::vector<int>& cpu_indices() const override { return monitor_->cpu_indices(); }
  IntensityProvider& provider() override { return *provider_; }

 private:
  struct OpenWindow {
    double part_start_s = 0;
    std::vector<AccountedPart> parts;  // the ended ones
  };

  // The current part's inner window (one name per window: parts follow each other).
  static std::string part_name(const std::string& key, size_t /*index*/) {
    return key + "\x1f" + "part";
  }

  void split_due_parts_locked() {
    const double now = clock_.unix_time_s();
    for (auto& [key, window] : windows_) {
      if (now < provider_->next_boundary_after(window.part_start_s)) continue;
      const size_t index = window.parts.size();
      auto ended = monitor_->end_window(part_name(key, index), false);
      if (!ended) {
        log_warning("accounting: window '" + key + "': " + ended.error().message);
        continue;  // the part goes on; it is tried again at the next boundary
      }
      window.parts.push_back({window.part_start_s, now, std::move(*ended), {}});
      window.part_start_s = now;
      if (auto next = monitor_->begin_window(part_name(key, index + 1), false); !next) {
        log_warning("accounting: window '" + key + "': " + next.error().message);
      }
    }
  }

  // Sleeps until the earliest boundary of an open window's current part, then splits.
  void run_boundaries() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      double next = std::numeric_limits<double>::infinity();
      for (const auto& [key, window] : windows_) {
        next = std::min(next, provider_->next_boundary_after(window.part_start_s));
      }
      if (next == std::numeric_limits<double>::infinity()) {
        wake_.wait(lock);
        continue;
      }
      const double wait_s = next - clock_.unix_time_s();
      if (wait_s > 0) {
        wake_.wait_for(lock, std::chrono::duration<double>(std::min(wait_s, 3600.0)));
        continue;  // woken early (a new window, a stop) or on time: look again
      }
      split_due_parts_locked();
    }
  }

  std::unique_ptr<EnergyMonitor> monitor_;
  Clock& clock_;
  std::shared_ptr<IntensityProvider> provider_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::string, OpenWindow> windows_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace

double AccountedMeasurement::gpu_total() const { return sum(gpu); }

double AccountedMeasurement::total() const { return sum(gpu) + sum(cpu) + sum(dram); }

AccountedMeasurement account_window(const Measurement& whole, std::vector<AccountedPart> parts,
                                    const std::vector<Result<double>>& values,
                                    const std::string& unit) {
  AccountedMeasurement out;
  out.energy = whole;
  out.unit = unit;
  for (size_t i = 0; i < parts.size(); ++i) {
    AccountedPart& part = parts[i];
    if (i < values.size() && values[i] && !(std::isfinite(*values[i]) && *values[i] >= 0)) {
      // Whatever the provider: a value per kWh is finite and not negative.
      if (out.complete) {
        out.complete = false;
        out.unknown_reason = "the value per kWh for part " + std::to_string(i) + " is " +
                             std::to_string(*values[i]) + ", not a finite value >= 0";
      }
    } else if (i < values.size() && values[i]) {
      part.value = *values[i];
    } else if (out.complete) {
      out.complete = false;
      out.unknown_reason = i < values.size() ? values[i].error().message
                                             : "no value for part " + std::to_string(i);
    }
  }
  if (parts.empty() && out.complete) {
    out.complete = false;
    out.unknown_reason = "the window has no measured part";
  }
  if (out.complete) {
    charge(out.gpu, parts, &Measurement::gpu_energy_j, whole.gpu_energy_j);
    charge(out.cpu, parts, &Measurement::cpu_energy_j, whole.cpu_energy_j);
    charge(out.dram, parts, &Measurement::dram_energy_j, whole.dram_energy_j);
    const std::map<int, double>* amounts[] = {&out.gpu, &out.cpu, &out.dram};
    const bool finite = std::all_of(std::begin(amounts), std::end(amounts), [](const auto* m) {
      return std::all_of(m->begin(), m->end(), [](const auto& kv) { return std::isfinite(kv.second); });
    });
    if (!finite || !std::isfinite(out.total())) {
      out.gpu.clear();
      out.cpu.clear();
      out.dram.clear();
      out.complete = false;
      out.unknown_reason = "the amount is too large to be represented (the value per kWh times "
                           "the energy overflows)";
    }
  }
  out.parts = std::move(parts);
  return out;
}

Result<std::unique_ptr<AccountingMonitor>> AccountingMonitor::create(
    Devices& devices, Clock& clock, std::shared_ptr<IntensityProvider> provider,
    AccountingMonitorOptions options) {
  if (!provider) return fail(ErrorCode::kInvalidArgument, "an accounting monitor needs a provider");
  if (!options.monitor.log_file.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "an accounting monitor keeps no window log (its parts would be logged too): log "
                "with an EnergyMonitor (ZeusMonitor) beside it");
  }
  auto monitor = EnergyMonitor::create(devices, clock, std::move(options.monitor));
  if (!monitor) return tl::unexpected(monitor.error());
  auto accounting =
      std::make_unique<AccountingMonitorImpl>(std::move(*monitor), clock, std::move(provider));
  if (options.start_boundary_thread) accounting->start_thread();
  return std::unique_ptr<AccountingMonitor>(std::move(accounting));
}

}  // namespace zeus
