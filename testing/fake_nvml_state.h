// Fake NVML state files: write the devices the fake libnvidia-ml.so.1 (testing/fake_nvml/)
// pretends to have, and read back what a process did to them (limits set, energy, clocks).
//
// The fake reads the JSON file named by the environment variable ZEUS_FAKE_NVML_STATE at every
// nvmlInit (unset: one default H100) and again before any call once the file changed (another
// process or the test rewrote it: a new inode, size or mtime), and writes it back, under flock
// with an atomic rename, only after a change it made (limits, persistence, locked clocks, an
// injected counter reset), so another process sees what was set and read-only clients never
// write. A device without "energy_time_ns" counts from the file's mtime; rewritten without
// "energy_mj" too, it keeps counting from where it was.
// Format (every key optional; missing keys take these defaults):
//   {
//     "init_error": 0,                  // what nvmlInit answers (9 = driver not loaded)
//     "errors": {"nvmlDeviceSetPowerManagementLimit": 4},   // injected on every device
//     "set_power_limit_log": [{"index": 0, "limit_mw": 300000, "time_ns": ...}],  // appended
//     // Opt-in: present (even as []), every SM clock lock is appended, a reset as 0, 0 (absent:
//     // nothing is recorded, so a long job does not grow the file):
//     "sm_clock_log": [{"index": 0, "min_mhz": 1980, "max_mhz": 1980, "time_ns": ...}],
//     "devices": [{
//       "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-00000000-fake-0000-0000-000000000000",
//       "architecture": 9,              // NVML code: 4 Pascal, 5 Volta, 7 Ampere, 9 Hopper
//       "power_draw_mw": 350000,        // drawn at an unlimited cap; reported = min(draw, limit)
//       // Opt-in: the draw while the SM clock is locked at a listed max clock (else
//       power_draw_mw): "power_draw_mw_by_sm_mhz": {"1980": 400000, "1500": 250000},
//       "min_limit_mw": 200000, "max_limit_mw": 700000,
//       "default_limit_mw": <max_limit_mw>, "limit_mw": <default_limit_mw>,
//       "energy_mj": 0.0, "energy_time_ns": <now>,  // counter value at a CLOCK_REALTIME time;
//                                       // it grows at the current power from then on
//       "persistence": false,
//       "memory_clocks_mhz": [2619, 1593], "graphics_clocks_mhz": [1980, 1755, ..., 600],
//       "locked_sm_clocks_mhz": null, "locked_memory_clocks_mhz": null,  // or [min, max]
//       "errors": {"nvmlDeviceGetPowerUsage": 15},   // injected on this device only
//       "lost": false,                  // true: every call on the device answers GPU_IS_LOST
//       "power_fields": true,           // false: GetFieldValues answers NOT_SUPPORTED per field
//       "memory_power_mw": null,        // the memory scope's average power; null: NOT_SUPPORTED
//       "power_scopes": ["gpu"],        // NVML_POWER_SCOPE_GPU / _MODULE the power fields
//                                       // answer; ["module"] is a Grace Hopper superchip
//       "module_cpu_power_mw": 0,       // the module's CPU share, added to module readings
//                                       // (and to the energy counter of a module-only GPU)
//       "temperature_c": 45,            // what nvmlDeviceGetTemperature answers
//       "power_update_ms": 0,           // > 0: power readings step every so many ms (a driver
//                                       // counter's update period; the energy counter is
//                                       unchanged)
//       "energy_update_ms": 0,          // > 0: the energy counter publishes in steps of so many
//                                       // ms (an H200's ~100 ms): reads between steps repeat
//       // The first `calls` calls of a function (per process, since
//       // nvmlInit) on this device succeed, later ones
//       // answer `error` (e.g. the GPU is lost after the job's first reading):
//       "fail_after_calls": {"nvmlDeviceGetTotalEnergyConsumption": {"calls": 2, "error": 15}},
//       // After this process's first N energy reads, the counter restarts from 0 once (a driver
//       // reload or GPU reset), and the file records it:
//       "energy_reset_after_calls": 2
//     }]
//   }
// Error names are NVML function names; "nvmlInit" also matches nvmlInit_v2. The fake also exports
// zeus_fake_nvml_call_count(const char* function) for tests that dlopen it themselves.
// Thread-safety: the functions here touch only the file; FakeNvmlEnvironment sets a process-wide
// environment variable (use it from one thread).
// Failure: Result with kNotFound / kInvalidArgument / kInternal naming the file.
//
//   zeus::testing::FakeNvmlEnvironment fake({zeus::testing::FakeNvmlDevice::h100()});
//   auto gpus = zeus::open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
//   auto state = fake.read();  // state.set_power_limit_log, state.devices[0].limit_mw, ...
//   // With FakeNvmlState::sm_clock_log = std::vector<FakeNvmlClockCall>{} written first:
//   state.sm_clock_sequence_mhz(0);  // {1980, 1500, 0}: locked at 1980, then 1500, then reset
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "zeus/common/result.h"

