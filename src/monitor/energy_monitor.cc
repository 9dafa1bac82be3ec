#include "zeus/monitor/energy_monitor.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>

#include "monitor/warning_throttle.h"
#include "monitor/window_log.h"
#include "zeus/common/log.h"
#include "zeus/monitor/power_sampler.h"

namespace zeus {

double Measurement::total_energy_j() const {
  double total_j = 0.0;
  for (const auto& [index, energy_j] : gpu_energy_j) total_j += energy_j;
  return total_j;
}

double Measurement::total_energy_with_cpu_j() const {
  double total_j = total_energy_j();
  for (const auto& [index, energy_j] : cpu_energy_j) total_j += energy_j;
  for (const auto& [index, energy_j] : dram_energy_j) total_j += energy_j;
  return total_j;
}

namespace {

// How often a warning that may repeat on every window is printed again, as a summary.
constexpr double kRepeatedWarningInterval_s = 60.0;

// What each kind of user sets to approximate a 0 J window (named by the 0 J warning).
constexpr const char* kApproximateZeroOptions =
    "--approx-zero (zeus measure), approx_instant_energy=True (Python ZeusMonitor) or "
    "EnergyMonitorOptions::approximate_zero_energy (C++)";

struct MonitoredGpu {
  int index;
  Gpu* gpu;
  bool sampled;  // no energy counter: measured by the PowerSampler
};

struct MonitoredCpu {
  int index;
  Cpu* cpu;
  bool dram;
};

// Counter values at one edge of a window, aligned with the monitored GPUs and CPUs.
struct Reading {
  // The clock just before and just after the counters were read: a window runs from its
  // begin's before_s to its end's after_s, so every counter read falls inside its time.
  double before_s = 0.0;
  double after_s = 0.0;
  std::vector<uint64_t> gpu_mj;  // 0 for sampled GPUs
  std::vector<uint64_t> cpu_uj;
  std::vector<uint64_t> dram_uj;  // 0 for CPUs without DRAM
  std::optional<SocEnergyMj> soc;  // when the SoC is measured
};

struct OpenWindow {
  double start_unix_s = 0.0;
  Reading start;
};

std::string describe_visible(size_t count, const char* singular, const char* plural) {
  if (count == 0) return std::string("no ") + plural + " visible";
  std::string text = std::to_string(count) + " " + (count == 1 ? singular : plural) + " visible: ";
  for (size_t i = 0; i < count; ++i) text += (i == 0 ? "" : ", ") + std::to_string(i);
  return text;
}

// Resolves the requested indices against `count` devices: NotFound or InvalidArgument.
Result<std::vector<int>> resolve_indices(const std::optional<std::vector<int>>& requested,
                                         size_t count, const char* what, const char* singular,
                                         const char* plural) {
  std::vector<int> indices;
  if (!requested) {
    for (size_t i = 0; i < count; ++i) indices.push_back(static_cast<int>(i));
    return indices;
  }
  std::set<int> seen;
  for (int index : *requested) {
    if (index < 0 || static_cast<size_t>(index) >= count) {
      return fail(ErrorCode::kNotFound, std::string(what) + " index " + std::to_string(index) +
                                            " does not exist (" +
                                            describe_visible(count, singular, plural) + ")");
    }
    if (!seen.insert(index).second) {
      return fail(ErrorCode::kInvalidArgument,
                  std::string(what) + " index " + std::to_string(index) + " is listed twice");
    }
    indices.push_back(index);
  }
  return indices;
}

// Reads a CPU's counters once; the error says which package failed.
Result<void> probe_cpu(Cpu& cpu, int index) {
  auto package = cpu.package_energy_uj();
  if (!package) {
    return fail(package.error().code, "CPU package " + std::to_string(index) + " (" +
                                          cpu.name() + "): " + package.error().message);
  }
  if (cpu.has_dram()) {
    auto dram = cpu.dram_energy_uj();
    if (!dram) {
      return fail(dram.error().code, "DRAM of CPU package " + std::to_string(index) + " (" +
                                         cpu.name() + "): " + dram.error().message);
    }
  }
  return ok();
}

class EnergyMonitorImpl final : public EnergyMonitor {
 public:
  EnergyMonitorImpl(Clock& clock, EnergyMonitorOptions options, std::vector<MonitoredGpu> gpus,
                    std::vector<MonitoredCpu> cpus, Soc* soc, std::unique_ptr<PowerSampler> sampler,
                    std::unique_ptr<WindowLog> log)
      : clock_(clock),
        options_(std::move(options)),
        gpus_(std::move(gpus)),
        cpus_(std::move(cpus)),
        soc_(soc),
        sampler_(std::move(sampler)),
        log_(std::move(log)) {
    for (const auto& g : gpus_) gpu_indices_.push_back(g.index);
    for (const auto& c : cpus_) cpu_indices_.push_back(c.index);
  }

