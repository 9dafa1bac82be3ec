// _zeus_cpp.IntensityProvider and _zeus_cpp.AccountingMonitor: the cores of
// zeus_cpp.monitor.carbon (CarbonEmissionMonitor) and zeus_cpp.monitor.price (EnergyCostMonitor).
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.h"
#include "zeus/client/online_intensity.h"
#include "zeus/monitor/accounting_monitor.h"

namespace zeus::python {
namespace {

struct ProviderHolder {
  std::shared_ptr<IntensityProvider> provider;
};

struct AccountingSession {
  std::shared_ptr<DeviceSession> session;
  std::shared_ptr<ProviderHolder> provider;
  std::unique_ptr<AccountingMonitor> monitor;
  std::mutex mutex;
};

std::shared_ptr<ProviderHolder> hold(Result<std::unique_ptr<IntensityProvider>> made) {
  auto holder = std::make_shared<ProviderHolder>();
  holder->provider = unwrap(std::move(made));
  return holder;
}

std::shared_ptr<AccountingSession> make_accounting(std::shared_ptr<ProviderHolder> provider,
                                                   std::optional<std::vector<int>> gpu_indices,
                                                   std::optional<std::vector<int>> cpu_indices,
                                                   py::object sync) {
  require_non_negative(gpu_indices, "GPU");
  require_non_negative(cpu_indices, "CPU");
  AccountingMonitorOptions options;
  options.monitor.gpu_indices = std::move(gpu_indices);
  options.monitor.cpu_indices = std::move(cpu_indices);
  if (!sync.is_none()) {
    PythonCallable callable(std::move(sync));
    options.monitor.sync = [callable] { callable.call(nullptr); };
  }
  auto session = std::make_shared<AccountingSession>();
  session->provider = provider;
  session->session = DeviceSession::discover();
  session->monitor = without_gil([&] {
    return AccountingMonitor::create(session->session->devices, system_clock(),
                                     provider->provider, std::move(options));
  });
  return session;
}

using Amounts = std::map<int, double>;
using PartTuple = std::tuple<double, double, std::optional<double>>;
using AccountedTuple = std::tuple<double, Amounts, Amounts, Amounts, bool, Amounts, Amounts,
                                  Amounts, std::string, std::string, std::vector<PartTuple>>;

AccountedTuple to_tuple(const AccountedMeasurement& m) {
  std::vector<PartTuple> parts;
  for (const AccountedPart& p : m.parts) parts.emplace_back(p.start_s, p.end_s, p.value);
  return {m.energy.time_s, m.energy.gpu_energy_j, m.energy.cpu_energy_j, m.energy.dram_energy_j,
          m.complete, m.gpu, m.cpu, m.dram, m.unit, m.unknown_reason, parts};
}

}  // namespace

void bind_accounting(py::module_& m) {
  py::class_<ProviderHolder, std::shared_ptr<ProviderHolder>>(
      m, "IntensityProvider", "A rate per kWh over time (carbon intensity or price).")
      .def_property_readonly("unit", [](const ProviderHolder& h) { return h.provider->unit(); })
      .def("describe", [](const ProviderHolder& h) { return h.provider->describe(); })
      .def(
          "value_at",
          [](ProviderHolder& h, double unix_s) {
            return without_gil([&] { return h.provider->value_at(unix_s); });
          },
          py::arg("unix_s"))
      .def("next_boundary_after",
           [](const ProviderHolder& h, double unix_s) {
             return h.provider->next_boundary_after(unix_s);
           },
           py::arg("unix_s"));
  m.def(
      "intensity_series",
      [](const std::vector<std::tuple<double, double, double>>& intervals, std::string unit,
         std::string source) {
        std::vector<IntensityInterval> list;
        for (const auto& [start, end, value] : intervals) list.push_back({start, end, value});
        auto series = IntensitySeries::create(std::move(list), std::move(unit), std::move(source));
        if (!series) return hold(tl::unexpected(series.error()));
        return hold(std::unique_ptr<IntensityProvider>(std::move(*series)));
      },
      py::arg("intervals"), py::arg("unit"), py::arg("source") = "a series",
      "A fixed series of (start_unix_s, end_unix_s, value per kWh).");
  m.def(
      "intensity_csv",
      [](const std::string& path, const std::string& location, const std::string& unit) {
        auto series = load_intensity_csv(path, location, unit);
        if (!series) return hold(tl::unexpected(series.error()));
        return hold(std::unique_ptr<IntensityProvider>(std::move(*series)));
      },
      py::arg("path"), py::arg("location") = "", py::arg("unit") = "gCO2eq/kWh");
  m.def(
      "electricity_maps",
      [](double lat, double lon, bool estimate, std::string factor, std::string key,
         std::string url, double timeout_s) {
        ElectricityMapsOptions o;
        o.latitude = lat;
        o.longitude = lon;
        o.estimate = estimate;
        o.emission_factor_type = std::move(factor);
        o.api_key = std::move(key);
        if (!url.empty()) o.base_url = std::move(url);
        o.timeout_s = timeout_s;
        return hold(electricity_maps_provider(std::move(o)));
      },
      py::arg("latitude"), py::arg("longitude"), py::arg("estimate"),
      py::arg("emission_factor_type"), py::arg("api_key"), py::arg("base_url"),
      py::arg("timeout_s"));
  m.def(
      "openei",
      [](double lat, double lon, std::string label, std::string sector, int radius,
         std::string key, std::string url, double timeout_s) {
        OpenEIOptions o;
        o.latitude = lat;
        o.longitude = lon;
        o.label = std::move(label);
        o.sector = std::move(sector);
        o.radius_miles = radius;
        o.api_key = std::move(key);
        if (!url.empty()) o.base_url = std::move(url);
        o.timeout_s = timeout_s;
        return hold(openei_provider(std::move(o)));
      },
      py::arg("latitude"), py::arg("longitude"), py::arg("label"), py::arg("sector"),
      py::arg("radius"), py::arg("api_key"), py::arg("base_url"), py::arg("timeout_s"));

  py::class_<AccountingSession, std::shared_ptr<AccountingSession>>(
      m, "AccountingMonitor", "zeus::AccountingMonitor over its own device discovery.")
      .def(py::init(&make_accounting), py::arg("provider"), py::arg("gpu_indices") = py::none(),
           py::arg("cpu_indices") = py::none(), py::arg("sync") = py::none())
      .def(
          "begin_window",
          [](AccountingSession& s, const std::string& name, bool sync) {
            without_gil([&] {
              std::lock_guard<std::mutex> lock(s.mutex);
              return s.monitor->begin_window(name, sync);
            });
          },
          py::arg("name"), py::arg("sync") = true)
      .def(
          "end_window",
          [](AccountingSession& s, const std::string& name, bool sync) {
            return to_tuple(without_gil([&] {
              std::lock_guard<std::mutex> lock(s.mutex);
              return s.monitor->end_window(name, sync);
            }));
          },
          py::arg("name"), py::arg("sync") = true,
          "(time, gpu_j, cpu_j, dram_j, complete, gpu_amount, cpu_amount, dram_amount, unit, "
          "unknown_reason, parts)")
      .def_property_readonly("gpu_indices",
                             [](const AccountingSession& s) { return s.monitor->gpu_indices(); })
      .def_property_readonly("cpu_indices",
                             [](const AccountingSession& s) { return s.monitor->cpu_indices(); });
}

}  // namespace zeus::python
