// zeusd's change path's vocabulary: the knob a GPU command (wire/zeusd_command.h) changes, the
// failure the service answers when a command is refused or fails, and what a command did.
// ZeusdService::change_gpu() (gpu_change.cc) visits the command once: each kind has its own
// validation against the device, the value a lease saves before it, and its device call.
// Thread-safety: plain values.
//
//   zeus::zeusd::GpuCommand command = zeus::zeusd::SetPowerLimit{300000};
//   zeus::zeusd::GpuKnob knob = zeus::zeusd::knob_of(command);  // kPowerLimit
#pragma once

#include <cstdint>
#include <string>

#include "wire/zeusd_command.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"

namespace zeus::zeusd {

// What a lease saves and restores, and what a persistent change is listed under: setting and
// resetting the power limit are one knob, locking and unlocking a clock kind another.
enum class GpuKnob { kPowerLimit, kPersistenceMode, kSmClocks, kMemoryClocks };

GpuKnob knob_of(const GpuCommand& command);

// Why a change was not made: the status zeusd answers for it (400 bad value, 409 leased by
// another process, 500 ...; upstream's routes map it with UpstreamRoutes::status_of), the device's
// error code where a device call failed, and a message that names the GPU.
struct ChangeError {
  int status = 500;
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

// What a change did, for the log ("set power limit 700000 -> 300000 mW").
struct ChangeDone {
  std::string description;
};

// The ChangeError for a failed device call about `what` ("GPU 0 power limit"): 400 invalid, 404
// not found, 501 not supported, 503 unavailable, else 500; a device's PermissionDenied means zeusd
// itself lacks the privilege, which is the operator's problem (500), not the client's (403).
ChangeError classify_device_error(const Error& error, const std::string& what);

}  // namespace zeus::zeusd
