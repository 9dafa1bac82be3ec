// Gpu's optional readings: a backend without them answers NotSupported.
#include "zeus/device/device.h"

namespace zeus {

Result<uint32_t> Gpu::memory_average_power_mw() {
  return fail(ErrorCode::kNotSupported, "GPU " + std::to_string(physical_index()) + " (" + name() +
                                            ") does not report its memory's power");
}

Result<uint32_t> Gpu::sm_clock_mhz() {
  return fail(ErrorCode::kNotSupported, "GPU " + std::to_string(physical_index()) + " (" + name() +
                                            ") does not report its SM clock");
}

Result<int> Gpu::temperature_c() {
  return fail(ErrorCode::kNotSupported, "GPU " + std::to_string(physical_index()) + " (" + name() +
                                            ") does not report its temperature");
}

}  // namespace zeus
