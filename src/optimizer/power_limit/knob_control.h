// KnobControl: puts one knob setting (a power limit in W, or a maximum locked SM clock in MHz)
// on a group of GPUs that must share the same range, remembering the last value set so that
// setting it again does not call the driver.
//
// "Maximum" means the largest power limit of the range, or unlocked SM clocks (reset). Errors
// name the GPU and setting; PermissionDenied also names the fix (root / CAP_SYS_ADMIN / zeusd).
// Thread-safety: none; the optimizer serialises calls.
//
//   auto control = KnobControl::create({gpu0, gpu1}, OptimizerKnob::kPowerLimit);
//   auto grid = control->candidates(25, {});   // {300, 275, ..., 100}
//   control->apply(250);  control->apply_maximum();
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/device/device.h"
#include "zeus/optimizer/power_profile.h"

namespace zeus {

class KnobControl {
 public:
  // InvalidArgument when `gpus` is empty or the GPUs differ in power limit range (or SM clocks).
  static Result<KnobControl> create(std::vector<Gpu*> gpus, OptimizerKnob knob);

  OptimizerKnob knob() const { return knob_; }
  size_t gpu_count() const { return gpus_.size(); }
  // Gpu::name() of the first GPU.
  std::string gpu_model() const;
  // The maximum power limit in W x number of GPUs (MaxPower of the zeus cost, for any knob).
  double max_power_w() const;

  // Settings to profile, highest first. Power: explicit ones (each within the range) or the grid
  // from the maximum (W) downward by step (the minimum only when on the grid). SM clocks:
  // explicit ones (each supported) or every supported clock (step 0) or, per step, the highest
  // supported clock at or below max - k*step. InvalidArgument on a zero power step or an
  // unsupported explicit setting.
  Result<std::vector<uint32_t>> candidates(uint32_t step, std::vector<uint32_t> explicit_settings) const;

  // Puts `setting` on every GPU unless it is the value last set.
  Result<void> apply(uint32_t setting);
  // Puts the maximum back (largest limit / reset SM clocks) unless it is the value last set.
  Result<void> apply_maximum();

 private:
  KnobControl(std::vector<Gpu*> gpus, OptimizerKnob knob, PowerLimitRangeMw range_mw,
              std::vector<uint32_t> sm_clocks_mhz)
      : gpus_(std::move(gpus)), knob_(knob), range_mw_(range_mw),
        sm_clocks_mhz_(std::move(sm_clocks_mhz)) {}
  Result<void> set_all(uint32_t value, bool maximum);

  std::vector<Gpu*> gpus_;
  OptimizerKnob knob_;
  PowerLimitRangeMw range_mw_;
  std::vector<uint32_t> sm_clocks_mhz_;  // descending; empty for the power knob
  // Last value put on the devices: mW for power, MHz for clocks (0 = unlocked).
  std::optional<uint32_t> last_set_;
};

}  // namespace zeus