  ~EnergyMonitorImpl() override {
    if (sampler_) sampler_->stop();
  }

  Result<void> begin_window(std::string_view name, bool sync, bool restart) override {
    auto it = windows_.find(name);
    if (it != windows_.end() && !restart) {
      return fail(ErrorCode::kInvalidArgument,
                  "window '" + std::string(name) +
                      "' is already open; end or cancel it first, or begin it with restart");
    }
    if (sync && options_.sync) options_.sync();
    OpenWindow window;
    window.start_unix_s = clock_.unix_time_s();
    ZEUS_TRY(read(&window.start));
    if (it != windows_.end()) {
      it->second = std::move(window);
    } else {
      windows_.emplace(std::string(name), std::move(window));
    }
    return ok();
  }

  Result<Measurement> end_window(std::string_view name, bool sync, bool cancel) override {
    auto it = windows_.find(name);
    if (it == windows_.end()) {
      return fail(ErrorCode::kNotFound, "no window named '" + std::string(name) +
                                            "' is open; call begin_window first");
    }
    if (cancel) {
      windows_.erase(it);
      return Measurement{};
    }
    if (sync && options_.sync) options_.sync();
    Reading end;
    ZEUS_TRY(read(&end));
    const Reading& start = it->second.start;
    Measurement measurement;
    measurement.time_s = end.after_s - start.before_s;
    ZEUS_TRY(gpu_energies(name, start, end, &measurement));
    for (size_t i = 0; i < cpus_.size(); ++i) {
      measurement.cpu_energy_j[cpus_[i].index] = counter_delta(start.cpu_uj[i], end.cpu_uj[i]) / 1e6;
      if (cpus_[i].dram) {
        measurement.dram_energy_j[cpus_[i].index] =
            counter_delta(start.dram_uj[i], end.dram_uj[i]) / 1e6;
      }
    }
    if (start.soc && end.soc) measurement.soc_energy = soc_energy(*start.soc, *end.soc);
    if (log_) {
      auto logged = log_->append(it->second.start_unix_s, name, measurement);
      if (!logged) log_warning("energy monitor: " + logged.error().message);
    }
    windows_.erase(it);
    return measurement;
  }

  bool is_window_open(std::string_view name) const override {
    return windows_.find(name) != windows_.end();
  }

  std::vector<std::string> reset_windows() override {
    std::vector<std::string> names;
    for (const auto& [name, window] : windows_) names.push_back(name);
    windows_.clear();
    return names;
  }

  const std::vector<int>& gpu_indices() const override { return gpu_indices_; }
  const std::vector<int>& cpu_indices() const override { return cpu_indices_; }

 private:
  static double counter_delta(uint64_t start, uint64_t end) {
    return end >= start ? static_cast<double>(end - start) : 0.0;
  }

  // Every counter (an edge sample for the sampled GPUs) between two clock readings. The window's
  // time spans its counter reads (with the time taken before the reads only, a read
  // delayed at the end edge added energy but no time, overstating the power); it is longer
  // than the energy's span by at most the reads' duration, so power is never overstated.
  Result<void> read(Reading* out) {
    out->before_s = clock_.now_s();
    ZEUS_TRY(read_counters(out));
    out->after_s = clock_.now_s();
    return ok();
  }

  Result<void> read_counters(Reading* out) {
    out->gpu_mj.assign(gpus_.size(), 0);
    out->cpu_uj.assign(cpus_.size(), 0);
    out->dram_uj.assign(cpus_.size(), 0);
    for (size_t i = 0; i < gpus_.size(); ++i) {
      if (gpus_[i].sampled) continue;
      auto energy_mj = gpus_[i].gpu->total_energy_mj();
      if (!energy_mj) return fail(gpu_error(gpus_[i].index, energy_mj.error()));
      out->gpu_mj[i] = *energy_mj;
    }
    if (sampler_) {
      auto sampled = sampler_->sample_once();
      if (!sampled) return fail(sampled.error());
    }
    for (size_t i = 0; i < cpus_.size(); ++i) {
      auto package_uj = cpus_[i].cpu->package_energy_uj();
      if (!package_uj) return fail(package_uj.error());
      out->cpu_uj[i] = *package_uj;
      if (!cpus_[i].dram) continue;
      auto dram_uj = cpus_[i].cpu->dram_energy_uj();
      if (!dram_uj) return fail(dram_uj.error());
      out->dram_uj[i] = *dram_uj;
    }
    if (soc_ != nullptr) {
      auto soc_mj = soc_->energy_mj();
      if (!soc_mj)
        return fail(soc_mj.error().code, "SoC " + soc_->name() + ": " + soc_mj.error().message);
      out->soc = *soc_mj;
    }
    return ok();
  }

