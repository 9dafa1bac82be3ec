// _zeus_cpp.Cpu and the SoC reads of a Devices discovery: a RAPL package's cumulative package
// and DRAM energy (uJ) and a system-on-chip's rail energies (mJ), the Cpu and Soc interfaces of
// zeus/device/device.h. zeus_cpp.device.cpu and zeus_cpp.device.soc build upstream's CPUs and SoC
// on
// them.
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.h"

namespace zeus::python {
namespace {

// A RAPL package of a DeviceSession; keeps the session alive.
struct CpuHandle {
  std::shared_ptr<DeviceSession> session;
  size_t index = 0;
  Cpu& cpu() const { return *session->devices.cpus[index]; }
};

CpuHandle cpu_at(const std::shared_ptr<DeviceSession>& session, int index) {
  const int count = static_cast<int>(session->devices.cpus.size());
  if (index < 0 || index >= count) {
    raise_error(Error{index < 0 ? ErrorCode::kInvalidArgument : ErrorCode::kNotFound,
                      "CPU index " + std::to_string(index) + " does not exist (" +
                          std::to_string(count) + " readable RAPL package" +
                          (count == 1 ? ")" : "s)")});
  }
  return CpuHandle{session, static_cast<size_t>(index)};
}

Soc& soc_of(const DeviceSession& session) {
  if (!session.devices.soc) {
    raise_error(Error{ErrorCode::kNotFound, "no system-on-chip was found on this machine"});
  }
  return *session.devices.soc;
}

}  // namespace

void bind_cpu_soc(py::module_& m) {
  // Devices is bound in bind_device.cc (which runs first): more methods on the same class.
  py::class_<DeviceSession, std::shared_ptr<DeviceSession>> session{py::object(m.attr("Devices"))};
  session.def("cpu", &cpu_at, py::arg("index"), "RAPL package `index` (NotFoundError past the end).")
      .def_property_readonly(
          "has_soc", [](const DeviceSession& s) { return s.devices.soc != nullptr; },
          "True when a system-on-chip (NVIDIA Jetson) was found.")
      .def_property_readonly(
          "soc_name", [](const DeviceSession& s) { return soc_of(s).name(); }, "\"jetson\".")
      .def_property_readonly(
          "soc_rails", [](const DeviceSession& s) { return soc_of(s).rail_descriptions(); },
          "The rails used, e.g. \"gpu: VDD_GPU_SOC\".")
      .def(
          "soc_energy_mj",
          [](const DeviceSession& s) {
            Soc& soc = soc_of(s);
            const SocEnergyMj e = without_gil([&] { return soc.energy_mj(); });
            return std::make_tuple(e.cpu_mj, e.gpu_mj, e.total_mj);
          },
          "(cpu_mj, gpu_mj, total_mj) integrated since discovery; None for a rail the board "
          "lacks.");

  py::class_<CpuHandle>(m, "Cpu", "One RAPL CPU package of a Devices discovery; units uJ.")
      .def_property_readonly(
          "index", [](const CpuHandle& c) { return c.index; }, "Position among the packages.")
      .def_property_readonly("name", [](const CpuHandle& c) { return c.cpu().name(); })
      .def_property_readonly("has_dram", [](const CpuHandle& c) { return c.cpu().has_dram(); })
      .def(
          "package_energy_uj",
          [](const CpuHandle& c) {
            return without_gil([&] { return c.cpu().package_energy_uj(); }) +
                   c.cpu().package_counter_start_uj();
          },
          "The package's energy counter in uJ, wraparounds added (monotone).")
      .def(
          "dram_energy_uj",
          [](const CpuHandle& c) -> std::optional<uint64_t> {
            if (!c.cpu().has_dram()) return std::nullopt;
            return without_gil([&] { return c.cpu().dram_energy_uj(); }) +
                   c.cpu().dram_counter_start_uj();
          },
          "The DRAM zone's counter in uJ (None without a DRAM zone).");
}

}  // namespace zeus::python
