// The rules of one thermally stable measurement trial (Zeus's zeus.profile.measure): how many
// warm-up and measured iterations to run, and how the ranks' readings combine into a
// TrialResult. Pure: no I/O, no clock — the caller runs the workload, reads the monitor and
// all-reduces across ranks.
//
// A trial: calibrate the iteration time (warm-up iterations, then timed calibration ones; the
// time is the maximum over ranks), sleep cooldown_s, warm up (a fixed count, or for
// warmup_settle_s: ceil(settle / iteration time), at least 1), then measure
// ceil(measurement_s / iteration time) iterations (at least 1) in one window. Across ranks,
// energy is summed, time is the maximum and temperatures are averaged.
// Units: seconds, joules, degrees Celsius. Failure: InvalidArgument naming the parameter.
//
//   ZEUS_TRY(zeus::check_trial_parameters(params));
//   int n = zeus::measured_iterations(params.measurement_duration_s, iteration_s);
#pragma once

#include <optional>
#include <vector>

#include "zeus/common/result.h"

namespace zeus {

struct TrialParameters {
  double measurement_duration_s = 0;
  double cooldown_duration_s = 0;
  int num_warmup_iterations = 10;
  int num_calibration_iterations = 100;
  // Warm up for this long instead of num_warmup_iterations (calibration still uses those).
  std::optional<double> warmup_settle_duration_s;
};

// InvalidArgument for a non-positive or non-finite measurement duration, a negative or
// non-finite cooldown or settle duration, negative warm-up or non-positive calibration counts.
Result<void> check_trial_parameters(const TrialParameters& params);

// Iterations in the measured window: ceil(measurement / iteration time), at least 1.
int measured_iterations(double measurement_duration_s, double iteration_duration_s);
// Warm-up iterations before the window: ceil(settle / iteration time) (at least 1) when a
// settle duration is given, else num_warmup_iterations.
int warmup_iterations(const TrialParameters& params, double iteration_duration_s);

// One rank's readings of a trial.
struct RankTrial {
  double energy_j = 0;
  double time_s = 0;
  double temperature_before_c = 0;
  double temperature_after_c = 0;
};

// Zeus's TrialResult fields.
struct TrialResult {
  double energy_per_iter_j = 0;
  double time_per_iter_s = 0;
  double total_energy_j = 0;
  double total_time_s = 0;
  int iterations = 0;
  double temperature_before_c = 0;
  double temperature_after_c = 0;
};

// The trial over every rank: energy summed, time the maximum, temperatures the mean.
// InvalidArgument for no rank or fewer than one iteration.
Result<TrialResult> combine_ranks(const std::vector<RankTrial>& ranks, int iterations);

}  // namespace zeus
