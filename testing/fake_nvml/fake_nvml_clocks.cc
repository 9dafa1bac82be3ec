// The fake NVML's clocks (fake_nvml.cc has the rest): the supported clocks, the clock in force,
// and the locks, kept in the state file.
#include <algorithm>
#include <string>

#include "fake_nvml/fake_nvml_calls.h"

using namespace zeus::fake_nvml::calls;
using namespace zeus::nvml;

// The clock in force: the top of a lock, else the highest supported clock (the fake GPU boosts);
// "sm_clock_mhz" in the state overrides it (a GPU a power cap throttled).
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type,
                                                     unsigned int* mhz) {
  return read_device("nvmlDeviceGetClockInfo", device, [&](const json& dev) {
    if (mhz == nullptr) return kNvmlErrorInvalidArgument;
    const bool memory = type == kNvmlClockMem;
    if (!memory && type != kNvmlClockSm && type != kNvmlClockGraphics) {
      return kNvmlErrorNotSupported;
    }
    const char* locked = memory ? "locked_memory_clocks_mhz" : "locked_sm_clocks_mhz";
    const char* supported = memory ? "memory_clocks_mhz" : "graphics_clocks_mhz";
    if (!memory && dev.contains("sm_clock_mhz") && dev["sm_clock_mhz"].is_number()) {
      *mhz = dev["sm_clock_mhz"].get<unsigned int>();
    } else if (dev.contains(locked) && dev[locked].is_array() && dev[locked].size() == 2) {
      *mhz = dev[locked][1].get<unsigned int>();
    } else if (dev.contains(supported) && dev[supported].is_array() && !dev[supported].empty()) {
      unsigned int top = 0;
      for (const json& v : dev[supported]) top = std::max(top, v.get<unsigned int>());
      *mhz = top;
    } else {
      return kNvmlErrorNotSupported;
    }
    return kNvmlSuccess;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device,
                                                                 unsigned int* count,
                                                                 unsigned int* clocks_mhz) {
  return read_device("nvmlDeviceGetSupportedMemoryClocks", device, [&](const json& dev) {
    return copy_list(dev["memory_clocks_mhz"], count, clocks_mhz);
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t device,
                                                                   unsigned int memory_mhz,
                                                                   unsigned int* count,
                                                                   unsigned int* clocks_mhz) {
  return read_device("nvmlDeviceGetSupportedGraphicsClocks", device, [&](const json& dev) {
    bool known = false;
    for (const json& clock : dev["memory_clocks_mhz"])
      known |= clock.get<unsigned int>() == memory_mhz;
    if (!known) return kNvmlErrorNotFound;
    return copy_list(dev["graphics_clocks_mhz"], count, clocks_mhz);
  });
}

namespace {

// Lock check shared by SM and memory clocks: min <= max, both within the supported list's span.
nvmlReturn_t check_lock(const json& supported, unsigned int min_mhz, unsigned int max_mhz) {
  if (min_mhz > max_mhz || supported.empty()) return kNvmlErrorInvalidArgument;
  unsigned int lowest = supported[0].get<unsigned int>();
  unsigned int highest = lowest;
  for (const json& clock : supported) {
    lowest = std::min(lowest, clock.get<unsigned int>());
    highest = std::max(highest, clock.get<unsigned int>());
  }
  if (min_mhz < lowest || max_mhz > highest) return kNvmlErrorInvalidArgument;
  return kNvmlSuccess;
}

// Appends one SM clock lock ({0, 0}: a reset) to "sm_clock_log" when the state file asked for
// the log by holding that array (opt-in: a job that locks clocks per instruction would otherwise
// grow every state file).
void log_sm_clocks(json& state, size_t index, unsigned int min_mhz, unsigned int max_mhz) {
  const auto log = state.find("sm_clock_log");
  if (log == state.end() || !log->is_array()) return;
  log->push_back({{"index", index},
                  {"min_mhz", min_mhz},
                  {"max_mhz", max_mhz},
                  {"time_ns", zeus::fake_nvml::realtime_ns()}});
}

}  // namespace

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device,
                                                           unsigned int min_mhz,
                                                           unsigned int max_mhz) {
  return change_device(
      "nvmlDeviceSetGpuLockedClocks", device,
      [&](const json& dev) { return check_lock(dev["graphics_clocks_mhz"], min_mhz, max_mhz); },
      [&](json& dev, json& state, size_t index) {
        if (dev.contains("power_draw_mw_by_sm_mhz")) FakeState::bring_energy_up_to_date(dev);
        dev["locked_sm_clocks_mhz"] = {min_mhz, max_mhz};
        log_sm_clocks(state, index, min_mhz, max_mhz);
      });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device) {
  return change_device("nvmlDeviceResetGpuLockedClocks", device, check_nothing,
                       [&](json& dev, json& state, size_t index) {
                         if (dev.contains("power_draw_mw_by_sm_mhz")) {
                           FakeState::bring_energy_up_to_date(dev);
                         }
                         dev["locked_sm_clocks_mhz"] = nullptr;
                         log_sm_clocks(state, index, 0, 0);
                       });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceSetMemoryLockedClocks(nvmlDevice_t device,
                                                              unsigned int min_mhz,
                                                              unsigned int max_mhz) {
  return change_device(
      "nvmlDeviceSetMemoryLockedClocks", device,
      [&](const json& dev) { return check_lock(dev["memory_clocks_mhz"], min_mhz, max_mhz); },
      [&](json& dev, json&, size_t) {
        dev["locked_memory_clocks_mhz"] = {min_mhz, max_mhz};
      });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceResetMemoryLockedClocks(nvmlDevice_t device) {
  return change_device(
      "nvmlDeviceResetMemoryLockedClocks", device, check_nothing,
      [&](json& dev, json&, size_t) { dev["locked_memory_clocks_mhz"] = nullptr; });
}
