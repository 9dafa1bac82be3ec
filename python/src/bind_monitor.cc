// _zeus_cpp.EnergyMonitor (zeus_cpp.monitor.ZeusMonitor's core) and _zeus_cpp.PowerSampler
// (zeus_cpp.monitor.PowerMonitor's core).
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.h"
#include "zeus/power_sampler.h"

namespace zeus::python {
namespace {

using MeasurementTuple =
    std::tuple<double, std::map<int, double>, std::map<int, double>, std::map<int, double>>;

void require_non_negative(const std::optional<std::vector<int>>& indices, const char* what) {
  if (!indices) return;
  for (int index : *indices) {
    require(index >= 0, std::string(what) + " index " + std::to_string(index) +
                            " is negative: indices count from 0 over the visible devices");
  }
}

std::shared_ptr<MonitorSession> make_monitor(std::optional<std::vector<int>> gpu_indices,
                                             std::optional<std::vector<int>> cpu_indices,
                                             bool approx_instant_energy, std::string log_file,
                                             py::object sync) {
  require_non_negative(gpu_indices, "GPU");
  require_non_negative(cpu_indices, "CPU");
  EnergyMonitorOptions options;
  options.gpu_indices = std::move(gpu_indices);
  options.cpu_indices = std::move(cpu_indices);
  options.approximate_zero_energy = approx_instant_energy;
  options.log_file = std::move(log_file);
  if (!sync.is_none()) {
    if (!PyCallable_Check(sync.ptr())) {
      throw py::type_error("sync must be a callable or None, not " +
                           std::string(py::str(py::type::of(sync).attr("__name__"))));
    }
    PythonCallable callable(std::move(sync));
    options.sync = [callable] { callable.call(nullptr); };
  }
  auto monitor = std::make_shared<MonitorSession>();
  monitor->session = DeviceSession::discover();
  monitor->monitor = without_gil([&] {
    return EnergyMonitor::create(monitor->session->devices, system_clock(), std::move(options));
  });
  return monitor;
}

MeasurementTuple to_tuple(const Measurement& m) {
  return {m.time_s, m.gpu_energy_j, m.cpu_energy_j, m.dram_energy_j};
}

// A PowerSampler over some GPUs of its own discovery, running its thread.
struct SamplerSession {
  std::shared_ptr<DeviceSession> session;
  std::unique_ptr<PowerSampler> sampler;
  ~SamplerSession() {
    if (sampler) sampler->stop();
  }
};

// Seconds to add to a Unix time to get the clock's monotonic time.
double unix_to_monotonic_s() { return system_clock().now_s() - system_clock().unix_time_s(); }

std::shared_ptr<SamplerSession> make_sampler(std::optional<std::vector<int>> gpu_indices,
                                             double interval_s, size_t capacity) {
  require_non_negative(gpu_indices, "GPU");
  require(interval_s > 0, "update_period must be > 0 s");
  require(capacity >= 2, "max_samples_per_gpu must be at least 2");
  auto sampler = std::make_shared<SamplerSession>();
  sampler->session = DeviceSession::discover();
  auto& gpus = sampler->session->devices.gpus;
  std::map<int, Gpu*> selected;
  if (!gpu_indices) {
    for (size_t i = 0; i < gpus.size(); ++i) selected[static_cast<int>(i)] = gpus[i].get();
  } else {
    for (int index : *gpu_indices) {
      if (static_cast<size_t>(index) >= gpus.size()) {
        raise_error(Error{ErrorCode::kNotFound, "GPU index " + std::to_string(index) +
                                                    " does not exist (" +
                                                    std::to_string(gpus.size()) + " visible)"});
      }
      require(selected.emplace(index, gpus[static_cast<size_t>(index)].get()).second,
              "GPU index " + std::to_string(index) + " is listed twice");
    }
  }
  PowerSamplerOptions options;
  options.interval_s = interval_s;
  options.capacity = capacity;
  sampler->sampler = std::make_unique<PowerSampler>(system_clock(), selected, options);
  without_gil([&] { return sampler->sampler->start(); });
  return sampler;
}

// PowerSampler::energy_j over Unix times (probe items B7, C9): errors name the caller's Unix
// times, not the clock's monotonic seconds; a range without samples is None, as in Python Zeus.
std::optional<double> sampler_energy_j(const SamplerSession& s, int index,
                                       std::optional<double> start_unix_s,
                                       std::optional<double> end_unix_s) {
  for (const auto& [name, time] :
       {std::pair{"start_time", start_unix_s}, {"end_time", end_unix_s}}) {
    if (time && !std::isfinite(*time)) {
      raise_error(Error{ErrorCode::kInvalidArgument,
                        std::string(name) + " must be a finite Unix time, got " +
                            std::string(py::str(py::float_(*time)))});
    }
  }
  if (start_unix_s && end_unix_s && *end_unix_s < *start_unix_s) {
    raise_error(Error{ErrorCode::kInvalidArgument,
                      "get_energy needs start_time <= end_time, got start_time=" +
                          std::string(py::str(py::float_(*start_unix_s))) + " and end_time=" +
                          std::string(py::str(py::float_(*end_unix_s))) + " (Unix times)"});
  }
  const auto span_s = s.sampler->span_s(index);
  if (!span_s) return std::nullopt;
  const double offset_s = unix_to_monotonic_s();
  const double t0_s = start_unix_s ? *start_unix_s + offset_s : span_s->first;
  const double t1_s = end_unix_s ? *end_unix_s + offset_s : span_s->second;
  if (!s.sampler->has_samples_in(index, t0_s, t1_s)) return std::nullopt;
  return without_gil([&] { return s.sampler->energy_j(index, t0_s, t1_s); });
}

}  // namespace

void bind_monitor(py::module_& m) {
  py::class_<MonitorSession, std::shared_ptr<MonitorSession>>(
      m, "EnergyMonitor", "zeus::EnergyMonitor over its own device discovery (J, s).")
      .def(py::init(&make_monitor), py::arg("gpu_indices") = py::none(),
           py::arg("cpu_indices") = py::none(), py::arg("approx_instant_energy") = false,
           py::arg("log_file") = "", py::arg("sync") = py::none(),
           "Discovers devices and creates the monitor. `sync` is called (with the GIL) before "
           "each timestamp when a window asks for synchronisation.")
      .def(
          "begin_window",
          [](MonitorSession& s, const std::string& name, bool sync, bool restart) {
            Result<void> begun;
            {
              py::gil_scoped_release release;
              std::lock_guard<std::mutex> lock(s.mutex);
              begun = s.monitor->begin_window(name, sync, restart);
            }
            if (PyErr_Occurred() != nullptr) {
              // The sync callback raised: do not leave the window open behind the exception.
              py::error_already_set error;
              if (begun) {
                py::gil_scoped_release release;
                std::lock_guard<std::mutex> lock(s.mutex);
                (void)s.monitor->end_window(name, /*sync=*/false, /*cancel=*/true);
              }
              throw error;
            }
            unwrap(std::move(begun));
          },
          py::arg("name"), py::arg("sync") = true, py::arg("restart") = false,
          "Starts window `name` (InvalidArgumentError if open and not restart).")
      .def(
          "end_window",
          [](MonitorSession& s, const std::string& name, bool sync, bool cancel) {
            return to_tuple(without_gil([&] {
              std::lock_guard<std::mutex> lock(s.mutex);
              return s.monitor->end_window(name, sync, cancel);
            }));
          },
          py::arg("name"), py::arg("sync") = true, py::arg("cancel") = false,
          "Ends window `name`: (time_s, gpu_energy_j, cpu_energy_j, dram_energy_j). "
          "NotFoundError if it is not open.")
      .def("is_window_open",
           [](MonitorSession& s, const std::string& name) {
             py::gil_scoped_release release;
             std::lock_guard<std::mutex> lock(s.mutex);
             return s.monitor->is_window_open(name);
           })
      .def_property_readonly("gpu_indices",
                             [](const MonitorSession& s) { return s.monitor->gpu_indices(); })
      .def_property_readonly("cpu_indices",
                             [](const MonitorSession& s) { return s.monitor->cpu_indices(); })
      .def_property_readonly("devices",
                             [](const MonitorSession& s) { return s.session; },
                             "The Devices this monitor measures.");

  py::class_<SamplerSession, std::shared_ptr<SamplerSession>>(
      m, "PowerSampler", "zeus::PowerSampler on its own thread and device discovery (W, J).")
      .def(py::init(&make_sampler), py::arg("gpu_indices") = py::none(),
           py::arg("interval_s") = 0.1, py::arg("capacity") = 65536,
           "Discovers devices and starts sampling the GPUs.")
      .def_property_readonly("gpu_indices",
                             [](const SamplerSession& s) { return s.sampler->gpu_indices(); })
      .def("energy_j", &sampler_energy_j, py::arg("gpu_index"), py::arg("start_time") = py::none(),
           py::arg("end_time") = py::none(),
           "Energy (J) of a GPU between two Unix times (None: the first / latest sample), by "
           "trapezoid over the samples within the range; None when the range holds no sample.")
      .def(
          "samples",
          [](const SamplerSession& s, int index) {
            const double offset_s = unix_to_monotonic_s();
            std::vector<std::pair<double, double>> out;
            for (const PowerSample& sample : s.sampler->samples(index)) {
              out.emplace_back(sample.time_s - offset_s, sample.power_w);
            }
            return out;
          },
          py::arg("gpu_index"), "(Unix time, W) samples of a GPU, oldest first.")
      .def("sample_once",
           [](const SamplerSession& s) { without_gil([&] { return s.sampler->sample_once(); }); },
           "Reads every GPU once now.")
      .def("stop", [](SamplerSession& s) {
        py::gil_scoped_release release;
        s.sampler->stop();
      }, "Stops the sampling thread (samples stay readable).")
      .def_property_readonly("running",
                             [](const SamplerSession& s) { return s.sampler->running(); });
}

}  // namespace zeus::python
