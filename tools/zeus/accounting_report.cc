#include "accounting_report.h"

#include "cli_util.h"
#include "zeus/client/online_intensity.h"

namespace zeus::cli {
namespace {

// "gCO2eq/kWh" -> "gCO2eq".
std::string amount_unit(const std::string& per_kwh) {
  const size_t slash = per_kwh.rfind("/kWh");
  return slash == std::string::npos ? per_kwh : per_kwh.substr(0, slash);
}

nlohmann::json by_index(const std::map<int, double>& values) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [index, v] : values) out[std::to_string(index)] = v;
  return out;
}

}  // namespace

Accounting start_accounting(const std::string& key, const std::string& spec, Devices& devices,
                            Clock& clock, const EnergyMonitorOptions& options) {
  auto provider = intensity_provider_from_spec(spec, key == "carbon" ? "gCO2eq/kWh" : "$/kWh");
  if (!provider) die("--" + std::string(key == "carbon" ? "carbon" : "price") + ": " +
                     provider.error().message);
  AccountingMonitorOptions accounting;
  accounting.monitor = options;
  accounting.monitor.log_file.clear();  // the plain monitor keeps the log
  auto monitor = value_or_die(AccountingMonitor::create(
      devices, clock, std::shared_ptr<IntensityProvider>(std::move(*provider)), accounting));
  return Accounting{key, key, std::move(monitor)};
}

nlohmann::json accounted_json(const AccountedMeasurement& m, const std::string& provider) {
  nlohmann::json j = {{"provider", provider},
                      {"unit", amount_unit(m.unit)},
                      {"complete", m.complete},
                      {"gpu", by_index(m.gpu)},
                      {"cpu", by_index(m.cpu)},
                      {"dram", by_index(m.dram)}};
  if (m.complete) {
    j["gpu_total"] = m.gpu_total();
    j["total"] = m.total();
  } else {
    j["gpu_total"] = nullptr;
    j["total"] = nullptr;
    j["unknown_reason"] = m.unknown_reason;
  }
  return j;
}

void print_accounted(std::ostream& out, const std::string& label, const AccountedMeasurement& m,
                     const std::string& provider) {
  std::string padded = label;
  padded.resize(14, ' ');
  if (!m.complete) {
    out << "  " << padded << "unknown (" << m.unknown_reason << ")\n";
    return;
  }
  out << "  " << padded << format_fixed(m.total(), 4) << " " << amount_unit(m.unit) << " ("
      << provider << ", " << m.parts.size() << " interval" << (m.parts.size() == 1 ? "" : "s")
      << ")\n";
}

}  // namespace zeus::cli
