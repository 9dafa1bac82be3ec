// _zeus_cpp.EnergyMonitor: zeus_cpp.monitor.ZeusMonitor's core.
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.h"

namespace zeus::python {
namespace {

// The SoC's (cpu, gpu, total) rail energy in J, each None where the board has no such rail.
using SocTuple = std::tuple<std::optional<double>, std::optional<double>, std::optional<double>>;
using MeasurementTuple = std::tuple<double, std::map<int, double>, std::map<int, double>,
                                    std::map<int, double>, std::optional<SocTuple>>;

std::shared_ptr<MonitorSession> make_monitor(std::optional<std::vector<int>> gpu_indices,
                                             std::optional<std::vector<int>> cpu_indices,
                                             bool approx_instant_energy, std::string log_file,
                                             bool log_append, bool log_gpu_columns_only,
                                             py::object sync) {
  require_non_negative(gpu_indices, "GPU");
  require_non_negative(cpu_indices, "CPU");
  EnergyMonitorOptions options;
  options.gpu_indices = std::move(gpu_indices);
  options.cpu_indices = std::move(cpu_indices);
  options.approximate_zero_energy = approx_instant_energy;
  options.log_file = std::move(log_file);
  options.log_append = log_append;
  options.log_gpu_columns_only = log_gpu_columns_only;
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
  std::optional<SocTuple> soc;
  if (m.soc_energy) soc = SocTuple{m.soc_energy->cpu_j, m.soc_energy->gpu_j, m.soc_energy->total_j};
  return {m.time_s, m.gpu_energy_j, m.cpu_energy_j, m.dram_energy_j, soc};
}

}  // namespace

void bind_monitor(py::module_& m) {
  py::class_<MonitorSession, std::shared_ptr<MonitorSession>>(
      m, "EnergyMonitor", "zeus::EnergyMonitor over its own device discovery (J, s).")
      .def(py::init(&make_monitor), py::arg("gpu_indices") = py::none(),
           py::arg("cpu_indices") = py::none(), py::arg("approx_instant_energy") = false,
           py::arg("log_file") = "", py::arg("log_append") = false,
           py::arg("log_gpu_columns_only") = false, py::arg("sync") = py::none(),
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
          "Ends window `name`: (time_s, gpu_energy_j, cpu_energy_j, dram_energy_j, soc) where soc "
          "is None or the SoC's (cpu_j, gpu_j, total_j) rail energy. "
          "NotFoundError if it is not open.")
      .def(
          "reset_windows",
          [](MonitorSession& s) {
            py::gil_scoped_release release;
            std::lock_guard<std::mutex> lock(s.mutex);
            return s.monitor->reset_windows();
          },
          "Drops every open window; returns their names.")
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
      .def_property_readonly(
          "devices", [](const MonitorSession& s) { return s.session; },
          "The Devices this monitor measures.");
}

}  // namespace zeus::python
