// PowerMonitor: power timelines of some GPUs and CPU packages in one or more power domains,
// sampled by one background thread (a PowerSampler), with Zeus's queries on top: the power at a
// time, the energy over a range and the timeline of a domain.
//
// CPU packages (RAPL) add the domains cpu_package_average and cpu_dram_average: the average
// power between two ticks, from the energy counters' deltas (wraparound at max_energy_range_uj
// corrected) over the measured time between the reads. Their queries take a CPU package index
// where GPU domains take a GPU index. Without GPUs the period defaults to 0.1 s (RAPL counters
// update about every millisecond, nothing to infer).
//
// At creation it finds which domains every monitored GPU supports (one reading each), picks the
// requested ones (choose_power_domains), and, when no poll period is given, infers one from the
// counter's update period (infer_poll_period_s); a period below 50 ms is warned about.
// Queries that name no domain use device_instant, else device_average (resolve_power_domain).
// Units: seconds on the Clock, watts, joules. Thread-safety: every method may be called from any
// thread. Failure: Result; InvalidArgument for a domain not monitored or unsupported, NotFound
// for a GPU (or CPU package) index not monitored.
//
//   auto monitor = zeus::PowerMonitor::create(clock, {{0, gpu}}, {.update_period_s = 0.1});
//   auto timeline = (*monitor)->timeline(zeus::PowerDomain::kMemoryAverage, 0, t0_s, t1_s);
//   auto energy_j = (*monitor)->energy_j(0, t0_s, t1_s);  // device_instant
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "zeus/common/clock.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"
#include "zeus/monitor/power_domain.h"
#include "zeus/monitor/power_sampler.h"

namespace zeus {

struct PowerMonitorOptions {
  // Seconds between two polls; nullopt: inferred from the counter's update period.
  std::optional<double> update_period_s;
  // Domains to sample; nullopt: every domain all monitored GPUs support.
  std::optional<std::vector<PowerDomain>> domains;
  // Samples kept per GPU and domain (after deduplication); the oldest are dropped first.
  size_t max_samples_per_gpu = 65536;
};

class PowerMonitor {
 public:
  // Checks the options, probes the GPUs (keyed by the caller's index; not owned, must outlive
  // the monitor), takes one sample of every domain and starts sampling. InvalidArgument for no GPU,
  // a non-positive or non-finite period, fewer than 2 samples, or an unsupported domain (the
  // message lists the supported).
  static Result<std::unique_ptr<PowerMonitor>> create(Clock& clock, std::map<int, Gpu*> gpus,
                                                      PowerMonitorOptions options = {});
  // Also samples `cpus` (RAPL packages keyed by package index; not owned). `gpus` may be empty
  // when `cpus` is not. With options.domains nullopt, the CPU domains they support are added.
  static Result<std::unique_ptr<PowerMonitor>> create(Clock& clock, std::map<int, Gpu*> gpus,
                                                      std::map<int, Cpu*> cpus,
                                                      PowerMonitorOptions options);
  ~PowerMonitor();
  PowerMonitor(const PowerMonitor&) = delete;
  PowerMonitor& operator=(const PowerMonitor&) = delete;

  // Stops sampling; what was sampled stays queryable.
  void stop();

  const std::vector<PowerDomain>& domains() const { return sampler_->domains(); }
  std::vector<int> gpu_indices() const { return sampler_->gpu_indices(); }
  std::vector<int> cpu_indices() const { return sampler_->cpu_indices(); }
  double update_period_s() const { return update_period_s_; }
  // The domain a query with `domain` uses (see resolve_power_domain).
  Result<PowerDomain> resolve(std::optional<PowerDomain> domain) const;

  // The samples of a domain and device (a GPU index, or a CPU package index for a CPU domain)
  // with time in [start_s, end_s] (nullopt: unbounded), oldest first. InvalidArgument for a
  // domain not monitored, a non-finite time or start_s > end_s, NotFound for an index not
  // monitored.
  Result<std::vector<PowerSample>> timeline(PowerDomain domain, int gpu_index,
                                            std::optional<double> start_s = std::nullopt,
                                            std::optional<double> end_s = std::nullopt) const;
  // The sample closest to `time_s` (the newest when nullopt), in W; nullopt before any sample
  // or for a time outside [first sample, newest sample + update period].
  Result<std::optional<double>> power_w(int gpu_index, std::optional<double> time_s = std::nullopt,
                                        std::optional<PowerDomain> domain = std::nullopt) const;
  // Energy over [start_s, end_s] by trapezoid over the samples (PowerSampler::energy_j);
  // nullopt when the range holds no sample.
  Result<std::optional<double>> energy_j(int gpu_index, double start_s, double end_s,
                                         std::optional<PowerDomain> domain = std::nullopt) const;

  const PowerSampler& sampler() const { return *sampler_; }

 private:
  // NotFound unless `index` is a monitored GPU (GPU domains) or CPU package (CPU domains).
  Result<void> check_index(PowerDomain domain, int index) const;
  PowerMonitor(std::unique_ptr<PowerSampler> sampler, double update_period_s)
      : sampler_(std::move(sampler)), update_period_s_(update_period_s) {}
  std::unique_ptr<PowerSampler> sampler_;
  double update_period_s_;
};

}  // namespace zeus
