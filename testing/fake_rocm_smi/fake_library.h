// The per-process side of the fake AMD libraries (librocm_smi64.so and libamd_smi.so): the state
// of fake_state.h held in memory, brought up to date with ZEUS_FAKE_ROCM_SMI_STATE before every
// call, error injection by function name, device lookup, and changes written back to the file.
// Both fakes read the same file, as both real libraries see the same GPUs; each passes its own
// status codes. Header-only; one FakeLibrary per fake library (a global there).
// Thread-safety: every method serialises on the object's mutex.
//
//   zeus::fake_rocm_smi::FakeLibrary<uint32_t> lib({0, 1, 3});  // success, invalid, lost
//   return lib.with_device("rsmi_dev_power_cap_get", index, false, [&](json& d, json&) { ... });
#pragma once

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>

#include "fake_state.h"

namespace zeus::fake_rocm_smi {

// The statuses a fake library answers for success, a bad device index and a lost device.
template <typename Status>
struct StatusCodes {
  Status success;
  Status invalid;
  Status lost;
};

template <typename Status>
class FakeLibrary {
 public:
  explicit FakeLibrary(StatusCodes<Status> codes) : codes_(codes) {}

  // Runs `body(state)` on the fresh state under the lock, after `function`'s injected error.
  template <typename Body>
  Status with_state(const char* function, Body body) {
    std::lock_guard<std::mutex> lock(mutex_);
    refresh();
    if (Status status = injected(function); status != codes_.success) return status;
    return body(state_);
  }

  // Runs `body(device, state)` for a per-device read (mutate = false) or change (mutate = true),
  // after error injection and device lookup; a change is written back to the state file.
  template <typename Body>
  Status with_device(const char* function, uint64_t index, bool mutate, Body body) {
    std::lock_guard<std::mutex> lock(mutex_);
    refresh();
    if (Status status = injected(function); status != codes_.success) return status;
    Status status = codes_.success;
    json* device = find_device(state_, index, &status);
    if (device == nullptr) return status;
    const std::string path = state_path();
    if (!mutate || path.empty()) return body(*device, state_);
    Status result = codes_.success;
    bool written = update_state(path, [&](json& fresh) {
      Status lookup = codes_.success;
      json* fresh_device = find_device(fresh, index, &lookup);
      result = fresh_device == nullptr ? lookup : body(*fresh_device, fresh);
      state_ = fresh;
    });
    return written ? result : codes_.lost;
  }

 private:
  static std::string state_path() {
    const char* path = std::getenv("ZEUS_FAKE_ROCM_SMI_STATE");
    return path != nullptr ? path : "";
  }

  // Brings state_ up to date with the state file, or with the in-memory default when
  // ZEUS_FAKE_ROCM_SMI_STATE is unset (a missing file is created with the default).
  void refresh() {
    const std::string path = state_path();
    if (!loaded_ || source_ != path) {
      state_ = default_state(1);
      source_ = path;
      loaded_ = true;
    }
    if (path.empty()) return;
    if (read_state(path, &state_)) return;
    FileLock lock(path, /*exclusive=*/true);
    write_state_unlocked(path, state_);
  }

  Status injected(const char* function) const {
    auto errors = state_.find("errors");
    if (errors == state_.end() || !errors->is_object()) return codes_.success;
    auto it = errors->find(function);
    if (it == errors->end() || !it->is_number()) return codes_.success;
    return it->template get<Status>();
  }

  json* find_device(json& state, uint64_t index, Status* status) const {
    auto& devices = state["devices"];
    if (!devices.is_array() || index >= devices.size()) {
      *status = codes_.invalid;
      return nullptr;
    }
    json& device = devices[index];
    if (device.value("lost", false)) {
      *status = codes_.lost;
      return nullptr;
    }
    *status = codes_.success;
    return &device;
  }

  StatusCodes<Status> codes_;
  std::mutex mutex_;
  json state_;           // guarded by mutex_
  bool loaded_ = false;  // guarded by mutex_
  std::string source_;   // guarded by mutex_; the state file state_ came from, "" = in memory
};

}  // namespace zeus::fake_rocm_smi
