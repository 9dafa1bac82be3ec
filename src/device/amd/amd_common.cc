#include "device/amd/amd_common.h"

namespace zeus {

uint32_t uw_to_mw(uint64_t value_uw) {
  const uint64_t value_mw = value_uw / 1000;
  return value_mw > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(value_mw);
}

Result<void> check_amd_clock_range(uint32_t min_mhz, uint32_t max_mhz) {
  if (min_mhz > max_mhz) {
    return fail(ErrorCode::kInvalidArgument, "clock range [" + std::to_string(min_mhz) + ", " +
                                                 std::to_string(max_mhz) +
                                                 "] MHz has its minimum above its maximum");
  }
  return ok();
}

Error amd_no_persistence_mode() {
  return Error{ErrorCode::kNotSupported,
               "AMD GPUs have no persistence mode (the amdgpu driver keeps them initialised)"};
}

Error amd_energy_counter_not_plausible(const std::string& gpu_name) {
  return Error{ErrorCode::kNotSupported,
               gpu_name +
                   "'s energy counter failed its plausibility check at start-up; measure it by "
                   "sampling power"};
}

}  // namespace zeus
