// PowerSampler: samples the power of some GPUs on one background thread and integrates it.
//
// Used automatically by EnergyMonitor for GPUs without an energy counter, and by the Python
// PowerMonitor (energy over a time range, latest power per GPU). Each GPU keeps its samples
// (time_s, power_w) in a bounded ring buffer; consecutive identical readings (the driver did not
// update) are deduplicated to the first and last of their run, so integration stays exact.
// energy_j() integrates by trapezoid over [t0_s, t1_s] within the sampled span, interpolating
// at the edges and never extrapolating outside the span.
// Units: seconds on the given Clock, watts, joules.
// Thread-safety: every method may be called from any thread while the sampler runs.
// Failure: a read that fails on the thread is skipped (logged once per GPU); queries return
// Unavailable when there is nothing to integrate.
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
#include <thread>
#include <utility>
#include <vector>

#include "zeus/clock.h"
#include "zeus/device.h"
#include "zeus/result.h"

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
  // Read the driver's moving average (average_power_mw) instead of the instant power.
  bool use_average_power = false;
};

class PowerSampler {
 public:
  // Samples `gpus`, keyed by the caller's GPU index. The Gpus and the clock are not owned and
  // must outlive the sampler. Does not start the thread.
  PowerSampler(Clock& clock, std::map<int, Gpu*> gpus, PowerSamplerOptions options = {});
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

  // Reads every GPU once now and records the samples. Returns the first read error (the other
  // GPUs are still sampled).
  Result<void> sample_once();

  // Energy of GPU `gpu_index` over the part of [t0_s, t1_s] that the samples span, by trapezoid
  // with linear interpolation at the edges; nothing is extrapolated before the first or after
  // the last sample (probe item B7). NotFound for an unknown index, InvalidArgument for
  // non-finite times or t1_s < t0_s, Unavailable when the range holds no sample time
  // (has_samples_in() is false) or starts before samples that were dropped.
  Result<double> energy_j(int gpu_index, double t0_s, double t1_s) const;
  // True when GPU `gpu_index` has samples and [t0_s, t1_s] overlaps the time they span.
  bool has_samples_in(int gpu_index, double t0_s, double t1_s) const;
  // The times of the oldest and newest retained samples of a GPU; nullopt without samples.
  std::optional<std::pair<double, double>> span_s(int gpu_index) const;
  // The newest sample of a GPU; NotFound for an unknown index, Unavailable before any sample.
  Result<PowerSample> latest(int gpu_index) const;
  // A copy of the retained samples of a GPU, oldest first (empty for an unknown index).
  std::vector<PowerSample> samples(int gpu_index) const;
  // The GPU indices sampled, ascending.
  std::vector<int> gpu_indices() const;

 private:
  // Fixed-capacity ring of one GPU's samples, time-ordered.
  struct Ring {
    std::vector<PowerSample> buffer;
    size_t head = 0;   // index of the oldest sample
    size_t size = 0;
    bool dropped = false;  // true once a sample was overwritten
    bool read_failed_logged = false;
    const PowerSample& at(size_t i) const { return buffer[(head + i) % buffer.size()]; }
    PowerSample& at(size_t i) { return buffer[(head + i) % buffer.size()]; }
    void push(const PowerSample& sample);
  };

  void run();
  Result<void> sample_gpus(bool from_thread);
  static double integrate(const Ring& ring, double t0_s, double t1_s);
  // The overlap rule of has_samples_in(), on one ring; caller holds data_mutex_.
  static bool overlaps(const Ring& ring, double t0_s, double t1_s);

  Clock& clock_;
  std::map<int, Gpu*> gpus_;
  PowerSamplerOptions options_;
  std::mutex sample_mutex_;        // serialises sampling so samples stay time-ordered
  mutable std::mutex data_mutex_;  // guards rings_
  std::map<int, Ring> rings_;
  std::atomic<bool> running_{false};
  std::atomic<bool> stop_requested_{false};
  std::thread thread_;
};

}  // namespace zeus