  // The rails' energy between two readings, in J (a rail missing at either edge stays nullopt).
  static Measurement::SocEnergy soc_energy(const SocEnergyMj& start, const SocEnergyMj& end) {
    auto delta_j = [](const std::optional<double>& a, const std::optional<double>& b) {
      return a && b ? std::optional<double>((*b > *a ? *b - *a : 0.0) / 1000.0) : std::nullopt;
    };
    return {delta_j(start.cpu_mj, end.cpu_mj), delta_j(start.gpu_mj, end.gpu_mj),
            delta_j(start.total_mj, end.total_mj)};
  }

  static Error gpu_error(int index, const Error& error) {
    return Error{error.code, "GPU " + std::to_string(index) + ": " + error.message};
  }

  Result<void> gpu_energies(std::string_view name, const Reading& start, const Reading& end,
                            Measurement* out) {
    std::string zero_gpus;
    for (size_t i = 0; i < gpus_.size(); ++i) {
      const int index = gpus_[i].index;
      if (gpus_[i].sampled) {
        auto energy_j = sampler_->energy_j(index, start.before_s, end.after_s);
        if (!energy_j) return fail(gpu_error(index, energy_j.error()));
        out->gpu_energy_j[index] = *energy_j;
        continue;
      }
      if (end.gpu_mj[i] < start.gpu_mj[i]) {
        // A driver reload or GPU reset restarted the counter; the difference
        // means nothing, so the window is measured as instant power x elapsed time.
        auto energy_j = instant_energy_j(i, out->time_s);
        if (!energy_j) return fail(energy_j.error());
        out->gpu_energy_j[index] = *energy_j;
        warn_counter_went_backwards(name, index, start.gpu_mj[i], end.gpu_mj[i], end.after_s);
        continue;
      }
      double energy_j = static_cast<double>(end.gpu_mj[i] - start.gpu_mj[i]) / 1000.0;
      if (energy_j == 0.0 && out->time_s > 0.0) {
        zero_gpus += (zero_gpus.empty() ? "" : ", ") + std::to_string(index);
        if (options_.approximate_zero_energy) {
          auto approximated_j = instant_energy_j(i, out->time_s);
          if (!approximated_j) return fail(approximated_j.error());
          energy_j = *approximated_j;
        }
      }
      out->gpu_energy_j[index] = energy_j;
    }
    if (!zero_gpus.empty()) warn_zero_energy(name, zero_gpus, out->time_s);
    return ok();
  }

  // Instant power x `time_s` of monitored GPU `i`, in J.
  Result<double> instant_energy_j(size_t i, double time_s) {
    auto power_mw = gpus_[i].gpu->instant_power_mw();
    if (!power_mw) return fail(gpu_error(gpus_[i].index, power_mw.error()));
    return *power_mw / 1000.0 * time_s;
  }

  // Upstream Zeus warns when a window reads 0 J and approx_instant_energy is off, offering that
  // option; here the warning comes once per window name (a training loop's "step" window would
  // otherwise warn every step). With the approximation on, it is only logged at info level.
  void warn_zero_energy(std::string_view name, const std::string& gpus, double time_s) {
    const bool first = zero_energy_windows_.emplace(name).second;
    if (!first) return;
    std::string text = "energy monitor: window '" + std::string(name) + "' measured 0 J on GPU " +
                       gpus + " over " + std::to_string(time_s) +
                       " s, shorter than the energy counter's update period";
    if (options_.approximate_zero_energy) {
      log_info(text + "; approximated from instant power x elapsed time");
      return;
    }
    log_warning(text + "; to approximate such windows from instant power x elapsed time, use " +
                kApproximateZeroOptions + " (warned once per window name)");
  }

  void warn_counter_went_backwards(std::string_view name, int index, uint64_t start_mj,
                                   uint64_t end_mj, double now_s) {
    auto count = backwards_warnings_.record(now_s);
    if (!count || log_level() > LogLevel::kWarning) return;
    std::string text = "energy monitor: the energy counter of GPU " + std::to_string(index) +
                       " went backwards during window '" + std::string(name) + "' (from " +
                       std::to_string(start_mj) + " mJ to " + std::to_string(end_mj) +
                       " mJ: the driver was reloaded or the GPU reset); the window's energy is "
                       "approximated from instant power x elapsed time";
    if (*count > 1) {
      text += " (" + std::to_string(*count) + " such windows since the last warning)";
    }
    log_warning(text);
  }

