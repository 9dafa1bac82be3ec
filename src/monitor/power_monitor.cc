#include "zeus/monitor/power_monitor.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "zeus/common/log.h"
#include "zeus/monitor/counter_update_period.h"

namespace zeus {

namespace {

// The poll period without GPUs to infer it from: RAPL counters update about every millisecond,
// so upstream's CPU monitor uses 0.1 s.
constexpr double kCpuOnlyPeriodS = 0.1;

}  // namespace

Result<std::unique_ptr<PowerMonitor>> PowerMonitor::create(Clock& clock, std::map<int, Gpu*> gpus,
                                                           PowerMonitorOptions options) {
  return create(clock, std::move(gpus), {}, std::move(options));
}

Result<std::unique_ptr<PowerMonitor>> PowerMonitor::create(Clock& clock, std::map<int, Gpu*> gpus,
                                                           std::map<int, Cpu*> cpus,
                                                           PowerMonitorOptions options) {
  if (gpus.empty() && cpus.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "a PowerMonitor needs at least one GPU or CPU package");
  }
  if (options.update_period_s &&
      !(std::isfinite(*options.update_period_s) && *options.update_period_s > 0)) {
    return fail(ErrorCode::kInvalidArgument,
                "update_period must be a positive number of "
                "seconds (or None to infer it), got " +
                    std::to_string(*options.update_period_s));
  }
  if (options.max_samples_per_gpu < 2) {
    return fail(ErrorCode::kInvalidArgument, "max_samples_per_gpu must be at least 2");
  }
  std::vector<Gpu*> probed;
  for (const auto& [index, gpu] : gpus) probed.push_back(gpu);
  std::vector<Cpu*> packages;
  for (const auto& [index, cpu] : cpus) packages.push_back(cpu);
  std::vector<PowerDomain> supported = supported_power_domains(probed);
  for (PowerDomain domain : supported_cpu_power_domains(packages)) supported.push_back(domain);
  auto domains = choose_power_domains(options.domains, supported);
  if (!domains) return fail(domains.error());
  if (!gpus.empty() &&
      std::find(domains->begin(), domains->end(), PowerDomain::kDeviceInstant) == domains->end()) {
    log_warning(
        "device_instant power is not monitored: pass a monitored power_domain to "
        "get_power, or list device_instant in power_domains");
  }
  double period_s = 0;
  if (options.update_period_s) {
    period_s = *options.update_period_s;
    // Only a period the caller chose is questioned (as upstream does): an inferred one is two
    // polls per counter update by construction (0.0498 s on an H200, whose counter moves every
    // ~0.1 s).
    if (auto warning = poll_period_warning(period_s)) log_warning(*warning);
  } else if (gpus.empty()) {
    period_s = kCpuOnlyPeriodS;
  } else {
    const PowerDomain probe_domain =
        resolve_power_domain(std::nullopt, *domains).value_or(domains->front());
    period_s = infer_poll_period_s(probed, clock, probe_domain);
    log_info("power poll period inferred: " + std::to_string(period_s) + " s");
  }
  PowerSamplerOptions sampler_options;
  sampler_options.interval_s = period_s;
  sampler_options.capacity = options.max_samples_per_gpu;
  sampler_options.domains = *domains;
  auto sampler =
      std::make_unique<PowerSampler>(clock, std::move(gpus), std::move(cpus), sampler_options);
  (void)sampler->sample_once();  // queries right after create() find a sample
  ZEUS_TRY(sampler->start());
  return std::unique_ptr<PowerMonitor>(new PowerMonitor(std::move(sampler), period_s));
}

PowerMonitor::~PowerMonitor() { stop(); }

void PowerMonitor::stop() { sampler_->stop(); }

Result<PowerDomain> PowerMonitor::resolve(std::optional<PowerDomain> domain) const {
  return resolve_power_domain(domain, domains());
}

Result<void> PowerMonitor::check_index(PowerDomain domain, int index) const {
  if (is_cpu_power_domain(domain))
    return check_monitored_device("CPU package", index, cpu_indices());
  return check_monitored_gpu(index, gpu_indices());
}

Result<std::vector<PowerSample>> PowerMonitor::timeline(PowerDomain domain, int gpu_index,
                                                        std::optional<double> start_s,
                                                        std::optional<double> end_s) const {
  ZEUS_TRY(resolve(domain));
  ZEUS_TRY(check_index(domain, gpu_index));
  if ((start_s && !std::isfinite(*start_s)) || (end_s && !std::isfinite(*end_s))) {
    return fail(ErrorCode::kInvalidArgument, "a timeline's start and end times must be finite");
  }
  return samples_between<&PowerSample::power_w>(sampler_->samples(gpu_index, domain), start_s,
                                                end_s);
}

Result<std::optional<double>> PowerMonitor::power_w(int gpu_index, std::optional<double> time_s,
                                                    std::optional<PowerDomain> domain) const {
  auto resolved = resolve(domain);
  if (!resolved) return fail(resolved.error());
  ZEUS_TRY(check_index(*resolved, gpu_index));
  if (time_s && !std::isfinite(*time_s)) {
    return fail(ErrorCode::kInvalidArgument, "get_power needs a finite time");
  }
  if (!time_s) {
    auto latest = sampler_->latest(gpu_index, *resolved);
    if (!latest) return std::optional<double>();
    return std::optional<double>(latest->power_w);
  }
  auto sample = closest_sample(sampler_->samples(gpu_index, *resolved), *time_s, update_period_s_);
  if (!sample) return std::optional<double>();
  return std::optional<double>(sample->power_w);
}

Result<std::optional<double>> PowerMonitor::energy_j(int gpu_index, double start_s, double end_s,
                                                     std::optional<PowerDomain> domain) const {
  auto resolved = resolve(domain);
  if (!resolved) return fail(resolved.error());
  ZEUS_TRY(check_index(*resolved, gpu_index));
  if (!std::isfinite(start_s) || !std::isfinite(end_s) || end_s < start_s) {
    return fail(ErrorCode::kInvalidArgument,
                "get_energy needs finite times with start_time <= end_time");
  }
  if (!sampler_->has_samples_in(gpu_index, start_s, end_s, *resolved)) {
    return std::optional<double>();
  }
  auto energy = sampler_->energy_j(gpu_index, start_s, end_s, *resolved);
  if (!energy) return fail(energy.error());
  return std::optional<double>(*energy);
}

}  // namespace zeus
