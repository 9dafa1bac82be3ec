// _zeus_cpp.PowerMonitor and _zeus_cpp.TemperatureMonitor: the cores of
// zeus_cpp.monitor.PowerMonitor and zeus_cpp.monitor.TemperatureMonitor, over their own device
// discovery. Times cross this boundary as Unix seconds (time.time()); the C++ monitors keep the
// clock's monotonic seconds, converted here with the offset taken when the monitor was created
// (so a sample keeps the same Unix time in every answer).
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "zeus/monitor/power_monitor.h"
#include "zeus/monitor/temperature_monitor.h"

namespace zeus::python {
namespace {

// Seconds to add to a Unix time to get the clock's monotonic time.
double unix_to_monotonic_s() { return system_clock().now_s() - system_clock().unix_time_s(); }

// The devices `indices` names (None: all; [] none), keyed by index; errors name the bad index
// and, when there is no such device at all, why (`none_reason`).
template <typename Device>
std::map<int, Device*> select_devices(const std::vector<std::unique_ptr<Device>>& devices,
                                      const std::optional<std::vector<int>>& indices,
                                      const std::string& what, const std::string& none_reason) {
  require_non_negative(indices, what.c_str());
  std::map<int, Device*> selected;
  if (!indices) {
    for (size_t i = 0; i < devices.size(); ++i) selected[static_cast<int>(i)] = devices[i].get();
    return selected;
  }
  for (int index : *indices) {
    if (static_cast<size_t>(index) >= devices.size()) {
      raise_error(Error{ErrorCode::kNotFound,
                        what + " index " + std::to_string(index) + " does not exist (" +
                            std::to_string(devices.size()) + " visible" +
                            (devices.empty() ? ": " + none_reason : std::string()) + ")"});
    }
    require(selected.emplace(index, devices[static_cast<size_t>(index)].get()).second,
            what + " index " + std::to_string(index) + " is listed twice");
  }
  return selected;
}

// Why discovery found no device of a backend ("rapl", "nvml", ...), for error messages.
std::string backend_reason(const Devices& devices, const std::string& backend) {
  for (const BackendReport& report : devices.backends) {
    if (report.backend == backend && !report.used) return report.detail;
  }
  return "none found";
}

std::map<int, Gpu*> select_gpus(DeviceSession& session,
                                const std::optional<std::vector<int>>& indices) {
  require(!indices || !indices->empty(),
          "gpu_indices must be None (every visible GPU) or non-empty");
  return select_devices(session.devices.gpus, indices, "GPU", "no GPU");
}

// A Unix-time argument: InvalidArgumentError naming it when not finite.
std::optional<double> checked_unix_s(const char* name, std::optional<double> time) {
  if (time && !std::isfinite(*time)) {
    raise_error(Error{ErrorCode::kInvalidArgument, std::string(name) +
                                                       " must be a finite Unix time, got " +
                                                       std::string(py::str(py::float_(*time)))});
  }
  return time;
}

std::optional<double> to_monotonic(std::optional<double> unix_s, double offset_s) {
  if (!unix_s) return std::nullopt;
  return *unix_s + offset_s;
}

std::optional<PowerDomain> domain_of(const std::optional<std::string>& name) {
  if (!name) return std::nullopt;
  return unwrap(parse_power_domain(*name));
}

// A monitor over its own device discovery, with the Unix-time offset fixed at its creation.
template <typename Monitor>
struct TimelineSession {
  double offset_s = unix_to_monotonic_s();
  std::shared_ptr<DeviceSession> session = DeviceSession::discover();
  std::unique_ptr<Monitor> monitor;
  ~TimelineSession() {
    if (monitor) monitor->stop();
  }
};
using PowerMonitorSession = TimelineSession<PowerMonitor>;
using TemperatureMonitorSession = TimelineSession<TemperatureMonitor>;

std::shared_ptr<PowerMonitorSession> make_power_monitor(
    std::optional<std::vector<int>> gpu_indices, std::optional<double> update_period_s,
    size_t max_samples_per_gpu, std::optional<std::vector<std::string>> power_domains,
    std::optional<std::vector<int>> cpu_indices) {
  PowerMonitorOptions options;
  options.update_period_s = update_period_s;
  options.max_samples_per_gpu = max_samples_per_gpu;
  if (power_domains) {
    std::vector<PowerDomain> domains;
    for (const std::string& name : *power_domains)
      domains.push_back(unwrap(parse_power_domain(name)));
    options.domains = std::move(domains);
  }
  auto s = std::make_shared<PowerMonitorSession>();
  const Devices& devices = s->session->devices;
  // [] turns a kind off (upstream's CPU power monitor); None takes every visible one.
  std::map<int, Gpu*> gpus =
      select_devices(devices.gpus, gpu_indices, "GPU", backend_reason(devices, "nvml"));
  std::map<int, Cpu*> cpus =
      select_devices(devices.cpus, cpu_indices, "CPU package", backend_reason(devices, "rapl"));
  s->monitor = without_gil([&] {
    return PowerMonitor::create(system_clock(), std::move(gpus), std::move(cpus),
                                std::move(options));
  });
  return s;
}

// Energy (J) of a GPU between two Unix times (None: the first / latest sample); None when the
// range holds no sample. Errors name the caller's Unix times.
std::optional<double> power_energy_j(const PowerMonitorSession& s, int gpu_index,
                                     std::optional<double> start_unix_s,
                                     std::optional<double> end_unix_s,
                                     std::optional<std::string> domain_name) {
  checked_unix_s("start_time", start_unix_s);
  checked_unix_s("end_time", end_unix_s);
  if (start_unix_s && end_unix_s && *end_unix_s < *start_unix_s) {
    raise_error(Error{ErrorCode::kInvalidArgument,
                      "get_energy needs start_time <= end_time, got start_time=" +
                          std::string(py::str(py::float_(*start_unix_s))) + " and end_time=" +
                          std::string(py::str(py::float_(*end_unix_s))) + " (Unix times)"});
  }
  const PowerDomain domain = unwrap(s.monitor->resolve(domain_of(domain_name)));
  const auto span_s = s.monitor->sampler().span_s(gpu_index, domain);
  if (!span_s) return std::nullopt;
  const double offset_s = s.offset_s;
  const double t0_s = start_unix_s ? *start_unix_s + offset_s : span_s->first;
  const double t1_s = end_unix_s ? *end_unix_s + offset_s : span_s->second;
  return without_gil([&] { return s.monitor->energy_j(gpu_index, t0_s, t1_s, domain); });
}

std::shared_ptr<TemperatureMonitorSession> make_temperature_monitor(
    std::optional<std::vector<int>> gpu_indices, double update_period_s,
    size_t max_samples_per_gpu) {
  auto s = std::make_shared<TemperatureMonitorSession>();
  std::map<int, Gpu*> gpus = select_gpus(*s->session, gpu_indices);
  TemperatureMonitorOptions options;
  options.update_period_s = update_period_s;
  options.max_samples_per_gpu = max_samples_per_gpu;
  s->monitor = without_gil(
      [&] { return TemperatureMonitor::create(system_clock(), std::move(gpus), options); });
  return s;
}

}  // namespace

void bind_timelines(py::module_& m) {
  py::class_<PowerMonitorSession, std::shared_ptr<PowerMonitorSession>>(
      m, "PowerMonitor", "zeus::PowerMonitor over its own device discovery (W, J; Unix times).")
      .def(py::init(&make_power_monitor), py::arg("gpu_indices") = py::none(),
           py::arg("update_period") = py::none(), py::arg("max_samples_per_gpu") = 65536,
           py::arg("power_domains") = py::none(), py::arg("cpu_indices") = py::none(),
           "Discovers devices, checks the domains, infers the period when None, starts sampling.")
      .def_property_readonly("gpu_indices",
                             [](const PowerMonitorSession& s) { return s.monitor->gpu_indices(); })
      .def_property_readonly("cpu_indices",
                             [](const PowerMonitorSession& s) { return s.monitor->cpu_indices(); })
      .def_property_readonly(
          "update_period",
          [](const PowerMonitorSession& s) { return s.monitor->update_period_s(); })
      .def_property_readonly(
          "power_domains",
          [](const PowerMonitorSession& s) {
            std::vector<std::string> names;
            for (PowerDomain d : s.monitor->domains()) {
              names.push_back(power_domain_name(d));
            }
            return names;
          },
          "The monitored domains' names, in the order they were chosen.")
      .def(
          "resolve",
          [](const PowerMonitorSession& s, std::optional<std::string> domain) {
            return power_domain_name(unwrap(s.monitor->resolve(domain_of(domain))));
          },
          py::arg("power_domain") = py::none(),
          "The domain a query uses (None: device_instant, else device_average).")
      .def(
          "timeline",
          [](const PowerMonitorSession& s, const std::string& domain, int gpu_index,
             std::optional<double> start_unix_s, std::optional<double> end_unix_s) {
            const double offset_s = s.offset_s;
            auto samples = unwrap(s.monitor->timeline(
                unwrap(parse_power_domain(domain)), gpu_index,
                to_monotonic(checked_unix_s("start_time", start_unix_s), offset_s),
                to_monotonic(checked_unix_s("end_time", end_unix_s), offset_s)));
            std::vector<std::pair<double, double>> out;
            out.reserve(samples.size());
            for (const PowerSample& sample : samples) {
              out.emplace_back(sample.time_s - offset_s, sample.power_w);
            }
            return out;
          },
          py::arg("power_domain"), py::arg("gpu_index"), py::arg("start_time") = py::none(),
          py::arg("end_time") = py::none(),
          "[(Unix time, W)] of a domain and device (a CPU package index for a CPU domain).")
      .def(
          "power_w",
          [](const PowerMonitorSession& s, int gpu_index, std::optional<double> time_unix_s,
             std::optional<std::string> domain) {
            const auto time_s = to_monotonic(checked_unix_s("time", time_unix_s), s.offset_s);
            return unwrap(s.monitor->power_w(gpu_index, time_s, domain_of(domain)));
          },
          py::arg("gpu_index"), py::arg("time") = py::none(), py::arg("power_domain") = py::none(),
          "W of the sample closest to a Unix time (None: the newest); None without samples.")
      .def("energy_j", &power_energy_j, py::arg("gpu_index"), py::arg("start_time") = py::none(),
           py::arg("end_time") = py::none(), py::arg("power_domain") = py::none(),
           "J between two Unix times by trapezoid over the samples; None without samples there.")
      .def(
          "stop",
          [](PowerMonitorSession& s) {
            py::gil_scoped_release release;
            s.monitor->stop();
          },
          "Stops the sampling thread (samples stay readable).");

  py::class_<TemperatureMonitorSession, std::shared_ptr<TemperatureMonitorSession>>(
      m, "TemperatureMonitor", "zeus::TemperatureMonitor over its own device discovery (C).")
      .def(py::init(&make_temperature_monitor), py::arg("gpu_indices") = py::none(),
           py::arg("update_period") = 1.0, py::arg("max_samples_per_gpu") = 65536)
      .def_property_readonly(
          "gpu_indices",
          [](const TemperatureMonitorSession& s) { return s.monitor->gpu_indices(); })
      .def_property_readonly(
          "update_period",
          [](const TemperatureMonitorSession& s) { return s.monitor->update_period_s(); })
      .def(
          "timeline",
          [](const TemperatureMonitorSession& s, int gpu_index, std::optional<double> start_unix_s,
             std::optional<double> end_unix_s) {
            const double offset_s = s.offset_s;
            auto samples = unwrap(s.monitor->timeline(
                gpu_index, to_monotonic(checked_unix_s("start_time", start_unix_s), offset_s),
                to_monotonic(checked_unix_s("end_time", end_unix_s), offset_s)));
            std::vector<std::pair<double, int>> out;
            out.reserve(samples.size());
            for (const TemperatureSample& sample : samples) {
              out.emplace_back(sample.time_s - offset_s, sample.celsius);
            }
            return out;
          },
          py::arg("gpu_index"), py::arg("start_time") = py::none(),
          py::arg("end_time") = py::none(), "[(Unix time, C)] of a GPU, oldest first.")
      .def(
          "temperature_c",
          [](const TemperatureMonitorSession& s, int gpu_index, std::optional<double> time_unix_s) {
            const auto time_s = to_monotonic(checked_unix_s("time", time_unix_s), s.offset_s);
            return unwrap(s.monitor->temperature_c(gpu_index, time_s));
          },
          py::arg("gpu_index"), py::arg("time") = py::none(),
          "C of the sample closest to a Unix time (None: the newest); None without samples.")
      .def(
          "stop",
          [](TemperatureMonitorSession& s) {
            py::gil_scoped_release release;
            s.monitor->stop();
          },
          "Stops the reading thread (samples stay readable).");
}

}  // namespace zeus::python
