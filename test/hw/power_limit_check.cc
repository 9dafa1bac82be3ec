// Hardware check (label hw): on a real NVIDIA GPU, set the power limit to its minimum, read it
// back, then restore the original and read again. Prints one JSON line; exits non-zero on failure.
// Needs root (or CAP_SYS_ADMIN). Run by test/hw/nvml_real.sh.
#include <cstdio>

#include "zeus/device/device.h"

int main() {
  auto devices = zeus::discover(zeus::DiscoverOptions::from_environment());
  if (!devices || devices->gpus.empty()) {
    std::fprintf(stderr, "no GPU: %s\n", devices ? "none found" : devices.error().message.c_str());
    return 1;
  }
  zeus::Gpu& gpu = *devices->gpus[0];
  auto range = gpu.power_limit_range_mw();
  auto original = gpu.power_limit_mw();
  if (!range || !original) {
    std::fprintf(stderr, "cannot read limits\n");
    return 1;
  }
  auto set = gpu.set_power_limit_mw(range->min_mw);
  if (!set) {
    std::fprintf(stderr, "set failed: %s\n", set.error().to_string().c_str());
    return 1;
  }
  auto lowered = gpu.power_limit_mw();
  auto restore = gpu.set_power_limit_mw(*original);
  auto restored = gpu.power_limit_mw();
  std::printf(
      "{\"gpu\": \"%s\", \"min_mw\": %u, \"max_mw\": %u, \"original_mw\": %u, \"lowered_mw\": %u, "
      "\"restored_mw\": %u}\n",
      gpu.name().c_str(), range->min_mw, range->max_mw, *original, lowered ? *lowered : 0,
      restored ? *restored : 0);
  const bool ok = restore && lowered && *lowered == range->min_mw && restored &&
                  *restored == *original;
  return ok ? 0 : 1;
}
