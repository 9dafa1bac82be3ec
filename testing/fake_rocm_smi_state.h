// FakeRocmSmiState: the test-side handle on the state file of the fake AMD libraries
// (librocm_smi64.so and libamd_smi.so read the same file; fake_amdsmi.cc lists its extra fields).
//
// The constructor writes a state file (format: testing/fake_rocm_smi/fake_state.h) with N
// MI250X-like devices — 300 W drawn, power cap 500 W in [100, 560] W (default 500 W), energy
// resolution 15.3 uJ, counter at 0 — at a fixed fake time, and points ZEUS_FAKE_ROCM_SMI_STATE at
// it. The fake library re-reads the file on every call, so a change made here is seen by the very
// next rocm_smi call; what the library changes (caps, clocks) is read back with device_number().
// Time stands still until advance_time_s() (or a FakeRocmSmiClock sleep) moves it; the energy
// counter grows by power x scale x time. Units: W and s in this API, the fake's uW/ns inside.
// Thread-safety: one test thread; the file itself is locked against the library.
//
//   zeus::testing::FakeRocmSmiState state(2);           // two GPUs
//   state.set_error("rsmi_dev_power_cap_set", 4);        // RSMI_STATUS_PERMISSION
//   auto gpus = zeus::open_amd_gpus(ZEUS_FAKE_ROCM_SMI_PATH, clock, 0);
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "zeus/common/clock.h"

namespace zeus::testing {

class FakeRocmSmiState {
 public:
  // Creates the state file in a fresh temp directory and sets ZEUS_FAKE_ROCM_SMI_STATE.
  explicit FakeRocmSmiState(int num_devices = 1);
  // Restores ZEUS_FAKE_ROCM_SMI_STATE and removes the directory.
  ~FakeRocmSmiState();
  FakeRocmSmiState(const FakeRocmSmiState&) = delete;
  FakeRocmSmiState& operator=(const FakeRocmSmiState&) = delete;

  const std::string& path() const { return path_; }

  // Merges the members of a JSON object into device `index`, e.g. R"({"lost": true})" or
  // R"({"energy_scale": 3.0})". Energy accumulated so far is settled first, so a new power or
  // scale applies from now on.
  void patch_device(int index, const std::string& json_object);
  // Power drawn (socket/instant) and, if given, the driver's average; W.
  void set_power_w(int index, double power_w, std::optional<double> average_w = std::nullopt);
  // Sets the raw counter (in counts of the resolution) now, and its resolution in uJ.
  void set_energy_count(int index, uint64_t count, double resolution_uj = 15.3);
  // Sets a state-wide field, e.g. set_field("amdsmi_abi", "24") (a JSON value as text).
  void set_field(const std::string& key, const std::string& json_value);
  // Removes device `index` from the state, as a GPU that disappears from the machine.
  void remove_device(int index);
  // Makes `function` (e.g. "rsmi_dev_power_cap_set", "amdsmi_set_power_cap" or "rsmi_init")
  // return `status` (in that library's codes).
  void set_error(const std::string& function, uint32_t status);
  void clear_errors();
  // Moves the fake time forward.
  void advance_time_s(double duration_s);

  // A numeric field of device `index` as the library left it (e.g. "cap_uw", "perf_level").
  double device_number(int index, const std::string& key) const;
  // Device `index` as JSON text.
  std::string device_json(int index) const;

 private:
  std::string dir_;
  std::string path_;
  std::optional<std::string> previous_env_;
};

// A FakeClock whose sleeps also advance a FakeRocmSmiState's time by the same amount, so code
// that waits on the clock (the plausibility check) sees the counter grow, instantly.
class FakeRocmSmiClock final : public Clock {
 public:
  explicit FakeRocmSmiClock(FakeRocmSmiState& state) : state_(state) {}
  double now_s() const override { return clock_.now_s(); }
  double unix_time_s() const override { return clock_.unix_time_s(); }
  void sleep_until_s(double t_s) override;

 private:
  FakeRocmSmiState& state_;
  FakeClock clock_;
};

}  // namespace zeus::testing
