// The energy counter logic both AMD backends (rocm_smi and AMD SMI) share: a reading of the
// driver's counter (count x resolution uJ), the accumulator that turns successive readings into a
// monotone mJ total, and the plausibility check (a pure decision: numbers in, verdict out).
//
// Units: the counter in counts of `resolution_uj` microjoules; totals in mJ with the sub-mJ
// remainder kept, so repeated reads do not drift.
// Thread-safety: AmdEnergyAccumulator guards itself; the rest is pure.
//
//   zeus::AmdEnergyAccumulator total("AMD Instinct MI300X");
//   uint64_t mj = total.add(zeus::AmdEnergyReading{count, resolution_uj});
//   std::string why = zeus::judge_amd_energy_counter(counted_uj, expected_uj, 0.5, {0.1, 10});
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "zeus/common/result.h"

namespace zeus {

struct AmdEnergyReading {
  uint64_t count = 0;
  float resolution_uj = 0;
  long double energy_uj() const { return static_cast<long double>(count) * resolution_uj; }
};

// The reading, or Internal when its resolution is not a positive finite number (the counter
// cannot be trusted). `function` names the call that produced it.
Result<AmdEnergyReading> checked_energy_reading(AmdEnergyReading reading, const char* function);

// Turns raw counter readings into a monotone total in mJ. The first reading sets the start; a
// counter that goes backwards (driver reloaded) is counted on from its new value, with a warning.
class AmdEnergyAccumulator {
 public:
  explicit AmdEnergyAccumulator(std::string gpu_name) : name_(std::move(gpu_name)) {}
  uint64_t add(const AmdEnergyReading& reading);

 private:
  std::string name_;
  std::mutex mutex_;
  bool started_ = false;    // guarded by mutex_
  uint64_t last_count_ = 0; // guarded by mutex_
  long double energy_uj_ = 0;  // guarded by mutex_
};

// The accepted range of counted / expected energy over the probe window.
struct AmdEnergyRatioBounds {
  double min_ratio;
  double max_ratio;
};

// Why a counter is not plausible, or "" when it is: it must have moved, the expected energy
// (power x window) must be positive, and counted / expected must lie strictly inside `bounds`.
std::string judge_amd_energy_counter(long double counted_uj, long double expected_uj,
                                     double window_s, AmdEnergyRatioBounds bounds);

}  // namespace zeus