  Clock& clock_;
  EnergyMonitorOptions options_;
  std::vector<MonitoredGpu> gpus_;
  std::vector<MonitoredCpu> cpus_;
  Soc* soc_;  // nullptr: not measured
  std::unique_ptr<PowerSampler> sampler_;
  std::unique_ptr<WindowLog> log_;
  std::vector<int> gpu_indices_;
  std::vector<int> cpu_indices_;
  std::map<std::string, OpenWindow, std::less<>> windows_;
  std::set<std::string, std::less<>> zero_energy_windows_;  // names warned about 0 J
  WarningThrottle backwards_warnings_{kRepeatedWarningInterval_s};
};

}  // namespace

Result<std::unique_ptr<EnergyMonitor>> EnergyMonitor::create(Devices& devices, Clock& clock,
                                                             EnergyMonitorOptions options) {
  auto gpu_indices =
      resolve_indices(options.gpu_indices, devices.gpus.size(), "GPU", "GPU", "GPUs");
  if (!gpu_indices) return fail(gpu_indices.error());
  auto cpu_indices = resolve_indices(options.cpu_indices, devices.cpus.size(), "CPU package",
                                     "package", "packages");
  if (!cpu_indices) return fail(cpu_indices.error());
  if (options.sampler_interval_s <= 0.0) {
    return fail(ErrorCode::kInvalidArgument, "sampler_interval_s must be > 0 s");
  }

  std::vector<MonitoredGpu> gpus;
  std::map<int, Gpu*> sampled;
  for (int index : *gpu_indices) {
    Gpu* gpu = devices.gpus[index].get();
    const bool counter = gpu->has_energy_counter();
    gpus.push_back({index, gpu, !counter});
    if (!counter) sampled[index] = gpu;
  }

  std::vector<MonitoredCpu> cpus;
  for (int index : *cpu_indices) {
    Cpu* cpu = devices.cpus[index].get();
    auto probed = probe_cpu(*cpu, index);
    if (!probed) {
      if (options.cpu_indices) {
        return fail(probed.error().code, "cannot measure " + probed.error().message +
                                             " (reading RAPL needs root since Linux 5.10)");
      }
      log_warning("energy monitor: CPU energy measurement is off: " + probed.error().message +
                  " (reading RAPL needs root since Linux 5.10; list cpu_indices explicitly to "
                  "make this an error)");
      cpus.clear();
      break;
    }
    cpus.push_back({index, cpu, cpu->has_dram()});
  }
  // A module-scope GPU (Grace Hopper) already counts its module's CPU; RAPL on top of it would
  // count that CPU twice. Left to the default, CPUs are then not measured.
  for (const MonitoredGpu& g : gpus) {
    if (cpus.empty() || g.gpu->power_scope() != PowerScope::kModule) continue;
    const std::string why = "GPU " + std::to_string(g.index) +
                            "'s power is module scope (a C2C superchip: it includes the CPU)";
    if (options.cpu_indices) {
      log_warning("energy monitor: " + why +
                  "; cpu_indices were listed, so total_energy_with_cpu counts that CPU twice");
    } else {
      log_warning("energy monitor: CPU energy measurement is off: " + why +
                  " (list cpu_indices explicitly to measure CPUs anyway)");
      cpus.clear();
    }
    break;
  }

  Soc* soc = options.measure_soc ? devices.soc.get() : nullptr;

  std::unique_ptr<PowerSampler> sampler;
  if (!sampled.empty()) {
    sampler = std::make_unique<PowerSampler>(
        clock, std::move(sampled), PowerSamplerOptions{.interval_s = options.sampler_interval_s});
    if (options.start_sampler_thread) ZEUS_TRY(sampler->start());
  }

  std::unique_ptr<WindowLog> log;
  if (!options.log_file.empty()) {
    std::vector<int> cpu_columns;
    std::vector<int> dram_columns;
    for (const auto& c : cpus) {
      if (options.log_gpu_columns_only) break;
      cpu_columns.push_back(c.index);
      if (c.dram) dram_columns.push_back(c.index);
    }
    auto created = WindowLog::create(options.log_file, *gpu_indices, cpu_columns, dram_columns,
                                     options.log_append);
    if (!created) return fail(created.error());
    log = std::move(*created);
  }

  return std::unique_ptr<EnergyMonitor>(new EnergyMonitorImpl(clock, std::move(options),
                                                              std::move(gpus), std::move(cpus), soc,
                                                              std::move(sampler), std::move(log)));
}

}  // namespace zeus
