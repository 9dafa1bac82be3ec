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

void print_row(std::ostream& out, std::string name, double joules, double time_s) {
  name.resize(14, ' ');
  out << "  " << name << format_fixed(joules, 3) << " J";
  if (time_s > 0) out << "  (" << format_fixed(joules / time_s, 1) << " W avg)";
  out << "\n";
}

void print_rows(std::ostream& out, const char* label, const std::map<int, double>& energy_j,
                double time_s) {
  for (const auto& [index, joules] : energy_j) {
    print_row(out, std::string(label) + " " + std::to_string(index), joules, time_s);
  }
}

nlohmann::json optional_mj(const std::optional<double>& joules) {
  return joules ? nlohmann::json(*joules * 1000.0) : nlohmann::json(nullptr);
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
  // Upstream Zeus's JetsonMeasurement keys, in mJ as there; null without a SoC.
  j["soc_energy"] = nullptr;
  if (m.soc_energy) {
    j["soc_energy"] = {{"cpu_energy_mj", optional_mj(m.soc_energy->cpu_j)},
                       {"gpu_energy_mj", optional_mj(m.soc_energy->gpu_j)},
                       {"total_energy_mj", optional_mj(m.soc_energy->total_j)}};
  }
  return j;
}

void print_measurement(std::ostream& out, const Measurement& m) {
  out << "  time          " << format_fixed(m.time_s, 3) << " s\n";
  print_rows(out, "GPU", m.gpu_energy_j, m.time_s);
  print_rows(out, "CPU", m.cpu_energy_j, m.time_s);
  print_rows(out, "DRAM", m.dram_energy_j, m.time_s);
  if (m.soc_energy) {
    const std::pair<const char*, const std::optional<double>&> rails[] = {
        {"SoC cpu", m.soc_energy->cpu_j},
        {"SoC gpu", m.soc_energy->gpu_j},
        {"SoC total", m.soc_energy->total_j}};
    for (const auto& [label, joules] : rails) {
      if (joules) print_row(out, label, *joules, m.time_s);
    }
  }
  if (m.gpu_energy_j.empty() && m.cpu_energy_j.empty() && !m.soc_energy) {
    out << "  (no measurable device: see 'zeus devices')\n";
    return;
  }
  if (!m.gpu_energy_j.empty()) {
    out << "  total (GPUs)  " << format_fixed(m.total_energy_j(), 3) << " J";
    if (m.time_s > 0) out << "  (" << format_fixed(m.total_energy_j() / m.time_s, 1) << " W avg)";
    out << "\n";
  }
  if (!m.cpu_energy_j.empty()) {
    out << "  total (+CPUs) " << format_fixed(m.total_energy_with_cpu_j(), 3) << " J";
    if (m.time_s > 0) {
      out << "  (" << format_fixed(m.total_energy_with_cpu_j() / m.time_s, 1) << " W avg)";
    }
    out << "\n";
  }
}

}  // namespace zeus::cli
