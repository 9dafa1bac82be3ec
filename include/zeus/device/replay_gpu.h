// ReplayGpu: a Gpu whose power follows a scripted model on a Clock, accumulating energy.
//
// Tests and the simulator use it in place of a real GPU: the power model maps (time, power
// limit, locked SM clock) to watts, and the GPU integrates that power into its energy counter
// whenever it is read or its state (limit, clocks, model) changes. With the default
// `integration_step_s = 0` the model is taken as constant between two such updates, which makes
// the energy exact for piecewise-constant power; a positive step integrates time-varying models
// with composite Simpson substeps no longer than that step.
// Units: the Gpu interface's integers (mW, mJ, MHz); the model speaks seconds and watts.
// Thread-safety: every method may be called from any thread (one mutex).
// Failure: setters validate ranges like a real GPU (InvalidArgument) and can be told to answer
// PermissionDenied; reads can be told to fail with a chosen error.
//
//   zeus::FakeClock clock;
//   zeus::ReplayGpu gpu(clock, {.power_model = zeus::ReplayGpu::capped_power_model(250.0)});
//   clock.advance_s(2.0);  // gpu.total_energy_mj() == 500000 (250 W x 2 s, default 300 W limit)
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "zeus/common/clock.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"

namespace zeus {

// Power in watts at time t_s (the clock's now_s()) under the current power limit and the
// current maximum locked SM clock (0 = clocks not locked).
using ReplayPowerModel =
    std::function<double(double t_s, uint32_t limit_mw, uint32_t locked_sm_max_mhz)>;

struct ReplayGpuConfig {
  std::string name = "Replay GPU";
  std::string uuid = "GPU-replay-0";
  GpuArchitecture architecture = GpuArchitecture::kAmpere;
  int physical_index = 0;
  PowerLimitRangeMw limit_range_mw{100'000, 300'000};
  uint32_t default_limit_mw = 300'000;
  // SM clocks listed for the highest memory clock; lock requests must fall inside their span.
  std::vector<uint32_t> supported_sm_clocks_mhz{1410, 1200, 1000, 800, 600};
  std::vector<uint32_t> supported_memory_clocks_mhz{1215};
  // False makes total_energy_mj() answer NotSupported (a pre-Volta GPU: sampler path).
  bool has_energy_counter = true;
  // Watts; must be set (ZEUS_CHECK). Negative values count as 0 W.
  ReplayPowerModel power_model{};
  // 0: the model is constant between updates (one evaluation per interval, exact for
  // piecewise-constant power). > 0: Simpson substeps of at most this many seconds.
  double integration_step_s = 0.0;
  // Initial energy counter, in mJ (real counters count from driver load).
  uint64_t initial_energy_mj = 0;
  // 0: total_energy_mj() is always current. > 0: like a real driver, the counter shows the
  // energy as of the latest multiple of this period (short windows can read 0 J).
  double counter_update_period_s = 0.0;
};

// One lock_sm_clocks_mhz / lock_memory_clocks_mhz call; {0, 0} records a reset.
struct ClockLockMhz {
  uint32_t min_mhz = 0;
  uint32_t max_mhz = 0;
  bool operator==(const ClockLockMhz&) const = default;
};

class ReplayGpu final : public Gpu {
 public:
  // `clock` must outlive the GPU. Power is integrated from clock.now_s() at construction.
  ReplayGpu(Clock& clock, ReplayGpuConfig config);

  // The common model: power = min(draw_w, limit), constant in time.
  static ReplayPowerModel capped_power_model(double draw_w);
  // Like above with a time-varying draw: power = min(draw_w(t_s), limit).
  static ReplayPowerModel capped_power_model(std::function<double(double t_s)> draw_w);

  GpuVendor vendor() const override { return GpuVendor::kReplay; }
  std::string backend() const override { return "replay"; }
  std::string name() const override { return config_.name; }
  std::string uuid() const override { return config_.uuid; }
  GpuArchitecture architecture() const override { return config_.architecture; }
  int physical_index() const override { return config_.physical_index; }

  Result<PowerLimitRangeMw> power_limit_range_mw() override;
  Result<uint32_t> default_power_limit_mw() override;
  Result<uint32_t> power_limit_mw() override;
  Result<void> set_power_limit_mw(uint32_t limit_mw) override;
  Result<void> reset_power_limit() override;

  // The model's power now, rounded to mW. average_power_mw() answers the same value.
  Result<uint32_t> instant_power_mw() override;
  Result<uint32_t> average_power_mw() override;

  bool has_energy_counter() override { return config_.has_energy_counter; }
  // Integrated energy, rounded to the nearest mJ (monotone). NotSupported without a counter.
  Result<uint64_t> total_energy_mj() override;

  Result<bool> persistence_mode() override;
  Result<void> set_persistence_mode(bool enabled) override;

  Result<std::vector<uint32_t>> supported_memory_clocks_mhz() override;
  Result<std::vector<uint32_t>> supported_sm_clocks_mhz() override;
  // InvalidArgument when min > max or outside the supported clocks' span.
  Result<void> lock_sm_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) override;
  Result<void> reset_sm_clocks() override;
  Result<void> lock_memory_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) override;
  Result<void> reset_memory_clocks() override;

  // --- Test and simulator controls (not part of Gpu) ---

  // Exact integrated energy in joules up to now (no rounding; works without a counter too).
  double energy_j();
  // Replaces the power model from now on (energy up to now uses the old model).
  void set_power_model(ReplayPowerModel model);
  // While true, every setter (limits, clocks, persistence) answers PermissionDenied.
  void set_deny_control(bool deny);
  // While set, every power and energy read answers this error.
  void set_read_error(std::optional<Error> error);
  // Every successful set_power_limit_mw call in order; reset_power_limit records the default.
  std::vector<uint32_t> power_limit_history_mw() const;
  // Every successful SM clock lock in order; reset_sm_clocks records {0, 0}.
  std::vector<ClockLockMhz> sm_clock_history_mhz() const;
  // Every successful memory clock lock in order; reset_memory_clocks records {0, 0}.
  std::vector<ClockLockMhz> memory_clock_history_mhz() const;

 private:
  // Integrates power from last_update_s_ to now, publishing the counter at update ticks.
  // Caller holds mutex_.
  void advance_locked();
  void integrate_locked(double to_s);
  double power_w_locked(double t_s) const;
  Result<void> check_control_locked(const char* what) const;
  Result<void> validate_clock_range(const std::vector<uint32_t>& supported_mhz,
                                    uint32_t min_mhz, uint32_t max_mhz, const char* kind) const;

  Clock& clock_;
  const ReplayGpuConfig config_;
  mutable std::mutex mutex_;
  ReplayPowerModel model_;
  double last_update_s_;
  double energy_mj_;
  double published_energy_mj_;  // what the counter shows (see counter_update_period_s)
  uint32_t limit_mw_;
  uint32_t locked_sm_max_mhz_ = 0;
  bool persistence_mode_ = false;
  bool deny_control_ = false;
  std::optional<Error> read_error_;
  std::vector<uint32_t> limit_history_mw_;
  std::vector<ClockLockMhz> sm_clock_history_mhz_;
  std::vector<ClockLockMhz> memory_clock_history_mhz_;
};

}  // namespace zeus
