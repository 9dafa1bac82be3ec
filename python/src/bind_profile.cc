// The pure rules of zeus_cpp.profile.measure (zeus/monitor/profile_trial.h): parameter checks,
// iteration
// counts and the combination of the ranks' readings into a TrialResult.
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.h"
#include "zeus/monitor/profile_sweep.h"
#include "zeus/monitor/profile_trial.h"

namespace zeus::python {
namespace {

TrialParameters parameters(double measurement_s, double cooldown_s, int warmup, int calibration,
                           std::optional<double> settle_s) {
  TrialParameters p;
  p.measurement_duration_s = measurement_s;
  p.cooldown_duration_s = cooldown_s;
  p.num_warmup_iterations = warmup;
  p.num_calibration_iterations = calibration;
  p.warmup_settle_duration_s = settle_s;
  return p;
}

using ProfileTrialTuple = std::tuple<double, double, double, double, int, double, double>;

TrialResult trial_from_tuple(const ProfileTrialTuple& t) {
  const auto& [energy_per_iter, time_per_iter, total_energy, total_time, iterations, before, after] = t;
  return TrialResult{energy_per_iter, time_per_iter, total_energy, total_time, iterations, before,
                     after};
}

}  // namespace

void bind_profile(py::module_& m) {
  m.def(
      "trial_plan",
      [](double measurement_s, double cooldown_s, int warmup, int calibration,
         std::optional<double> settle_s, double iteration_s) {
        const TrialParameters p =
            parameters(measurement_s, cooldown_s, warmup, calibration, settle_s);
        unwrap(check_trial_parameters(p));
        return std::make_tuple(warmup_iterations(p, iteration_s),
                               measured_iterations(measurement_s, iteration_s));
      },
      py::arg("measurement_duration"), py::arg("cooldown_duration"),
      py::arg("num_warmup_iterations"), py::arg("num_calibration_iterations"),
      py::arg("warmup_settle_duration"), py::arg("iteration_duration"),
      "(warm-up iterations, measured iterations) of a trial; InvalidArgumentError for a bad "
      "parameter. iteration_duration 0 only checks the parameters.");
  m.def(
      "combine_ranks",
      [](const std::vector<std::tuple<double, double, double, double>>& ranks, int iterations) {
        std::vector<RankTrial> trials;
        for (const auto& [energy_j, time_s, before_c, after_c] : ranks) {
          trials.push_back({energy_j, time_s, before_c, after_c});
        }
        const TrialResult r = unwrap(combine_ranks(trials, iterations));
        return std::make_tuple(r.energy_per_iter_j, r.time_per_iter_s, r.total_energy_j,
                               r.total_time_s, r.iterations, r.temperature_before_c,
                               r.temperature_after_c);
      },
      py::arg("ranks"), py::arg("iterations"),
      "TrialResult fields from [(energy J, time s, temperature before, after)] per rank: energy "
      "summed, time the maximum, temperatures the mean.");
  m.def(
      "summarize_sweep",
      [](double measurement_s, double cooldown_s, const std::vector<ProfileTrialTuple>& trials,
         double threshold_j) {
        std::vector<TrialResult> results;
        for (const ProfileTrialTuple& t : trials) results.push_back(trial_from_tuple(t));
        const SweepResult r =
            unwrap(summarize_sweep(measurement_s, cooldown_s, std::move(results), threshold_j));
        return std::make_tuple(r.energy_mean_j, r.energy_std_j, r.avg_temperature_before_c,
                               r.avg_temperature_after_c, r.avg_total_time_s,
                               r.avg_total_energy_j, r.is_valid);
      },
      py::arg("measurement_duration"), py::arg("cooldown_duration"), py::arg("trials"),
      py::arg("trial_stddev_threshold"),
      "(energy_mean, energy_std, avg_temperature_before, avg_temperature_after, avg_total_time, "
      "avg_total_energy, is_valid) of one swept value's TrialResult tuples.");
  m.def(
      "sweep_range",
      [](std::optional<std::vector<double>> range, const std::string& name) {
        return unwrap(sweep_range(range, name));
      },
      py::arg("search_range"), py::arg("name"),
      "The swept values: search_range, or 1..10 s when None or empty; InvalidArgumentError for a "
      "non-positive value.");
  m.def(
      "check_sweep_parameters",
      [](int num_trials, int num_warmup_trials, double threshold_j) {
        unwrap(check_sweep_parameters(num_trials, num_warmup_trials, threshold_j));
      },
      py::arg("num_trials"), py::arg("num_warmup_trials"), py::arg("trial_stddev_threshold"));
  m.def(
      "shortest_valid",
      [](const std::vector<std::pair<double, bool>>& values) {
        std::vector<SweepResult> entries;
        for (const auto& [value, valid] : values) {
          SweepResult entry;
          entry.measurement_duration_s = value;
          entry.is_valid = valid;
          entries.push_back(std::move(entry));
        }
        return shortest_valid(entries, SweptParameter::kMeasurement);
      },
      py::arg("values"), "The smallest value of [(swept value, is_valid)] that is valid, or None.");
}

}  // namespace zeus::python
