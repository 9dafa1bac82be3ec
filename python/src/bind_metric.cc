// _zeus_cpp.EnergyHistogram, EnergyCumulativeCounter, PowerGauge: the window metrics of
// zeus/exporter/metric.h over their own device discovery (zeus_cpp.metric's core). The Python
// layer does
// the framework synchronisation; these calls run without the GIL.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.h"
#include "zeus/exporter/metric.h"

namespace zeus::python {
namespace {

template <typename Metric>
struct MetricSession {
  std::shared_ptr<DeviceSession> session;
  std::unique_ptr<Metric> metric;
  std::mutex mutex;
  ~MetricSession() { destroy_locked(metric, mutex); }  // joins the metric's threads

  template <typename F>
  auto locked(F&& fn) {
    return without_gil([&] {
      std::lock_guard<std::mutex> lock(mutex);
      return fn(*metric);
    });
  }
};

using Histogram = MetricSession<EnergyHistogram>;
using Counter = MetricSession<EnergyCumulativeCounter>;
using Gauge = MetricSession<PowerGauge>;

std::shared_ptr<Histogram> make_histogram(std::optional<std::vector<int>> gpu_indices,
                                          std::optional<std::vector<int>> cpu_indices,
                                          std::string pushgateway_url, std::string job,
                                          std::vector<double> gpu_buckets,
                                          std::vector<double> cpu_buckets,
                                          std::vector<double> dram_buckets) {
  require_non_negative(gpu_indices, "GPU");
  require_non_negative(cpu_indices, "CPU");
  EnergyHistogramOptions options;
  options.pushgateway_url = std::move(pushgateway_url);
  options.job = std::move(job);
  options.gpu_indices = std::move(gpu_indices);
  options.cpu_indices = std::move(cpu_indices);
  options.gpu_buckets_j = std::move(gpu_buckets);
  options.cpu_buckets_j = std::move(cpu_buckets);
  options.dram_buckets_j = std::move(dram_buckets);
  auto histogram = std::make_shared<Histogram>();
  histogram->session = DeviceSession::discover();
  histogram->metric = without_gil([&] {
    return EnergyHistogram::create(histogram->session->devices, system_clock(), options);
  });
  return histogram;
}

std::shared_ptr<Counter> make_counter(std::optional<std::vector<int>> gpu_indices,
                                      std::optional<std::vector<int>> cpu_indices,
                                      double update_period, std::string pushgateway_url,
                                      std::string job) {
  require_non_negative(gpu_indices, "GPU");
  require_non_negative(cpu_indices, "CPU");
  EnergyCumulativeCounterOptions options;
  options.pushgateway_url = std::move(pushgateway_url);
  options.job = std::move(job);
  options.update_period_s = update_period;
  options.gpu_indices = std::move(gpu_indices);
  options.cpu_indices = std::move(cpu_indices);
  auto counter = std::make_shared<Counter>();
  counter->session = DeviceSession::discover();
  counter->metric = without_gil([&] {
    return EnergyCumulativeCounter::create(counter->session->devices, system_clock(), options);
  });
  return counter;
}

std::shared_ptr<Gauge> make_gauge(std::optional<std::vector<int>> gpu_indices, double update_period,
                                  std::string pushgateway_url, std::string job) {
  require_non_negative(gpu_indices, "GPU");
  PowerGaugeOptions options;
  options.pushgateway_url = std::move(pushgateway_url);
  options.job = std::move(job);
  options.update_period_s = update_period;
  options.gpu_indices = std::move(gpu_indices);
  auto gauge = std::make_shared<Gauge>();
  gauge->session = DeviceSession::discover();
  gauge->metric = without_gil([&] { return PowerGauge::create(gauge->session->devices, options); });
  return gauge;
}

}  // namespace

void bind_metric(py::module_& m) {
  py::class_<Histogram, std::shared_ptr<Histogram>>(
      m, "EnergyHistogram", "zeus::EnergyHistogram: one observation per window, pushed (J).")
      .def(py::init(&make_histogram), py::arg("gpu_indices"), py::arg("cpu_indices"),
           py::arg("pushgateway_url"), py::arg("job"), py::arg("gpu_buckets"),
           py::arg("cpu_buckets"), py::arg("dram_buckets"))
      .def("begin_window",
           [](Histogram& h, const std::string& name) {
             h.locked([&](EnergyHistogram& metric) { return metric.begin_window(name, false); });
           })
      .def(
          "end_window",
          [](Histogram& h, const std::string& name) {
            HistogramWindow window =
                h.locked([&](EnergyHistogram& metric) { return metric.end_window(name, false); });
            const Measurement& m = window.measurement;
            return std::make_tuple(
                std::make_tuple(m.time_s, m.gpu_energy_j, m.cpu_energy_j, m.dram_energy_j),
                window.out_of_range);
          },
          "((time_s, gpu_energy_j, cpu_energy_j, dram_energy_j), out_of_range lines)")
      .def_property_readonly("gpu_indices",
                             [](const Histogram& h) { return h.metric->gpu_indices(); })
      .def_property_readonly("cpu_indices",
                             [](const Histogram& h) { return h.metric->cpu_indices(); });

  py::class_<Counter, std::shared_ptr<Counter>>(
      m, "EnergyCumulativeCounter", "zeus::EnergyCumulativeCounter: energy counters per window.")
      .def(py::init(&make_counter), py::arg("gpu_indices"), py::arg("cpu_indices"),
           py::arg("update_period"), py::arg("pushgateway_url"), py::arg("job"))
      .def("begin_window",
           [](Counter& c, const std::string& name) {
             c.locked(
                 [&](EnergyCumulativeCounter& metric) { return metric.begin_window(name, false); });
           })
      .def("end_window",
           [](Counter& c, const std::string& name) {
             c.locked(
                 [&](EnergyCumulativeCounter& metric) { return metric.end_window(name, false); });
           })
      .def(
          "gpu_energy",
          [](Counter& c, const std::string& name, int index) {
            py::gil_scoped_release release;
            std::lock_guard<std::mutex> lock(c.mutex);
            return c.metric->gpu_energy_j(name, index);
          },
          py::arg("name"), py::arg("index"), "J counted so far for window `name` and GPU `index`.")
      .def_property_readonly("gpu_indices",
                             [](const Counter& c) { return c.metric->gpu_indices(); })
      .def_property_readonly("cpu_indices",
                             [](const Counter& c) { return c.metric->cpu_indices(); });

  py::class_<Gauge, std::shared_ptr<Gauge>>(m, "PowerGauge",
                                            "zeus::PowerGauge: GPU power per window (W).")
      .def(py::init(&make_gauge), py::arg("gpu_indices"), py::arg("update_period"),
           py::arg("pushgateway_url"), py::arg("job"))
      .def("begin_window",
           [](Gauge& g, const std::string& name) {
             g.locked([&](PowerGauge& metric) { return metric.begin_window(name); });
           })
      .def("end_window",
           [](Gauge& g, const std::string& name) {
             g.locked([&](PowerGauge& metric) { return metric.end_window(name); });
           })
      .def_property_readonly("gpu_indices", [](const Gauge& g) { return g.metric->gpu_indices(); });
}

}  // namespace zeus::python
