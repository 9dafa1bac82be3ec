// Window metrics pushed to a Prometheus Pushgateway (upstream Zeus's `zeus.metric`).
//
// Three kinds, each with begin_window(name) / end_window(name), labelled {window, index} with
// upstream's metric names so dashboards built for Zeus work unchanged:
//   EnergyHistogram          one observation per ended window and device, pushed at the end:
//                            energy_monitor_{gpu,cpu,dram}_energy_joules (histogram, J)
//   EnergyCumulativeCounter  while a window is open, a thread adds the energy of every
//                            update period and pushes:
//                            energy_monitor_{gpu,cpu,dram}_energy_joules_total (counter, J);
//                            end_window adds the last partial period and pushes
//   PowerGauge               while a window is open, a thread sets each GPU's instant power
//                            every update period and pushes: power_monitor_gpu_power_watts (gauge,
//                            W)
// `index` is the framework-visible GPU index or the CPU package index. Each object pushes its
// whole registry with PUT to /metrics/job/<job> (prometheus_client.push_to_gateway's group), so
// give each object its own job name. Text format: prometheus-cpp's serializer; HTTP: the
// project's client.
// Thread-safety: one object is used from one thread at a time; its own threads are internal.
// Failure: create() answers InvalidArgument for a bad URL, job, bucket list or period, and
// NotFound for an unknown device index; a push that fails is Unavailable (what was observed is
// kept and goes out with the next push); ending an unknown window is NotFound.
//
//   auto histogram = zeus::EnergyHistogram::create(devices, clock,
//       {.pushgateway_url = "http://127.0.0.1:9091", .job = "train"});
//   (*histogram)->begin_window("epoch"); train(); (*histogram)->end_window("epoch");
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/clock.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"
#include "zeus/monitor/energy_monitor.h"

namespace zeus {

struct EnergyHistogramOptions {
  std::string pushgateway_url;  // http://host[:port]
  std::string job;
  std::optional<std::vector<int>> gpu_indices{};  // nullopt: every GPU
  std::optional<std::vector<int>> cpu_indices{};  // nullopt: every readable CPU package
  // Bucket upper bounds in J, strictly increasing (upstream's defaults).
  std::vector<double> gpu_buckets_j{50.0, 100.0, 200.0, 500.0, 1000.0};
  std::vector<double> cpu_buckets_j{10.0, 50.0, 100.0, 500.0, 1000.0};
  std::vector<double> dram_buckets_j{5.0, 10.0, 20.0, 50.0, 150.0};
  std::function<void()> sync{};  // waits for queued GPU work (EnergyMonitorOptions::sync)
};

// What one ended window observed.
struct HistogramWindow {
  Measurement measurement;
  // One line per observation outside its buckets' range (upstream warns about each).
  std::vector<std::string> out_of_range;
};

class EnergyHistogram {
 public:
  static Result<std::unique_ptr<EnergyHistogram>> create(Devices& devices, Clock& clock,
                                                         EnergyHistogramOptions options);
  virtual ~EnergyHistogram() = default;
  // InvalidArgument when `name` is open already.
  virtual Result<void> begin_window(std::string_view name, bool sync = true) = 0;
  // Observes each device's energy of window `name` and pushes.
  virtual Result<HistogramWindow> end_window(std::string_view name, bool sync = true) = 0;
  virtual const std::vector<int>& gpu_indices() const = 0;
  virtual const std::vector<int>& cpu_indices() const = 0;
};

struct EnergyCumulativeCounterOptions {
  std::string pushgateway_url;
  std::string job;
  double update_period_s = 1.0;  // > 0
  std::optional<std::vector<int>> gpu_indices{};
  std::optional<std::vector<int>> cpu_indices{};
  std::function<void()> sync{};
};

class EnergyCumulativeCounter {
 public:
  static Result<std::unique_ptr<EnergyCumulativeCounter>> create(
      Devices& devices, Clock& clock, EnergyCumulativeCounterOptions options);
  virtual ~EnergyCumulativeCounter() = default;  // ends the open windows (and pushes once)
  // Starts the window's thread after a first push (the counters at their current values), so
  // an unreachable gateway is an error here. InvalidArgument when `name` is open already.
  virtual Result<void> begin_window(std::string_view name, bool sync = false) = 0;
  // Stops the thread, adds the energy since its last update, pushes. NotFound if not open.
  virtual Result<void> end_window(std::string_view name, bool sync = false) = 0;
  // The energy (J) counted so far for window `name` and GPU `index` (0 when none).
  virtual double gpu_energy_j(std::string_view name, int index) const = 0;
  virtual const std::vector<int>& gpu_indices() const = 0;
  virtual const std::vector<int>& cpu_indices() const = 0;
};

struct PowerGaugeOptions {
  std::string pushgateway_url;
  std::string job;
  double update_period_s = 1.0;  // > 0
  std::optional<std::vector<int>> gpu_indices{};
};

class PowerGauge {
 public:
  static Result<std::unique_ptr<PowerGauge>> create(Devices& devices, PowerGaugeOptions options);
  virtual ~PowerGauge() = default;  // ends the open windows
  // Sets and pushes the gauges once (an unreachable gateway is an error here), then starts the
  // window's thread. InvalidArgument when `name` is open already.
  virtual Result<void> begin_window(std::string_view name) = 0;
  // Stops the window's thread (the last values stay pushed). NotFound if not open.
  virtual Result<void> end_window(std::string_view name) = 0;
  virtual const std::vector<int>& gpu_indices() const = 0;
};

}  // namespace zeus
