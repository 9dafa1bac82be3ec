// PowerProfile: what the JIT profiler measured per knob setting, saved as JSON so that the next
// recurrence of a job skips profiling, and rebuilt from a monitor's CSV log for replay.
//
// File format (Python Zeus, readable by the original Zeus):
//   {"measurements": [{"power_limit": <W, int>, "energy": <J>, "time": <s>}, ...],
//    "knob": "power_limit", "gpu_model": "NVIDIA A40", "gpu_count": 1}
// "knob", "gpu_model", "gpu_count" and "max_power_w" are optional additions; with knob
// "sm_clock" each entry carries "sm_clock" (MHz, int) instead of "power_limit".
// Monitor logs: `start_time,window_name,elapsed_time,gpu{i}_energy,...` (Python Zeus); rows
// whose window name ends in `_<int>` are profiled settings (e.g. __GlobalPowerLimitOptimizer_300),
// energy is summed over the GPU columns, time is elapsed_time.
// Units: settings W or MHz (ints), energy J, time s.
// Thread-safety: free functions without shared state; concurrent saves to one path leave one
// complete file (write to a temporary file, then rename).
// Failure: a missing file is NotFound; a damaged file (bad JSON, missing or non-numeric fields,
// duplicate settings) is InvalidArgument naming the file and the fix, never half-read.
//
//   auto profile = zeus::load_power_profile("/tmp/resnet50.json");
//   if (profile) use(profile->measurements);
//   zeus::save_power_profile("/tmp/resnet50.json", *profile);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/optimizer/power_limit_selector.h"

namespace zeus {

// What the optimizer turns: the GPU power limit (settings in W) or the locked maximum SM clock
// (settings in MHz).
enum class OptimizerKnob { kPowerLimit, kSmClock };

// "power_limit" or "sm_clock".
std::string_view knob_name(OptimizerKnob knob);

struct PowerProfile {
  OptimizerKnob knob = OptimizerKnob::kPowerLimit;
  // GPU product name (Gpu::name()); empty when unknown (files written by the original Zeus).
  std::string gpu_model;
  // GPUs whose energy is summed in each measurement (all ranks); 0 when unknown.
  uint32_t gpu_count = 0;
  // MaxPower of the zeus cost in W; 0 = derive it (largest power limit x gpu_count).
  double max_power_w = 0.0;
  // One per profiled setting, in profiling order.
  std::vector<KnobMeasurement> measurements;
};

// The MaxPower to use with this profile's zeus cost: max_power_w when set, else the largest
// setting x max(gpu_count, 1) for power-limit profiles; 0 for an SM-clock profile without it.
double profile_max_power_w(const PowerProfile& profile);

// Serialises to the JSON format above (one line, no trailing newline).
std::string power_profile_to_json(const PowerProfile& profile);
// Parses the JSON format above. InvalidArgument when damaged; `source` names it in messages.
Result<PowerProfile> power_profile_from_json(std::string_view text,
                                             std::string_view source = "profile");

// Reads a profile file. NotFound when absent, InvalidArgument when damaged.
Result<PowerProfile> load_power_profile(const std::string& path);
// Writes atomically (temporary file in the same folder, then rename); creates missing folders.
Result<void> save_power_profile(const std::string& path, const PowerProfile& profile);

// InvalidArgument unless `profile` was made with `knob` on a GPU named `gpu_model` (a profile
// without a model matches any GPU).
Result<void> check_profile_matches(const PowerProfile& profile, OptimizerKnob knob,
                                   std::string_view gpu_model, std::string_view source);

// Rebuilds a power-limit profile from a monitor CSV log (gpu_count = number of GPU columns).
// When a setting appears in several rows, the last row wins (a re-profiled limit). One
// InvalidArgument naming the file, line and problem when the log is malformed or has no
// profiled settings; NotFound when the file is absent.
Result<PowerProfile> power_profile_from_monitor_log(const std::string& path);

}  // namespace zeus
