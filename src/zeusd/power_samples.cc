#include "zeusd/power_samples.h"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

namespace zeus::zeusd {
namespace {

// uJ over seconds -> mW, saturating at what the wire's u32 holds.
uint32_t milliwatts(uint64_t before_uj, uint64_t after_uj, double elapsed_s) {
  if (after_uj <= before_uj) return 0;
  const double mw = static_cast<double>(after_uj - before_uj) / 1000.0 / elapsed_s;
  return static_cast<uint32_t>(
      std::min(mw + 0.5, static_cast<double>(std::numeric_limits<uint32_t>::max())));
}

}  // namespace

std::string event_json(const GpuPowerSample& sample) {
  return nlohmann::json{{"timestamp_ms", sample.timestamp_ms},
                        {"gpu_id", sample.gpu_id},
                        {"power_mw", sample.power_mw}}
      .dump();
}

std::string event_json(const CpuPowerSample& sample) {
  nlohmann::json dram = nullptr;
  if (sample.dram_mw) dram = *sample.dram_mw;
  return nlohmann::json{{"timestamp_ms", sample.timestamp_ms},
                        {"cpu_id", sample.cpu_id},
                        {"cpu_mw", sample.cpu_mw},
                        {"dram_mw", dram}}
      .dump();
}

bool GpuChangeFilter::changed(int gpu_id, uint32_t power_mw) {
  auto [it, inserted] = last_.try_emplace(gpu_id, power_mw);
  if (inserted) return true;
  if (it->second == power_mw) return false;
  it->second = power_mw;
  return true;
}

std::optional<CpuPowerMw> CpuPowerMeter::update(const RaplReading& reading) {
  if (!last_) {
    last_ = reading;
    return std::nullopt;
  }
  const RaplReading previous = *last_;
  const double elapsed_s = reading.time_s - previous.time_s;
  if (!(elapsed_s > 0)) return std::nullopt;  // keeps the older baseline
  last_ = reading;
  CpuPowerMw power;
  power.cpu_mw = milliwatts(previous.package_uj, reading.package_uj, elapsed_s);
  if (previous.dram_uj && reading.dram_uj) {
    power.dram_mw = milliwatts(*previous.dram_uj, *reading.dram_uj, elapsed_s);
  }
  return power;
}

}  // namespace zeus::zeusd
