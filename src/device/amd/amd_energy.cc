#include "device/amd/amd_energy.h"

#include <cmath>
#include <utility>

#include "zeus/common/log.h"

namespace zeus {

Result<AmdEnergyReading> checked_energy_reading(AmdEnergyReading reading, const char* function) {
  if (!(reading.resolution_uj > 0) || !std::isfinite(reading.resolution_uj)) {
    return fail(ErrorCode::kInternal, std::string(function) + " reported an energy resolution of " +
                                          std::to_string(reading.resolution_uj) + " uJ");
  }
  return reading;
}

uint64_t AmdEnergyAccumulator::add(const AmdEnergyReading& reading) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!started_) {
    energy_uj_ = reading.energy_uj();
    started_ = true;
  } else if (reading.count >= last_count_) {
    energy_uj_ += static_cast<long double>(reading.count - last_count_) * reading.resolution_uj;
  } else {
    log_warning(name_ + "'s energy counter went backwards (driver reloaded?); counting on from it");
    energy_uj_ += reading.energy_uj();
  }
  last_count_ = reading.count;
  return static_cast<uint64_t>(energy_uj_ / 1000);
}

std::string judge_amd_energy_counter(long double counted_uj, long double expected_uj,
                                     double window_s, AmdEnergyRatioBounds bounds) {
  if (counted_uj <= 0) {
    return "the energy counter did not move in " + std::to_string(window_s) + " s";
  }
  if (expected_uj <= 0) return "the GPU reports 0 W, so the energy counter cannot be checked";
  const double ratio = static_cast<double>(counted_uj / expected_uj);
  if (!(ratio > bounds.min_ratio && ratio < bounds.max_ratio)) {
    return "the energy counter accumulated " + std::to_string(static_cast<double>(counted_uj)) +
           " uJ in " + std::to_string(window_s) + " s while average power predicts " +
           std::to_string(static_cast<double>(expected_uj)) + " uJ";
  }
  return "";
}

}  // namespace zeus
