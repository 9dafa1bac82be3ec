#include "zeus/monitor/profile_trial.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace zeus {
namespace {

Result<void> invalid_trial(const std::string& message) {
  return fail(ErrorCode::kInvalidArgument, message);
}

int ceil_at_least_one(double duration_s, double iteration_s) {
  if (!(iteration_s > 0) || !std::isfinite(duration_s / iteration_s)) return 1;
  const double count = std::ceil(duration_s / iteration_s);
  if (count >= 2147483647.0) return 2147483647;
  return std::max(1, static_cast<int>(count));
}

}  // namespace

Result<void> check_trial_parameters(const TrialParameters& params) {
  if (!(std::isfinite(params.measurement_duration_s) && params.measurement_duration_s > 0)) {
    return invalid_trial("measurement_duration must be a positive number of seconds");
  }
  if (!(std::isfinite(params.cooldown_duration_s) && params.cooldown_duration_s >= 0)) {
    return invalid_trial("cooldown_duration must be a non-negative number of seconds");
  }
  if (params.num_warmup_iterations < 0) return invalid_trial("num_warmup_iterations must be >= 0");
  if (params.num_calibration_iterations < 1) {
    return invalid_trial("num_calibration_iterations must be >= 1 (the iteration time is measured)");
  }
  if (params.warmup_settle_duration_s &&
      !(std::isfinite(*params.warmup_settle_duration_s) && *params.warmup_settle_duration_s >= 0)) {
    return invalid_trial("warmup_settle_duration must be non-negative (or None for a fixed count)");
  }
  return ok();
}

int measured_iterations(double measurement_duration_s, double iteration_duration_s) {
  return ceil_at_least_one(measurement_duration_s, iteration_duration_s);
}

int warmup_iterations(const TrialParameters& params, double iteration_duration_s) {
  if (!params.warmup_settle_duration_s) return params.num_warmup_iterations;
  return ceil_at_least_one(*params.warmup_settle_duration_s, iteration_duration_s);
}

Result<TrialResult> combine_ranks(const std::vector<RankTrial>& ranks, int iterations) {
  if (ranks.empty()) return fail(ErrorCode::kInvalidArgument, "a trial needs at least one rank");
  if (iterations < 1) {
    return fail(ErrorCode::kInvalidArgument, "a trial measures at least one iteration");
  }
  TrialResult result;
  result.iterations = iterations;
  for (const RankTrial& rank : ranks) {
    result.total_energy_j += rank.energy_j;
    result.total_time_s = std::max(result.total_time_s, rank.time_s);
    result.temperature_before_c += rank.temperature_before_c;
    result.temperature_after_c += rank.temperature_after_c;
  }
  const double count = static_cast<double>(ranks.size());
  result.temperature_before_c /= count;
  result.temperature_after_c /= count;
  result.energy_per_iter_j = result.total_energy_j / iterations;
  result.time_per_iter_s = result.total_time_s / iterations;
  return result;
}

}  // namespace zeus
