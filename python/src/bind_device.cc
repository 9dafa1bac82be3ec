// _zeus_cpp.Devices and _zeus_cpp.Gpu: discover() and the Gpu interface of zeus/device/device.h,
// in the
// hardware's units (mW, mJ, MHz). zeus_cpp.device builds the Python Zeus's GPUs API on them.
#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "zeus/device/rapl_zone.h"
#include "zeus/zeusd_client/zeusd_client.h"

namespace zeus::python {
namespace {

// A GPU of a DeviceSession; keeps the session alive.
struct GpuHandle {
  std::shared_ptr<DeviceSession> session;
  size_t index = 0;
  Gpu& gpu() const { return *session->devices.gpus[index]; }
};

GpuHandle gpu_at(const std::shared_ptr<DeviceSession>& session, int index) {
  const int count = static_cast<int>(session->devices.gpus.size());
  if (index < 0) {
    raise_error(Error{ErrorCode::kInvalidArgument,
                      "GPU index " + std::to_string(index) +
                          " is negative: indices count from 0 over the visible GPUs"});
  }
  if (index >= count) {
    raise_error(Error{ErrorCode::kNotFound, "GPU index " + std::to_string(index) +
                                                " does not exist (" + std::to_string(count) +
                                                " visible GPU" + (count == 1 ? ")" : "s)")});
  }
  return GpuHandle{session, static_cast<size_t>(index)};
}

}  // namespace

Clock& system_clock() {
  static SystemClock clock;
  return clock;
}

std::shared_ptr<DeviceSession> DeviceSession::discover() {
  Result<Devices> devices;
  {
    py::gil_scoped_release release;
    // Through zeusd when ZEUSD_SOCK_PATH is set, like the C++ tools.
    devices = zeus::discover_devices(DiscoverOptions::from_environment());
  }
  auto session = std::make_shared<DeviceSession>();
  session->devices = unwrap(std::move(devices));
  return session;
}

void bind_device(py::module_& m) {
  m.def(
      "get_current_rapl_zone_id",
      [](std::optional<int> pid) {
        return without_gil([&] { return get_current_rapl_zone_id(pid); });
      },
      py::arg("pid") = py::none(),
      "The RAPL package zone id of the socket process `pid` (None: this one) last ran on "
      "(ZEUS_SYSFS_ROOT / ZEUS_POWERCAP_ROOT apply).");
  py::class_<DeviceSession, std::shared_ptr<DeviceSession>>(
      m, "Devices", "The GPUs and CPUs found by one discovery (zeus::discover).")
      .def_static("discover", &DeviceSession::discover,
                  "Discovers devices from the environment: ZEUS_NVML_PATH, ZEUS_AMDSMI_PATH, "
                  "ZEUS_ROCM_SMI_PATH, ZEUS_POWERCAP_ROOT, CUDA_VISIBLE_DEVICES, "
                  "HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES.")
      .def_property_readonly(
          "gpu_count", [](const DeviceSession& s) { return s.devices.gpus.size(); },
          "Number of visible GPUs.")
      .def_property_readonly(
          "cpu_count", [](const DeviceSession& s) { return s.devices.cpus.size(); },
          "Number of readable RAPL CPU packages.")
      .def("gpu", &gpu_at, py::arg("index"),
           "The GPU the framework calls `index` (NotFoundError past the end).")
      .def_property_readonly(
          "backends",
          [](const DeviceSession& s) {
            std::vector<std::tuple<std::string, bool, std::string>> out;
            for (const auto& b : s.devices.backends) out.emplace_back(b.backend, b.used, b.detail);
            return out;
          },
          "(backend, used, detail) per backend tried: why each was used or skipped.");

  py::class_<GpuHandle>(m, "Gpu", "One GPU of a Devices discovery; units mW, mJ, MHz.")
      .def_property_readonly(
          "index", [](const GpuHandle& g) { return g.index; }, "Framework-visible index.")
      .def_property_readonly("name", [](const GpuHandle& g) { return g.gpu().name(); })
      .def_property_readonly("uuid", [](const GpuHandle& g) { return g.gpu().uuid(); })
      .def_property_readonly(
          "architecture",
          [](const GpuHandle& g) { return architecture_name(g.gpu().architecture()); })
      .def_property_readonly("physical_index",
                             [](const GpuHandle& g) { return g.gpu().physical_index(); })
      .def(
          "power_limit_range_mw",
          [](const GpuHandle& g) {
            auto range = without_gil([&] { return g.gpu().power_limit_range_mw(); });
            return std::make_pair(range.min_mw, range.max_mw);
          },
          "(min_mw, max_mw).")
      .def("default_power_limit_mw",
           [](const GpuHandle& g) {
             return without_gil([&] { return g.gpu().default_power_limit_mw(); });
           })
      .def("power_limit_mw",
           [](const GpuHandle& g) { return without_gil([&] { return g.gpu().power_limit_mw(); }); })
      .def(
          "set_power_limit_mw",
          [](const GpuHandle& g, int64_t limit_mw) {
            require(limit_mw >= 0 && limit_mw <= UINT32_MAX,
                    "power limit " + std::to_string(limit_mw) + " mW is out of range");
            without_gil(
                [&] { return g.gpu().set_power_limit_mw(static_cast<uint32_t>(limit_mw)); });
          },
          py::arg("limit_mw"), "Sets the power limit (PermissionDeniedError without root).")
      .def("reset_power_limit",
           [](const GpuHandle& g) { without_gil([&] { return g.gpu().reset_power_limit(); }); })
      .def("instant_power_mw",
           [](const GpuHandle& g) {
             return without_gil([&] { return g.gpu().instant_power_mw(); });
           })
      .def("average_power_mw",
           [](const GpuHandle& g) {
             return without_gil([&] { return g.gpu().average_power_mw(); });
           })
      .def("memory_average_power_mw",
           [](const GpuHandle& g) {
             return without_gil([&] { return g.gpu().memory_average_power_mw(); });
           })
      .def("temperature_c",
           [](const GpuHandle& g) { return without_gil([&] { return g.gpu().temperature_c(); }); })
      .def(
          "power_scope",
          [](const GpuHandle& g) {
            py::gil_scoped_release release;
            return power_scope_name(g.gpu().power_scope());
          },
          "\"gpu\", or \"module\" on C2C superchips whose power covers CPU + GPU.")
      .def("has_energy_counter",
           [](const GpuHandle& g) {
             py::gil_scoped_release release;
             return g.gpu().has_energy_counter();
           })
      .def(
          "total_energy_mj",
          [](const GpuHandle& g) { return without_gil([&] { return g.gpu().total_energy_mj(); }); })
      .def("persistence_mode",
           [](const GpuHandle& g) {
             return without_gil([&] { return g.gpu().persistence_mode(); });
           })
      .def(
          "set_persistence_mode",
          [](const GpuHandle& g, bool enabled) {
            without_gil([&] { return g.gpu().set_persistence_mode(enabled); });
          },
          py::arg("enabled"))
      .def("supported_memory_clocks_mhz",
           [](const GpuHandle& g) {
             return without_gil([&] { return g.gpu().supported_memory_clocks_mhz(); });
           })
      .def("supported_sm_clocks_mhz",
           [](const GpuHandle& g) {
             return without_gil([&] { return g.gpu().supported_sm_clocks_mhz(); });
           })
      .def(
          "lock_sm_clocks_mhz",
          [](const GpuHandle& g, uint32_t min_mhz, uint32_t max_mhz) {
            without_gil([&] { return g.gpu().lock_sm_clocks_mhz(min_mhz, max_mhz); });
          },
          py::arg("min_mhz"), py::arg("max_mhz"))
      .def("reset_sm_clocks",
           [](const GpuHandle& g) { without_gil([&] { return g.gpu().reset_sm_clocks(); }); })
      .def(
          "lock_memory_clocks_mhz",
          [](const GpuHandle& g, uint32_t min_mhz, uint32_t max_mhz) {
            without_gil([&] { return g.gpu().lock_memory_clocks_mhz(min_mhz, max_mhz); });
          },
          py::arg("min_mhz"), py::arg("max_mhz"))
      .def("reset_memory_clocks",
           [](const GpuHandle& g) { without_gil([&] { return g.gpu().reset_memory_clocks(); }); });
}

}  // namespace zeus::python
