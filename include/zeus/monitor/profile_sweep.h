// The statistics of zeus.profile's parameter sweeps (profile_parameters,
// profile_measurement_duration, profile_cooldown_duration): one swept value's trials summarised
// (mean and sample standard deviation of energy per iteration, mean temperatures, time and
// energy), whether it is valid, and which value of a sweep is the shortest valid one. Pure: the
// caller runs the trials (zeus/monitor/profile_trial.h) and passes their results in.
//
// As upstream, a value is valid when the sample standard deviation of energy_per_iter over its
// trials is below trial_stddev_threshold, in joules (absolute, not relative to the mean); one
// trial has a deviation of 0. Search ranges default to 1, 2, ..., 10 s.
// Units: seconds, joules, degrees Celsius. Failure: InvalidArgument naming the parameter.
//
//   auto range = zeus::sweep_range(std::nullopt, "measurement_duration_search_range");
//   auto entry = zeus::summarize_sweep(5.0, 10.0, trials, 0.01);
//   std::optional<double> best = zeus::shortest_valid(entries, SweptParameter::kMeasurement);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/monitor/profile_trial.h"

namespace zeus {

// One swept value's trials (upstream's SweepResult).
struct SweepResult {
  double measurement_duration_s = 0;
  double cooldown_duration_s = 0;
  std::vector<TrialResult> trials;
  double energy_mean_j = 0;
  double energy_std_j = 0;  // sample standard deviation of energy_per_iter (0 for one trial)
  double avg_temperature_before_c = 0;
  double avg_temperature_after_c = 0;
  double avg_total_time_s = 0;
  double avg_total_energy_j = 0;
  bool is_valid = false;  // energy_std_j < the threshold
};

// InvalidArgument for no trial or a negative or non-finite threshold.
Result<SweepResult> summarize_sweep(double measurement_duration_s, double cooldown_duration_s,
                                    std::vector<TrialResult> trials,
                                    double trial_stddev_threshold_j);

// The values a sweep visits: `range` as given, or 1, 2, ..., 10 when it is unset or empty
// (upstream treats an empty list as unset). InvalidArgument, naming `name`, for a value that is
// not a positive finite number of seconds.
Result<std::vector<double>> sweep_range(const std::optional<std::vector<double>>& range,
                                        const std::string& name);

// The checks of profile_parameters' counts and threshold: num_trials >= 1,
// num_warmup_trials >= 0, a finite threshold >= 0 (InvalidArgument naming the parameter).
Result<void> check_sweep_parameters(int num_trials, int num_warmup_trials,
                                    double trial_stddev_threshold_j);

enum class SweptParameter { kMeasurement, kCooldown };

// The smallest swept value (measurement or cooldown duration) whose entry is valid; nullopt when
// none is.
std::optional<double> shortest_valid(const std::vector<SweepResult>& entries,
                                     SweptParameter parameter);

}  // namespace zeus
