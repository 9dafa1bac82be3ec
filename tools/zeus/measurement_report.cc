#include "measurement_report.h"

#include <string>

#include "cli_util.h"

namespace zeus::cli {
namespace {

nlohmann::json energy_map(const std::map<int, double>& energy_j) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [index, joules] : energy_j) j[std::to_string(index)] = joules;
  return j;
}

void print_rows(std::ostream& out, const char* label, const std::map<int, double>& energy_j,
                double time_s) {
  for (const auto& [index, joules] : energy_j) {
    std::string name = std::string(label) + " " + std::to_string(index);
    name.resize(14, ' ');
    out << "  " << name << format_fixed(joules, 3) << " J";
    if (time_s > 0) out << "  (" << format_fixed(joules / time_s, 1) << " W avg)";
    out << "\n";
  }
}

}  // namespace

nlohmann::json measurement_json(const Measurement& m) {
  nlohmann::json j;
  j["time_s"] = m.time_s;
  j["gpu_energy_j"] = energy_map(m.gpu_energy_j);
  j["cpu_energy_j"] = energy_map(m.cpu_energy_j);
  j["dram_energy_j"] = energy_map(m.dram_energy_j);
  j["total_energy_j"] = m.total_energy_j();
  j["total_energy_with_cpu_j"] = m.total_energy_with_cpu_j();
  j["average_power_w"] = m.time_s > 0 ? m.total_energy_j() / m.time_s : 0.0;
  j["average_power_with_cpu_w"] = m.time_s > 0 ? m.total_energy_with_cpu_j() / m.time_s : 0.0;
  return j;
}

void print_measurement(std::ostream& out, const Measurement& m) {
  out << "  time          " << format_fixed(m.time_s, 3) << " s\n";
  print_rows(out, "GPU", m.gpu_energy_j, m.time_s);
  print_rows(out, "CPU", m.cpu_energy_j, m.time_s);
  print_rows(out, "DRAM", m.dram_energy_j, m.time_s);
  if (m.gpu_energy_j.empty() && m.cpu_energy_j.empty()) {
    out << "  (no measurable device: see 'zeus devices')\n";
    return;
  }
  out << "  total (GPUs)  " << format_fixed(m.total_energy_j(), 3) << " J";
  if (m.time_s > 0) out << "  (" << format_fixed(m.total_energy_j() / m.time_s, 1) << " W avg)";
  out << "\n";
  if (!m.cpu_energy_j.empty()) {
    out << "  total (+CPUs) " << format_fixed(m.total_energy_with_cpu_j(), 3) << " J";
    if (m.time_s > 0) {
      out << "  (" << format_fixed(m.total_energy_with_cpu_j() / m.time_s, 1) << " W avg)";
    }
    out << "\n";
  }
}

}  // namespace zeus::cli
