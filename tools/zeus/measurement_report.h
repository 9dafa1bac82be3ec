// How the CLI shows a Measurement: a human table, or the stable JSON keys scripts rely on:
//   {"time_s", "gpu_energy_j": {"0": J}, "cpu_energy_j": {...}, "dram_energy_j": {...},
//    "total_energy_j", "total_energy_with_cpu_j", "average_power_w", "average_power_with_cpu_w",
//    "soc_energy": null or {"cpu_energy_mj", "gpu_energy_mj", "total_energy_mj"} (mJ or null)}
// total_energy_j is the GPUs' only (upstream Zeus's Measurement.total_energy);
// total_energy_with_cpu_j adds the CPU packages and DRAM (Measurement::total_energy_with_cpu_j).
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "zeus/monitor/energy_monitor.h"

namespace zeus::cli {

nlohmann::json measurement_json(const Measurement& m);
void print_measurement(std::ostream& out, const Measurement& m);

}  // namespace zeus::cli
