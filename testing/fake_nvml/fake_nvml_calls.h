// The fake NVML's shared machinery (fake_nvml.cc): the state under its mutex, the prologue of
// every device call (call counts, init, the state file's refresh, the handle, injected errors),
// and the read/change helpers the entry points of fake_nvml.cc and fake_nvml_clocks.cc use.
#pragma once

#include <cstddef>
#include <mutex>
#include <nlohmann/json.hpp>

#include "device/nvml/nvml_api.h"
#include "fake_nvml/fake_state.h"

#define FAKE_NVML_EXPORT extern "C" __attribute__((visibility("default")))

namespace zeus::fake_nvml::calls {

using nlohmann::json;
using namespace zeus::nvml;

std::mutex& mutex();
FakeState& state();

// Common prologue of every device call, under mutex(): counts the call, checks init, picks up
// another process's change of the state file, checks the handle and injected errors. Sets
// *index (and *call_number: this call's number on this device); returns the code to answer, or
// NVML_SUCCESS to go on.
nvmlReturn_t enter(const char* function, nvmlDevice_t device, size_t* index,
                   long* call_number = nullptr);

inline nvmlReturn_t copy_list(const json& list, unsigned int* count, unsigned int* out) {
  if (count == nullptr) return kNvmlErrorInvalidArgument;
  const unsigned int needed = static_cast<unsigned int>(list.size());
  if (*count < needed || (needed > 0 && out == nullptr)) {
    *count = needed;
    return kNvmlErrorInsufficientSize;
  }
  for (unsigned int i = 0; i < needed; ++i) out[i] = list[i].get<unsigned int>();
  *count = needed;
  return kNvmlSuccess;
}

// Runs a read of device state: prologue, then `read(device_json)`.
template <typename Read>
nvmlReturn_t read_device(const char* function, nvmlDevice_t device, Read read) {
  std::lock_guard<std::mutex> lock(mutex());
  size_t index = 0;
  if (nvmlReturn_t rc = enter(function, device, &index); rc != kNvmlSuccess) return rc;
  return read(state().device(index));
}

// Runs a change of device state: prologue, `check(device_json)` on the current state, then
// `change(device_json, state_json)` on the freshest state, written back.
template <typename Check, typename Change>
nvmlReturn_t change_device(const char* function, nvmlDevice_t device, Check check, Change change) {
  std::lock_guard<std::mutex> lock(mutex());
  size_t index = 0;
  if (nvmlReturn_t rc = enter(function, device, &index); rc != kNvmlSuccess) return rc;
  if (nvmlReturn_t rc = check(state().device(index)); rc != kNvmlSuccess) return rc;
  state().mutate([&](json& state) {
    if (index < state["devices"].size()) change(state["devices"][index], state, index);
  });
  return kNvmlSuccess;
}

inline nvmlReturn_t check_nothing(const json&) { return kNvmlSuccess; }

}  // namespace zeus::fake_nvml::calls
