// PowerSampler: samples the power of some GPUs (and CPU packages) on one background thread and
// integrates it.
//
// Used automatically by EnergyMonitor for GPUs without an energy counter, and by PowerMonitor
// (timelines and energy per power domain). One thread reads every GPU in every requested power
// domain (PowerSamplerOptions::domains; queries that name no domain use the first). Each
// (domain, GPU) keeps its samples (time_s, power_w) in a bounded ring buffer; consecutive identical
// readings (the driver did not update) are deduplicated to the first and last of their run, so
// integration stays exact. energy_j() integrates by trapezoid over [t0_s, t1_s] within the sampled
// span, interpolating at the edges and never extrapolating outside the span. CPU domains
// (cpu_package_average, cpu_dram_average) have no power reading: each tick reads the package's
// and DRAM's RAPL energy counters (wraparound corrected by the Cpu) and records, at that tick's
// time, the energy since the previous tick over the measured time between the two reads; the
// first tick only sets the baseline. A counter that went backwards restarts the baseline.
// Rings are keyed by (domain, index): GPU domains by GPU index, CPU domains by package index.
// Units: seconds on the
// given Clock, watts, joules. Thread-safety: every method may be called from any thread while the
// sampler runs. Failure: a read that fails on the thread is skipped (logged once per GPU); queries
// return Unavailable when there is nothing to integrate.
//
//   zeus::PowerSampler sampler(clock, {{0, gpu}}, {.interval_s = 0.1});
//   sampler.start();  ...  sampler.stop();
//   auto energy_j = sampler.energy_j(0, t0_s, t1_s);
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "zeus/common/clock.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"
#include "zeus/monitor/power_domain.h"
#include "zeus/monitor/sample_ring.h"

namespace zeus {

struct PowerSample {
  double time_s = 0.0;
  double power_w = 0.0;
};

struct PowerSamplerOptions {
  // Sampling period of the background thread.
  double interval_s = 0.1;
  // Samples kept per GPU (after deduplication); the oldest are dropped first. At least 2.
  size_t capacity = 65536;
  // The power domains read at each tick; the first is the default of every query. Not empty.
  // GPU domains are read from every GPU, CPU domains from every CPU package.
  std::vector<PowerDomain> domains = {PowerDomain::kDeviceInstant};
};

class PowerSampler {
 public:
  // Samples `gpus`, keyed by the caller's GPU index. The Gpus and the clock are not owned and
  // must outlive the sampler. Does not start the thread.
  PowerSampler(Clock& clock, std::map<int, Gpu*> gpus, PowerSamplerOptions options = {});
  // Also samples the CPU domains of `cpus`, keyed by package index (not owned either).
  PowerSampler(Clock& clock, std::map<int, Gpu*> gpus, std::map<int, Cpu*> cpus,
               PowerSamplerOptions options);
  // Stops the thread if it runs.
  ~PowerSampler();
  PowerSampler(const PowerSampler&) = delete;
  PowerSampler& operator=(const PowerSampler&) = delete;

  // Starts the background thread (one sample at once, then one per interval). InvalidArgument
  // when it already runs. Do not start it on a FakeClock: its sleeps would race time forward.
  Result<void> start();
  // Stops and joins the thread (within about one interval); a no-op when not running.
  void stop();
  bool running() const { return running_.load(); }

  // Reads every GPU in every domain once now and records the samples. Returns the first read
  // error (the other readings are still taken).
  Result<void> sample_once();

  // Energy of GPU `gpu_index` over the part of [t0_s, t1_s] that the samples span, by trapezoid
  // with linear interpolation at the edges; nothing is extrapolated before the first or after
  // the last sample. NotFound for an unknown index, InvalidArgument for
  // non-finite times or t1_s < t0_s, Unavailable when the range holds no sample time
  // (has_samples_in() is false) or starts before samples that were dropped.
  Result<double> energy_j(int gpu_index, double t0_s, double t1_s,
                          std::optional<PowerDomain> domain = std::nullopt) const;
  // True when GPU `gpu_index` has samples and [t0_s, t1_s] overlaps the time they span.
  bool has_samples_in(int gpu_index, double t0_s, double t1_s,
                      std::optional<PowerDomain> domain = std::nullopt) const;
  // The times of the oldest and newest retained samples of a GPU; nullopt without samples.
  std::optional<std::pair<double, double>> span_s(
      int gpu_index, std::optional<PowerDomain> domain = std::nullopt) const;
  // The newest sample of a GPU; NotFound for an unknown index, Unavailable before any sample.
  Result<PowerSample> latest(int gpu_index, std::optional<PowerDomain> domain = std::nullopt) const;
  // A copy of the retained samples of a GPU, oldest first (empty for an unknown index).
  std::vector<PowerSample> samples(int gpu_index,
                                   std::optional<PowerDomain> domain = std::nullopt) const;
  // The GPU indices sampled, ascending.
  std::vector<int> gpu_indices() const;
  // The CPU package indices sampled, ascending.
  std::vector<int> cpu_indices() const;
  // The domains sampled, in the order given (the first is the default).
  const std::vector<PowerDomain>& domains() const { return options_.domains; }

 private:
  using Ring = SampleRing<PowerSample, &PowerSample::power_w>;

  // The previous energy reading of a CPU domain, the baseline of its next sample.
  struct EnergyReading {
    double time_s = 0.0;
    uint64_t energy_uj = 0;
  };

  void run();
  Result<void> sample_gpus(bool from_thread);
  // Reads every CPU domain of every package once and records a sample per (domain, package)
  // that has a baseline. Returns the first read error.
  Result<void> sample_cpus(bool from_thread);
  // Records a sample, or on a failed read logs once per ring (when from the thread). Returns the
  // read error. Caller holds sample_mutex_.
  Result<void> record(PowerDomain domain, int index, const Result<double>& power_w, double time_s,
                      bool from_thread);
  static double integrate(const Ring& ring, double t0_s, double t1_s);
  // The overlap rule of has_samples_in(), on one ring; caller holds data_mutex_.
  static bool overlaps(const Ring& ring, double t0_s, double t1_s);
  // The ring of (domain or the default domain, GPU); nullptr when not sampled. Caller holds
  // data_mutex_.
  const Ring* find_ring(int gpu_index, std::optional<PowerDomain> domain) const;
  // "GPU 0", "GPU 0 (memory_average)" when the domain is not the default one, "CPU 0
  // (cpu_package_average)".
  std::string describe(int gpu_index, std::optional<PowerDomain> domain) const;

  Clock& clock_;
  std::map<int, Gpu*> gpus_;
  std::map<int, Cpu*> cpus_;
  PowerSamplerOptions options_;
  std::map<std::pair<PowerDomain, int>, EnergyReading> last_energy_;  // guarded by sample_mutex_
  std::mutex sample_mutex_;        // serialises sampling so samples stay time-ordered
  mutable std::mutex data_mutex_;  // guards rings_
  std::map<std::pair<PowerDomain, int>, Ring> rings_;  // by (domain, GPU index)
  std::atomic<bool> running_{false};
  std::atomic<bool> stop_requested_{false};
  std::thread thread_;
};

}  // namespace zeus
