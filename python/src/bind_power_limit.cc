// _zeus_cpp.PowerLimitSelector and _zeus_cpp.PowerLimitOptimizer (zeus_cpp.optimizer.power_limit
// builds GlobalPowerLimitOptimizer, Energy, Time, ZeusCost and MaxSlowdownConstraint on them).
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.h"
#include "zeus/optimizer/power_limit_optimizer.h"
#include "zeus/optimizer/power_limit_selector.h"

namespace zeus::python {
namespace {

using PlMeasurementTuple = std::tuple<uint32_t, double, double>;  // (setting, energy_j, time_s)

std::vector<KnobMeasurement> to_measurements(const std::vector<PlMeasurementTuple>& tuples) {
  std::vector<KnobMeasurement> out;
  for (const auto& [setting, energy_j, time_s] : tuples) out.push_back({setting, energy_j, time_s});
  return out;
}

std::vector<PlMeasurementTuple> to_tuples(const std::vector<KnobMeasurement>& measurements) {
  std::vector<PlMeasurementTuple> out;
  for (const auto& m : measurements) out.emplace_back(m.setting, m.energy_j, m.time_s);
  return out;
}

// The optimizer with the monitor it drives (kept alive).
struct OptimizerSession {
  std::shared_ptr<MonitorSession> monitor;
  std::unique_ptr<PowerLimitOptimizer> optimizer;
  ~OptimizerSession() {
    if (monitor) destroy_locked(optimizer, monitor->mutex);
  }
  // Runs fn holding the monitor's mutex (the optimizer opens and closes monitor windows).
  template <typename F>
  auto locked(F&& fn) {
    std::lock_guard<std::mutex> lock(monitor->mutex);
    return fn();
  }
};

// Wraps a Python all_reduce(energy_j, time_s, gpu_count) -> (energy_j, time_s, gpu_count).
RankAllReduce make_all_reduce(py::object function) {
  if (!PyCallable_Check(function.ptr())) {
    throw py::type_error("all_reduce must be a callable or None");
  }
  PythonCallable callable(std::move(function));
  return [callable](const RankSample& local) -> Result<RankSample> {
    py::gil_scoped_acquire gil;  // before `reduced`, so that it is dropped with the GIL held
    py::object reduced;
    if (!callable.call(&reduced, local.energy_j, local.time_s, local.gpu_count)) {
      return fail(ErrorCode::kUnavailable, "the all-reduce across ranks raised a Python exception");
    }
    try {
      auto [energy_j, time_s, gpu_count] = reduced.cast<std::tuple<double, double, uint32_t>>();
      return RankSample{energy_j, time_s, gpu_count};
    } catch (const py::cast_error&) {
      return fail(ErrorCode::kInternal,
                  "the all-reduce must return (energy_j, time_s, gpu_count) as numbers");
    }
  };
}

// Wraps a Python select(measurements, max_power_w) -> setting (zeus_cpp.optimizer.power_limit
// turns an OptimumSelector subclass into one): (setting, energy_j, time_s) tuples in, an int out.
// A Python exception it raises is parked (re-raised by without_gil) and fails the selection.
PowerLimitSelector make_custom_selector(std::string name, py::object function) {
  if (!PyCallable_Check(function.ptr())) throw py::type_error("select must be a callable");
  PythonCallable callable(std::move(function));
  PowerLimitSelector::CustomSelect select =
      [callable, name](std::span<const KnobMeasurement> measurements,
                       double max_power_w) -> Result<uint32_t> {
    py::gil_scoped_acquire gil;  // before `chosen`, so that it is dropped with the GIL held
    py::object chosen;
    const std::vector<KnobMeasurement> copied(measurements.begin(), measurements.end());
    if (!callable.call(&chosen, to_tuples(copied), max_power_w)) {
      return fail(ErrorCode::kInternal, "the custom selector " + name + " raised an exception");
    }
    try {
      return chosen.cast<uint32_t>();
    } catch (const py::cast_error&) {
      return fail(ErrorCode::kInvalidArgument,
                  "the custom selector " + name + " must return a power limit in W (an int), not " +
                      std::string(py::str(py::repr(chosen))));
    }
  };
  return unwrap(PowerLimitSelector::custom(std::move(name), std::move(select)));
}

// Raises a Python exception a custom selector parked, then the Result's error.
template <typename T>
T unwrap_selected(Result<T> result) {
  if (PyErr_Occurred() != nullptr) throw py::error_already_set();
  return unwrap(std::move(result));
}

std::shared_ptr<OptimizerSession> make_plo_session(std::shared_ptr<MonitorSession> monitor,
                                                 const PowerLimitSelector& selector,
                                                 int64_t wait_steps, int64_t warmup_steps,
                                                 int64_t profile_steps, int64_t pl_step_w,
                                                 std::string profile_path, py::object all_reduce,
                                                 bool handle_signals, bool observer,
                                                 std::vector<uint32_t> candidates_w) {
  require(monitor != nullptr, "monitor must be a ZeusMonitor");
  require(wait_steps >= 0, "wait_steps must be non-negative");
  require(warmup_steps >= 0, "warmup_steps must be non-negative");
  require(profile_steps > 0, "profile_steps must be positive");
  require(pl_step_w > 0, "pl_step must be positive (W)");
  require(wait_steps <= UINT32_MAX && warmup_steps <= UINT32_MAX &&
              profile_steps <= UINT32_MAX && pl_step_w <= UINT32_MAX,
          "step counts must fit in 32 bits");
  PowerLimitOptimizerOptions options;
  options.wait_steps = static_cast<uint32_t>(wait_steps);
  // The Python Zeus allows warmup_steps = 0; the core counts at least one step begin per state.
  options.warmup_steps = static_cast<uint32_t>(std::max<int64_t>(warmup_steps, 1));
  options.profile_steps = static_cast<uint32_t>(profile_steps);
  options.step_w = static_cast<uint32_t>(pl_step_w);
  options.selector = selector;
  options.profile_path = std::move(profile_path);
  options.handle_signals = handle_signals;
  options.observer = observer;
  options.candidates = std::move(candidates_w);
  if (!all_reduce.is_none()) options.all_reduce = make_all_reduce(std::move(all_reduce));
  auto session = std::make_shared<OptimizerSession>();
  session->monitor = std::move(monitor);
  session->optimizer = without_gil([&] {
    std::lock_guard<std::mutex> lock(session->monitor->mutex);
    return PowerLimitOptimizer::create(*session->monitor->monitor,
                                       session->monitor->session->devices, system_clock(),
                                       std::move(options));
  });
  return session;
}

}  // namespace

void bind_power_limit(py::module_& m) {
  py::class_<PowerLimitSelector>(m, "PowerLimitSelector",
                                 "The pure optimum selector core (zeus::PowerLimitSelector).")
      .def_static("min_energy", &PowerLimitSelector::min_energy)
      .def_static("min_time", &PowerLimitSelector::min_time)
      .def_static("zeus_cost",
                  [](double eta) { return unwrap(PowerLimitSelector::zeus_cost(eta)); },
                  py::arg("eta"))
      .def_static("max_slowdown",
                  [](double factor) { return unwrap(PowerLimitSelector::max_slowdown(factor)); },
                  py::arg("factor"))
      .def_static("custom", &make_custom_selector, py::arg("name"), py::arg("select"),
                  "A selector whose choice is select([(setting, energy_j, time_s)], max_power_w) "
                  "-> setting; a setting that was not measured is refused.")
      .def_static("parse",
                  [](const std::string& spec, double eta) {
                    return unwrap(PowerLimitSelector::parse(spec, eta));
                  },
                  py::arg("spec"), py::arg("eta") = 0.5)
      .def_property_readonly("name", &PowerLimitSelector::name)
      .def_property_readonly("parameter", &PowerLimitSelector::parameter)
      .def(
          "select",
          [](const PowerLimitSelector& s, const std::vector<PlMeasurementTuple>& measurements,
             double max_power_w) {
            return unwrap_selected(s.select(to_measurements(measurements), max_power_w));
          },
          py::arg("measurements"), py::arg("max_power_w"),
          "The chosen setting from (setting, energy_j, time_s) tuples.")
      .def(
          "costs",
          [](const PowerLimitSelector& s, const std::vector<PlMeasurementTuple>& measurements,
             double max_power_w) {
            return unwrap_selected(s.costs(to_measurements(measurements), max_power_w));
          },
          py::arg("measurements"), py::arg("max_power_w"));

  m.def("default_max_power_w",
        [](const std::vector<PlMeasurementTuple>& measurements, uint32_t gpu_count) {
          return default_max_power_w(to_measurements(measurements), gpu_count);
        },
        py::arg("measurements"), py::arg("gpu_count"));

  py::class_<OptimizerSession, std::shared_ptr<OptimizerSession>>(
      m, "PowerLimitOptimizer", "zeus::PowerLimitOptimizer driving a monitor's GPUs.")
      .def(py::init(&make_plo_session), py::arg("monitor"), py::arg("selector"),
           py::arg("wait_steps") = 1, py::arg("warmup_steps") = 10, py::arg("profile_steps") = 40,
           py::arg("pl_step_w") = 25, py::arg("profile_path") = "",
           py::arg("all_reduce") = py::none(), py::arg("handle_signals") = true,
           py::arg("observer") = false, py::arg("candidates_w") = std::vector<uint32_t>{})
      .def("on_step_begin",
           [](OptimizerSession& s) { without_gil([&] { return s.locked([&] { return s.optimizer->on_step_begin(); }); }); })
      .def("on_step_end",
           [](OptimizerSession& s) { without_gil([&] { return s.locked([&] { return s.optimizer->on_step_end(); }); }); })
      .def("on_epoch_begin",
           [](OptimizerSession& s) { without_gil([&] { return s.locked([&] { return s.optimizer->on_epoch_begin(); }); }); })
      .def("on_epoch_end",
           [](OptimizerSession& s) { without_gil([&] { return s.locked([&] { return s.optimizer->on_epoch_end(); }); }); })
      .def("restore",
           [](OptimizerSession& s) { without_gil([&] { return s.locked([&] { return s.optimizer->restore(); }); }); },
           "Puts the maximum power limit back on every GPU.")
      .def_property_readonly(
          "state", [](const OptimizerSession& s) { return state_name(s.optimizer->state()); })
      .def_property_readonly("candidates_w",
                             [](const OptimizerSession& s) { return s.optimizer->candidates(); })
      .def_property_readonly(
          "current_setting_w",
          [](const OptimizerSession& s) { return s.optimizer->current_setting(); })
      .def_property_readonly(
          "optimal_setting_w",
          [](const OptimizerSession& s) { return s.optimizer->optimal_setting(); })
      .def_property_readonly(
          "measurements",
          [](const OptimizerSession& s) { return to_tuples(s.optimizer->measurements()); },
          "(setting, energy_j, time_s) per profiled setting, after the all-reduce.")
      .def_property_readonly("gpu_count", [](const OptimizerSession& s) {
        return s.optimizer->profile().gpu_count;
      });
}

}  // namespace zeus::python
