// The Prometheus exporter: GPU and CPU energy and power as Prometheus metrics.
//
// Measuring and exporting are separate. EnergySampler reads the devices every interval on its own
// thread and publishes an immutable EnergySnapshot; a scrape (or a Pushgateway push) only turns
// the latest snapshot into metrics and never touches hardware, so a slow or hung GPU cannot stall
// Prometheus. Metrics (SI units):
//   zeus_gpu_energy_joules_total{gpu,uuid,model}   counter: the GPU's energy counter (J since
//                                                   driver load), or power integrated since the
//                                                   exporter started on GPUs without one
//   zeus_gpu_power_watts{gpu,uuid,model}            gauge: instant power
//   zeus_gpu_power_limit_watts{gpu,uuid,model}      gauge: current power limit
//   zeus_cpu_energy_joules_total{package,zone}      counter: RAPL energy since the exporter
//                                                   started; zone "package" or "dram"
// A reading that fails is left out of that snapshot (logged once per device and kind).
// With ExporterOptions::streams (`zeus exporter --from`), also many nodes' power and energy from
// their zeusd power streams (zeus/client/power_streaming_client.h), read at each scrape; label
// `node` is
// the daemon's address as given:
//   zeus_node_gpu_power_watts{gpu,node}             gauge: the GPU's power
//   zeus_node_cpu_power_watts{node,package,zone}    gauge: CPU package or DRAM power (RAPL)
//   zeus_node_power_watts{node}                     gauge: the node's devices known now, summed
//   zeus_node_energy_joules_total{node}             counter: J since the exporter started streaming
//   zeus_node_connected{node}                       gauge: 1 while every stream of the node is up
//   zeus_node_reconnects_total{node}                counter: reconnection attempts
//   zeus_node_clock_offset_seconds{node}            gauge: exporter clock minus the daemon's
//   zeus_cluster_power_watts, zeus_cluster_energy_joules_total: the sums over the nodes
// A node that is down has no device gauges until it is back; its energy holds.
// Thread-safety: latest() and scrapes may run on any thread while the sampler runs.
// Failure: start() answers Unavailable when the port cannot be bound, InvalidArgument for a bad
// interval or push URL.
//
//   zeus::SystemClock clock;
//   auto exporter = zeus::MetricsExporter::start(devices, clock, {.port = 9400});
//   // curl http://localhost:9400/metrics
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "zeus/common/clock.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"

namespace zeus {

class PowerStreamingClient;  // zeus/client/power_streaming_client.h

struct GpuEnergyReading {
  int gpu = 0;  // the framework's index (after CUDA_VISIBLE_DEVICES)
  std::string uuid;
  std::string model;
  std::optional<double> energy_j;  // counter
  std::optional<double> power_w;
  std::optional<double> power_limit_w;
};

struct CpuEnergyReading {
  int package = 0;   // the N of intel-rapl:N
  std::string zone;  // "package" or "dram"
  double energy_j = 0.0;
};

// One pass over the devices.
struct EnergySnapshot {
  uint64_t sequence = 0;  // 0: nothing sampled yet
  double time_s = 0.0;    // the clock's now_s() at the sample
  std::vector<GpuEnergyReading> gpus;
  std::vector<CpuEnergyReading> cpus;
};

class EnergySampler {
 public:
  // `devices` and `clock` must outlive the sampler.
  EnergySampler(Devices& devices, Clock& clock);
  ~EnergySampler();  // stop()
  EnergySampler(const EnergySampler&) = delete;
  EnergySampler& operator=(const EnergySampler&) = delete;

  // Reads every device once and publishes the snapshot (the thread calls this).
  void sample_once();
  // The latest snapshot; never null (sequence 0 before the first sample).
  std::shared_ptr<const EnergySnapshot> latest() const;
  // Samples now, then every `interval_s` (> 0) on a thread until stop().
  Result<void> start(double interval_s);
  void stop();

 private:
  void warn_once(const std::string& key, const std::string& message);
  Devices& devices_;
  Clock& clock_;
  mutable std::mutex snapshot_mutex_;
  std::shared_ptr<const EnergySnapshot> latest_;  // guarded by snapshot_mutex_
  // Integration for GPUs without an energy counter (sampler thread only).
  std::vector<double> integrated_j_;
  std::vector<std::optional<std::pair<double, double>>> last_power_;  // (time_s, watts)
  std::set<std::string> warned_;
  std::mutex stop_mutex_;
  std::condition_variable stop_signal_;
  bool stopping_ = false;  // guarded by stop_mutex_
  std::thread thread_;
};

// The snapshot in Prometheus text exposition format 0.0.4.
std::string prometheus_text(const EnergySnapshot& snapshot);

struct ExporterOptions {
  std::string bind_address = "127.0.0.1";
  int port = 9400;  // 0: any free port (see MetricsExporter::port())
  double interval_s = 1.0;
  std::string push_url;  // "http://host:9091": also push to this Pushgateway; empty: don't
  double push_interval_s = 10.0;
  std::string push_job = "zeus";
  // Not null: also serve (and push) the nodes and cluster it streams; it must outlive the
  // exporter.
  const PowerStreamingClient* streams = nullptr;
};

class MetricsExporter {
 public:
  // Starts the sampler, serves /metrics on bind_address:port and, with a push URL, pushes there.
  static Result<std::unique_ptr<MetricsExporter>> start(Devices& devices, Clock& clock,
                                                        const ExporterOptions& options);
  ~MetricsExporter();
  MetricsExporter(const MetricsExporter&) = delete;
  MetricsExporter& operator=(const MetricsExporter&) = delete;

  // The port /metrics is served on.
  int port() const { return port_; }
  std::shared_ptr<const EnergySnapshot> latest() const { return sampler_->latest(); }
  // Pushes the latest snapshot to the Pushgateway now; Unavailable when it does not answer 2xx.
  Result<void> push_now();

 private:
  struct Internals;
  MetricsExporter() = default;
  std::unique_ptr<EnergySampler> sampler_;
  std::unique_ptr<Internals> internals_;  // HTTP server, Pushgateway client, push thread
  int port_ = 0;
};

}  // namespace zeus
