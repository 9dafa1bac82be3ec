#include "zeus/monitor/profile_sweep.h"

#include <cmath>

namespace zeus {
namespace {

Result<void> invalid_sweep(const std::string& message) {
  return fail(ErrorCode::kInvalidArgument, message);
}

}  // namespace

Result<SweepResult> summarize_sweep(double measurement_duration_s, double cooldown_duration_s,
                                    std::vector<TrialResult> trials,
                                    double trial_stddev_threshold_j) {
  ZEUS_TRY(check_sweep_parameters(static_cast<int>(trials.size()), 0, trial_stddev_threshold_j));
  SweepResult r;
  r.measurement_duration_s = measurement_duration_s;
  r.cooldown_duration_s = cooldown_duration_s;
  const double n = static_cast<double>(trials.size());
  for (const TrialResult& t : trials) {
    r.energy_mean_j += t.energy_per_iter_j;
    r.avg_temperature_before_c += t.temperature_before_c;
    r.avg_temperature_after_c += t.temperature_after_c;
    r.avg_total_time_s += t.total_time_s;
    r.avg_total_energy_j += t.total_energy_j;
  }
  r.energy_mean_j /= n;
  r.avg_temperature_before_c /= n;
  r.avg_temperature_after_c /= n;
  r.avg_total_time_s /= n;
  r.avg_total_energy_j /= n;
  if (trials.size() >= 2) {
    double squares = 0;
    for (const TrialResult& t : trials) {
      squares += (t.energy_per_iter_j - r.energy_mean_j) * (t.energy_per_iter_j - r.energy_mean_j);
    }
    r.energy_std_j = std::sqrt(squares / (n - 1));
  }
  r.is_valid = r.energy_std_j < trial_stddev_threshold_j;
  r.trials = std::move(trials);
  return r;
}

Result<std::vector<double>> sweep_range(const std::optional<std::vector<double>>& range,
                                        const std::string& name) {
  if (!range || range->empty()) {
    std::vector<double> defaults;
    for (int s = 1; s <= 10; ++s) defaults.push_back(s);
    return defaults;
  }
  for (double value : *range) {
    if (!(std::isfinite(value) && value > 0)) {
      return fail(ErrorCode::kInvalidArgument,
                  name + " must hold positive numbers of seconds, e.g. [1.0, 2.0, 5.0]");
    }
  }
  return *range;
}

Result<void> check_sweep_parameters(int num_trials, int num_warmup_trials,
                                    double trial_stddev_threshold_j) {
  if (num_trials < 1) return invalid_sweep("num_trials must be >= 1");
  if (num_warmup_trials < 0) return invalid_sweep("num_warmup_trials must be >= 0");
  if (!(std::isfinite(trial_stddev_threshold_j) && trial_stddev_threshold_j >= 0)) {
    return invalid_sweep("trial_stddev_threshold must be a non-negative number of joules");
  }
  return ok();
}

std::optional<double> shortest_valid(const std::vector<SweepResult>& entries,
                                     SweptParameter parameter) {
  std::optional<double> best;
  for (const SweepResult& e : entries) {
    if (!e.is_valid) continue;
    const double value = parameter == SweptParameter::kMeasurement ? e.measurement_duration_s
                                                                   : e.cooldown_duration_s;
    if (!best || value < *best) best = value;
  }
  return best;
}

}  // namespace zeus