namespace zeus::testing {

// One fake GPU. Defaults describe an H100 drawing 350 W.
struct FakeNvmlDevice {
  std::string name = "NVIDIA H100 80GB HBM3";
  std::string uuid;  // empty: "GPU-00000000-fake-0000-0000-<index>"
  int architecture = 9;
  uint32_t power_draw_mw = 350000;
  uint32_t min_limit_mw = 200000;
  uint32_t max_limit_mw = 700000;
  uint32_t default_limit_mw = 700000;
  uint32_t limit_mw = 700000;
  double energy_mj = 0.0;
  bool persistence = false;
  std::vector<uint32_t> memory_clocks_mhz = {2619, 1593};
  std::vector<uint32_t> graphics_clocks_mhz = {1980, 1755, 1500, 1200, 900, 600};
  std::optional<std::pair<uint32_t, uint32_t>> locked_sm_clocks_mhz;
  std::optional<std::pair<uint32_t, uint32_t>> locked_memory_clocks_mhz;
  std::map<std::string, int> errors;  // NVML function name -> nvmlReturn_t
  bool lost = false;
  bool power_fields = true;
  // Memory-scope average power; nullopt: the GPU does not report it (as an A40).
  std::optional<uint32_t> memory_power_mw = 62000;
  int temperature_c = 45;
  // Power scopes the power fields answer ("gpu", "module"), and the CPU share a module-scope
  // reading adds (see the format above).
  std::vector<std::string> power_scopes = {"gpu"};
  uint32_t module_cpu_power_mw = 0;
  // > 0: the power readings change every so many milliseconds (see the format above).
  uint32_t power_update_ms = 0;
  uint32_t energy_update_ms = 0;
  // Function name -> the first `calls` calls (per process) succeed, later ones answer `error`.
  struct FailAfter {
    long calls = 0;
    int error = 15;  // NVML_ERROR_GPU_IS_LOST
  };
  std::map<std::string, FailAfter> fail_after_calls;
  // After this many energy reads in a process, the counter restarts from 0 (once).
  std::optional<long> energy_reset_after_calls;

  // Presets: H100 SXM (Hopper, 200-700 W), A100 SXM (Ampere, 100-400 W), V100 (Volta,
  // 150-300 W), P100 (Pascal, 125-250 W: no energy counter).
  static FakeNvmlDevice h100();
  static FakeNvmlDevice a100();
  static FakeNvmlDevice v100();
  static FakeNvmlDevice p100();
  // C2C superchips: GH200 (Grace Hopper: module scope only, Grace drawing 120 W) and GB10 (DGX
  // Spark: C2C, but only the GPU scope answers).
  static FakeNvmlDevice gh200();
  static FakeNvmlDevice gb10();
};

// One nvmlDeviceSetPowerManagementLimit that succeeded.
struct FakeNvmlSetCall {
  int index = 0;
  uint32_t limit_mw = 0;
};

// One nvmlDeviceSetGpuLockedClocks that succeeded; {0, 0} records nvmlDeviceResetGpuLockedClocks.
struct FakeNvmlClockCall {
  int index = 0;
  uint32_t min_mhz = 0;
  uint32_t max_mhz = 0;
};

struct FakeNvmlState {
  std::vector<FakeNvmlDevice> devices;
  std::map<std::string, int> errors;  // injected on every device
  int init_error = 0;
  std::vector<FakeNvmlSetCall> set_power_limit_log;  // filled by read_fake_nvml_state
  // nullopt: SM clock locks are not recorded; a vector (even empty) turns the log on. (The
  // initializer keeps the four-field brace form of older tests free of warnings.)
  std::optional<std::vector<FakeNvmlClockCall>> sm_clock_log = std::nullopt;

  // Device `index`'s locked maximum SM clock after each lock, in order (0 for a reset); empty
  // when the log is off.
  std::vector<uint32_t> sm_clock_sequence_mhz(int index) const;
};

// Writes `state` to `path` (atomically; energy starts counting now).
Result<void> write_fake_nvml_state(const std::string& path, const FakeNvmlState& state);
// Reads the state back; each device's energy_mj is its counter now (as the fake would report).
Result<FakeNvmlState> read_fake_nvml_state(const std::string& path);

// A state file in a fresh temporary directory, named by ZEUS_FAKE_NVML_STATE while this lives.
// The destructor restores the variable's previous value and removes the directory.
class FakeNvmlEnvironment {
 public:
  explicit FakeNvmlEnvironment(std::vector<FakeNvmlDevice> devices = {FakeNvmlDevice::h100()});
  explicit FakeNvmlEnvironment(const FakeNvmlState& state);
  FakeNvmlEnvironment(const FakeNvmlEnvironment&) = delete;
  FakeNvmlEnvironment& operator=(const FakeNvmlEnvironment&) = delete;
  ~FakeNvmlEnvironment();

  const std::string& path() const { return path_; }
  // Overwrites the file (the fake picks it up at its next call; energy restarts from each
  // device's energy_mj now).
  void write(const FakeNvmlState& state);
  // What the fake wrote back; aborts the test binary if the file is unreadable.
  FakeNvmlState read() const;

 private:
  std::string directory_;
  std::string path_;
  std::optional<std::string> previous_;
};

}  // namespace zeus::testing
