#include "zeus/device/replay_gpu.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace zeus {

ReplayGpu::ReplayGpu(Clock& clock, ReplayGpuConfig config)
    : clock_(clock),
      config_(std::move(config)),
      model_(config_.power_model),
      last_update_s_(clock.now_s()),
      energy_mj_(static_cast<double>(config_.initial_energy_mj)),
      published_energy_mj_(energy_mj_),
      limit_mw_(config_.default_limit_mw) {
  ZEUS_CHECK(static_cast<bool>(model_), "ReplayGpuConfig::power_model must be set");
  ZEUS_CHECK(config_.limit_range_mw.min_mw <= config_.limit_range_mw.max_mw,
             "ReplayGpuConfig::limit_range_mw has min_mw > max_mw");
  ZEUS_CHECK(config_.default_limit_mw >= config_.limit_range_mw.min_mw &&
                 config_.default_limit_mw <= config_.limit_range_mw.max_mw,
             "ReplayGpuConfig::default_limit_mw lies outside limit_range_mw");
  ZEUS_CHECK(config_.integration_step_s >= 0.0, "ReplayGpuConfig::integration_step_s < 0");
  ZEUS_CHECK(config_.counter_update_period_s >= 0.0,
             "ReplayGpuConfig::counter_update_period_s < 0");
}

ReplayPowerModel ReplayGpu::capped_power_model(double draw_w) {
  return [draw_w](double, uint32_t limit_mw, uint32_t) {
    return std::min(draw_w, limit_mw / 1000.0);
  };
}

ReplayPowerModel ReplayGpu::capped_power_model(std::function<double(double t_s)> draw_w) {
  return [draw_w = std::move(draw_w)](double t_s, uint32_t limit_mw, uint32_t) {
    return std::min(draw_w(t_s), limit_mw / 1000.0);
  };
}

double ReplayGpu::power_w_locked(double t_s) const {
  const double power_w = model_(t_s, limit_mw_, locked_sm_max_mhz_);
  return power_w > 0.0 ? power_w : 0.0;
}

void ReplayGpu::advance_locked() {
  const double now_s = clock_.now_s();
  if (now_s <= last_update_s_) return;
  const double period_s = config_.counter_update_period_s;
  if (period_s <= 0.0) {
    integrate_locked(now_s);
    published_energy_mj_ = energy_mj_;
    return;
  }
  const double last_tick_s = std::floor(now_s / period_s) * period_s;
  if (last_tick_s > last_update_s_) {
    integrate_locked(last_tick_s);
    published_energy_mj_ = energy_mj_;
  }
  integrate_locked(now_s);
}

void ReplayGpu::integrate_locked(double to_s) {
  const double now_s = to_s;
  const double dt_s = now_s - last_update_s_;
  if (dt_s <= 0.0) return;
  const double t0_s = last_update_s_;
  double energy_j = 0.0;
  if (config_.integration_step_s <= 0.0) {
    energy_j = power_w_locked(t0_s) * dt_s;
  } else {
    // Composite Simpson over an even number of substeps.
    auto n = static_cast<int64_t>(std::ceil(dt_s / config_.integration_step_s));
    n = std::max<int64_t>(2, n + (n % 2));
    const double h_s = dt_s / static_cast<double>(n);
    double sum_w = power_w_locked(t0_s) + power_w_locked(now_s);
    for (int64_t i = 1; i < n; ++i) {
      sum_w += (i % 2 == 1 ? 4.0 : 2.0) * power_w_locked(t0_s + h_s * static_cast<double>(i));
    }
    energy_j = sum_w * h_s / 3.0;
  }
  energy_mj_ += energy_j * 1000.0;
  last_update_s_ = now_s;
}

Result<void> ReplayGpu::check_control_locked(const char* what) const {
  if (deny_control_) {
    return fail(ErrorCode::kPermissionDenied,
                std::string(what) + " on " + config_.name +
                    " needs root or CAP_SYS_ADMIN; run as root or through zeusd");
  }
  return ok();
}

Result<PowerLimitRangeMw> ReplayGpu::power_limit_range_mw() { return config_.limit_range_mw; }

Result<uint32_t> ReplayGpu::default_power_limit_mw() { return config_.default_limit_mw; }

Result<uint32_t> ReplayGpu::power_limit_mw() {
  std::lock_guard<std::mutex> lock(mutex_);
  return limit_mw_;
}

Result<void> ReplayGpu::set_power_limit_mw(uint32_t limit_mw) {
  std::lock_guard<std::mutex> lock(mutex_);
  ZEUS_TRY(check_control_locked("setting a power limit"));
  const auto& range = config_.limit_range_mw;
  if (limit_mw < range.min_mw || limit_mw > range.max_mw) {
    return fail(ErrorCode::kInvalidArgument,
                "power limit " + std::to_string(limit_mw) + " mW is outside the range [" +
                    std::to_string(range.min_mw) + ", " + std::to_string(range.max_mw) +
                    "] mW of " + config_.name + "; query power_limit_range_mw() first");
  }
  advance_locked();
  limit_mw_ = limit_mw;
  limit_history_mw_.push_back(limit_mw);
  return ok();
}

Result<void> ReplayGpu::reset_power_limit() {
  std::lock_guard<std::mutex> lock(mutex_);
  ZEUS_TRY(check_control_locked("resetting the power limit"));
  advance_locked();
  limit_mw_ = config_.default_limit_mw;
  limit_history_mw_.push_back(limit_mw_);
  return ok();
}

