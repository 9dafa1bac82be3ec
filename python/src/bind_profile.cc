// The pure rules of zeus_cpp.profile.measure (zeus/profile_trial.h): parameter checks, iteration
// counts and the combination of the ranks' readings into a TrialResult.
#include <optional>
#include <tuple>
#include <vector>

#include "bindings.h"
#include "zeus/profile_trial.h"

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
}

}  // namespace zeus::python
