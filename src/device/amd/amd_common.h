// What both AMD backends (rocm_smi's AmdGpu and AMD SMI's AmdSmiGpu) convert, check and answer
// the same way: uW -> mW, the clock range a lock must have, and the NotSupported answers for
// what AMD GPUs lack or what failed its start-up check. Pure functions, no state.
//
//   ZEUS_TRY(zeus::check_amd_clock_range(min_mhz, max_mhz));
//   return zeus::uw_to_mw(cap_uw);
#pragma once

#include <cstdint>
#include <string>

#include "zeus/common/result.h"

namespace zeus {

// uW -> mW (truncated), saturating at the largest uint32_t.
uint32_t uw_to_mw(uint64_t value_uw);

// InvalidArgument when min_mhz > max_mhz.
Result<void> check_amd_clock_range(uint32_t min_mhz, uint32_t max_mhz);

// NotSupported: AMD GPUs have no persistence mode.
Error amd_no_persistence_mode();

// NotSupported: `gpu_name`'s energy counter failed its plausibility check at start-up.
Error amd_energy_counter_not_plausible(const std::string& gpu_name);

}  // namespace zeus
