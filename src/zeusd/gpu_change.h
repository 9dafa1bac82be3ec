// GpuChange: one change a zeusd client asks of one GPU, already parsed from whichever API it came
// through (our /gpu/{i}/<knob> JSON routes or upstream's query-string routes), and the failure
// the service answers when the change is refused or fails. ZeusdService::change_gpu() validates
// it against the device, takes the caller's lease and applies it; both APIs call that one path.
// Thread-safety: plain values.
//
//   zeus::zeusd::GpuChange change{zeus::zeusd::GpuKnob::kPowerLimit};
//   change.value_a = 300000;  // mW
#pragma once

#include <cstdint>
#include <string>

#include "zeus/device.h"
#include "zeus/result.h"

namespace zeus::zeusd {

enum class GpuKnob { kPowerLimit, kPersistenceMode, kSmClocks, kMemoryClocks };

struct GpuChange {
  GpuKnob knob = GpuKnob::kPowerLimit;
  bool reset = false;    // power limit: back to the default; clocks: unlock
  uint32_t value_a = 0;  // power limit (mW) or the lowest clock (MHz)
  uint32_t value_b = 0;  // the highest clock (MHz)
  bool enabled = false;  // persistence mode
};

// Why a change was not made: the status our own API answers (400 bad value, 409 leased by
// another process, 500 ...), the device's error code where a device call failed, and a message
// that names the GPU.
struct ChangeError {
  int status = 500;
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

// What a change did, for the log and our API's answer ("set power limit 700000 -> 300000 mW").
struct ChangeDone {
  std::string description;
};

// One change made on the device, without validation or lease (the change path does those first):
// the device call's result and what it did ("set power limit 700000 -> 300000 mW"; `before_mw`
// is the power limit before, for that text).
struct AppliedChange {
  Result<void> result;
  std::string description;
};
AppliedChange apply_gpu_change(Gpu& gpu, const GpuChange& change, uint32_t before_mw);

// The ChangeError for a failed device call about `what` ("GPU 0 power limit"): 400 invalid, 404
// not found, 501 not supported, 503 unavailable, else 500; a device's PermissionDenied means zeusd
// itself lacks the privilege, which is the operator's problem (500), not the client's (403).
ChangeError classify_device_error(const Error& error, const std::string& what);

}  // namespace zeus::zeusd