Result<uint32_t> ReplayGpu::instant_power_mw() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (read_error_) return fail(*read_error_);
  advance_locked();
  return static_cast<uint32_t>(std::lround(power_w_locked(last_update_s_) * 1000.0));
}

Result<uint32_t> ReplayGpu::average_power_mw() { return instant_power_mw(); }

Result<uint64_t> ReplayGpu::total_energy_mj() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (read_error_) return fail(*read_error_);
  if (!config_.has_energy_counter) {
    return fail(ErrorCode::kNotSupported,
                config_.name + " has no energy counter (pre-Volta); measure it by sampling power");
  }
  advance_locked();
  return static_cast<uint64_t>(std::llround(published_energy_mj_));
}

Result<bool> ReplayGpu::persistence_mode() {
  std::lock_guard<std::mutex> lock(mutex_);
  return persistence_mode_;
}

Result<void> ReplayGpu::set_persistence_mode(bool enabled) {
  std::lock_guard<std::mutex> lock(mutex_);
  ZEUS_TRY(check_control_locked("setting persistence mode"));
  persistence_mode_ = enabled;
  return ok();
}

Result<std::vector<uint32_t>> ReplayGpu::supported_memory_clocks_mhz() {
  return config_.supported_memory_clocks_mhz;
}

Result<std::vector<uint32_t>> ReplayGpu::supported_sm_clocks_mhz() {
  return config_.supported_sm_clocks_mhz;
}

Result<void> ReplayGpu::validate_clock_range(const std::vector<uint32_t>& supported_mhz,
                                             uint32_t min_mhz, uint32_t max_mhz,
                                             const char* kind) const {
  if (min_mhz > max_mhz) {
    return fail(ErrorCode::kInvalidArgument, std::string(kind) + " clock lock min " +
                                                 std::to_string(min_mhz) + " MHz exceeds max " +
                                                 std::to_string(max_mhz) + " MHz");
  }
  if (supported_mhz.empty()) {
    return fail(ErrorCode::kNotSupported,
                config_.name + " does not support locking " + std::string(kind) + " clocks");
  }
  const auto [lo, hi] = std::minmax_element(supported_mhz.begin(), supported_mhz.end());
  if (min_mhz < *lo || max_mhz > *hi) {
    return fail(ErrorCode::kInvalidArgument,
                std::string(kind) + " clock lock [" + std::to_string(min_mhz) + ", " +
                    std::to_string(max_mhz) + "] MHz is outside the supported span [" +
                    std::to_string(*lo) + ", " + std::to_string(*hi) + "] MHz of " +
                    config_.name);
  }
  return ok();
}

Result<void> ReplayGpu::lock_sm_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) {
  std::lock_guard<std::mutex> lock(mutex_);
  ZEUS_TRY(check_control_locked("locking SM clocks"));
  ZEUS_TRY(validate_clock_range(config_.supported_sm_clocks_mhz, min_mhz, max_mhz, "SM"));
  advance_locked();
  locked_sm_max_mhz_ = max_mhz;
  sm_clock_history_mhz_.push_back({min_mhz, max_mhz});
  return ok();
}

Result<void> ReplayGpu::reset_sm_clocks() {
  std::lock_guard<std::mutex> lock(mutex_);
  ZEUS_TRY(check_control_locked("resetting SM clocks"));
  advance_locked();
  locked_sm_max_mhz_ = 0;
  sm_clock_history_mhz_.push_back({0, 0});
  return ok();
}

Result<void> ReplayGpu::lock_memory_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) {
  std::lock_guard<std::mutex> lock(mutex_);
  ZEUS_TRY(check_control_locked("locking memory clocks"));
  ZEUS_TRY(
      validate_clock_range(config_.supported_memory_clocks_mhz, min_mhz, max_mhz, "memory"));
  memory_clock_history_mhz_.push_back({min_mhz, max_mhz});
  return ok();
}

Result<void> ReplayGpu::reset_memory_clocks() {
  std::lock_guard<std::mutex> lock(mutex_);
  ZEUS_TRY(check_control_locked("resetting memory clocks"));
  memory_clock_history_mhz_.push_back({0, 0});
  return ok();
}

double ReplayGpu::energy_j() {
  std::lock_guard<std::mutex> lock(mutex_);
  advance_locked();
  return energy_mj_ / 1000.0;
}

void ReplayGpu::set_power_model(ReplayPowerModel model) {
  ZEUS_CHECK(static_cast<bool>(model), "set_power_model needs a model");
  std::lock_guard<std::mutex> lock(mutex_);
  advance_locked();
  model_ = std::move(model);
}

void ReplayGpu::set_deny_control(bool deny) {
  std::lock_guard<std::mutex> lock(mutex_);
  deny_control_ = deny;
}

void ReplayGpu::set_read_error(std::optional<Error> error) {
  std::lock_guard<std::mutex> lock(mutex_);
  read_error_ = std::move(error);
}

std::vector<uint32_t> ReplayGpu::power_limit_history_mw() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return limit_history_mw_;
}

std::vector<ClockLockMhz> ReplayGpu::sm_clock_history_mhz() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sm_clock_history_mhz_;
}

std::vector<ClockLockMhz> ReplayGpu::memory_clock_history_mhz() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return memory_clock_history_mhz_;
}

}  // namespace zeus
