// PowerLimitOptimizer: the just-in-time profiler (paper §4.2, Python Zeus). Inside one
// training run it slices the first epoch across GPU power limits (or locked SM clocks), measures
// energy and time per setting with the EnergyMonitor, picks the best one with a
// PowerLimitSelector, and runs the rest of the job there.
//
// States: Ready -> Warmup -> Profiling -> Done. Each on_step_begin() counts down the current
// state: Ready waits `wait_steps`, then sets the next candidate (Warmup); after `warmup_steps`
// one monitor window is opened (Profiling); after `profile_steps` it is closed and measured, and
// the next candidate is warmed up, or the optimum is selected, set and saved (Done). An epoch
// that ends during Warmup or Profiling cancels the open window, puts the maximum back, and
// re-warms and re-profiles the interrupted setting at the next step. With several GPUs they all
// get the same setting, energy is summed and time is the max; across processes the caller's
// all-reduce does the same, so every rank picks the same setting. Setting the value last set
// does not call the driver again.
// Units: power limits in W, SM clocks in MHz, energy J, time s (the devices' mW are converted
// here).
// Restore guarantee: the maximum power limit (or unlocked SM clocks) is put back by restore(),
// the destructor (normal return and exceptions, by RAII), an atexit hook, and SIGINT/SIGTERM:
// the signal handler only writes to a self-pipe; a watcher thread restores (device calls are not
// async-signal-safe), then re-raises with the previous (default: terminate) disposition. After
// a signal the optimizer stops changing the devices. SIGKILL cannot be caught: the privileged
// daemon zeusd restores limits of processes that died that way.
// Thread-safety: callbacks from one thread; restore() may race with them (a mutex guards the
// device calls).
// Failure: create() rejects bad options, GPUs with different limit ranges, and a saved profile
// for another GPU model or knob (InvalidArgument); a damaged profile is logged and ignored (the
// job profiles again). Setting a limit without root is PermissionDenied naming the fix.
//
//   auto plo = zeus::PowerLimitOptimizer::create(*monitor, devices, clock, {});
//   for (auto& batch : epoch) { (*plo)->on_step_begin(); train(batch); (*plo)->on_step_end(); }
//   (*plo)->on_epoch_end();
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/common/clock.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/optimizer/power_limit_selector.h"
#include "zeus/optimizer/power_profile.h"

namespace zeus {

// One rank's measurement of one setting, as passed through the all-reduce seam.
struct RankSample {
  double energy_j = 0.0;   // summed over the rank's GPUs
  double time_s = 0.0;     // the profiling window's wall time
  uint32_t gpu_count = 0;  // the rank's GPUs
};

// Multi-process data parallel: returns {sum of energy_j, max of time_s, sum of gpu_count} over
// all ranks (e.g. with MPI_Allreduce or torch.distributed.all_reduce). Every rank calls it at the
// same step with the same setting.
using RankAllReduce = std::function<Result<RankSample>(const RankSample& local)>;

struct PowerLimitOptimizerOptions {
  OptimizerKnob knob = OptimizerKnob::kPowerLimit;
  // Step begins spent in Ready before profiling starts (0 behaves as 1).
  uint32_t wait_steps = 1;
  // Steps run at a setting before its window opens, and steps the window spans (> 0).
  uint32_t warmup_steps = 10;
  uint32_t profile_steps = 40;
  // When set, warm-up / profiling of a setting lasts until this many seconds have passed (checked
  // at each step begin) instead of a step count; the paper found ~5 s per limit enough.
  std::optional<double> warmup_s;
  std::optional<double> profile_s;
  // Grid for power limits: from the maximum downward in steps of step_w (the minimum only if it
  // falls on the grid).
  uint32_t step_w = 25;
  // Explicit candidates (W, or MHz for kSmClock) instead of the grid; each must be supported.
  std::vector<uint32_t> candidates;
  // nullopt: zeus cost with eta = 0.5.
  std::optional<PowerLimitSelector> selector;
  // Load the profile from here if the file exists (no profiling), else save it here when done.
  // Empty: neither.
  std::string profile_path;
  // Profile and select, but keep the maximum; report what the optimum would have used.
  bool observer = false;
  // Multi-process reduction; empty for a single process.
  RankAllReduce all_reduce;
  // Install SIGINT/SIGTERM handlers that restore the devices (see the header comment).
  bool handle_signals = true;
};

// Observer mode's answer: the measured cost at the maximum and at the optimum.
struct ObserverReport {
  uint32_t optimal_setting = 0;     // W or MHz
  KnobMeasurement at_maximum;       // the highest profiled setting
  KnobMeasurement at_optimum;       // what the job would have used per profiling window
  double energy_saving_ratio = 0;   // 1 - E(optimum) / E(maximum)
  double time_increase_ratio = 0;   // T(optimum) / T(maximum) - 1
};

class PowerLimitOptimizer {
 public:
  enum class State { kReady, kWarmup, kProfiling, kDone };

  // Controls the GPUs the monitor measures (devices.gpus[monitor.gpu_indices()[i]]), which must
  // all share one power limit range (or SM clock list). Sets the maximum (or loads the profile
  // and sets its optimum). `monitor`, `devices` and `clock` must outlive the optimizer.
  static Result<std::unique_ptr<PowerLimitOptimizer>> create(EnergyMonitor& monitor,
                                                             Devices& devices, Clock& clock,
                                                             PowerLimitOptimizerOptions options);
  // Restores the devices (errors are logged).
  ~PowerLimitOptimizer();
  PowerLimitOptimizer(const PowerLimitOptimizer&) = delete;
  PowerLimitOptimizer& operator=(const PowerLimitOptimizer&) = delete;

  // Training-loop callbacks. All counting happens at step begin and epoch end; on_step_end and
  // on_epoch_begin do nothing today (kept so loops can call all four). Errors come from the
  // monitor, the devices or the selector; a failed transition is retried at the next step, and
  // a failed measurement is dropped and its setting re-profiled. A selector that fails once every
  // setting is measured (a custom one raised, or chose an unmeasured setting) leaves the devices
  // at the maximum, and the selection is retried at each later step begin.
  Result<void> on_step_begin();
  Result<void> on_step_end();
  Result<void> on_epoch_begin();
  Result<void> on_epoch_end();

  // Puts the maximum power limit (or unlocked SM clocks) back on every GPU. Idempotent.
  Result<void> restore();

  State state() const;
  // The settings to profile, highest first (W or MHz).
  const std::vector<uint32_t>& candidates() const;
  // The setting being warmed up or profiled (nullopt in Ready and Done).
  std::optional<uint32_t> current_setting() const;
  // Measurements so far (all of them once Done), after the all-reduce.
  const std::vector<KnobMeasurement>& measurements() const;
  // The selected setting once Done.
  std::optional<uint32_t> optimal_setting() const;
  // Once Done: the observer comparison (meaningful in any mode; in observer mode the job stays
  // at the maximum). nullopt before Done or when the maximum was not profiled.
  std::optional<ObserverReport> observer_report() const;
  // The profile as saved (knob, GPU model, GPU count, measurements).
  PowerProfile profile() const;

  class Impl;

 private:
  explicit PowerLimitOptimizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// "Ready", "Warmup", "Profiling", "Done".
const char* state_name(PowerLimitOptimizer::State state);

}  // namespace zeus
