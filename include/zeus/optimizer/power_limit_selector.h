// PowerLimitSelector: the pure decision core that picks the best knob setting (a GPU power limit,
// or a locked SM clock) from profiled energy and time per setting.
//
// Selectors (Python Zeus, paper §4.2): energy (argmin J), time (argmin s), zeus cost
// C = eta*E + (1 - eta)*MaxPower*T (default eta = 0.5), and max slowdown (the lowest setting
// whose time <= factor * time at the highest setting). Ties go to the higher setting.
// Units: settings are integers (W for power limits, MHz for SM clocks); energy J, time s,
// MaxPower W (the largest profiled limit x number of GPUs; see default_max_power_w()).
// No I/O, no clock, no globals: the live optimizer, the CLI and the simulator call the same code.
// Thread-safety: immutable values; const methods may be called from any thread.
// Failure: InvalidArgument for eta outside [0, 1], factor < 1 or NaN, an unknown spelling,
// and for empty, duplicate or non-finite measurements.
// Custom selectors (custom()): a caller-supplied function picks the setting (the Python
// bindings' OptimumSelector subclasses); select() refuses a setting that was not measured, and
// passes the function's own error on. They have no cost (costs() answers NotSupported) and no
// CLI spelling (parse(name()) does not give them back).
//
//   auto selector = zeus::PowerLimitSelector::parse("zeus", /*eta=*/0.5);
//   std::vector<zeus::KnobMeasurement> m = {{300, 2900.0, 10.5}, {250, 2700.0, 11.2}};
//   auto best_w = selector->select(m, zeus::default_max_power_w(m, /*gpu_count=*/1));
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/result.h"

namespace zeus {

// Energy and time measured at one knob setting (summed over GPUs and ranks; time is the max).
struct KnobMeasurement {
  uint32_t setting = 0;   // power limit in W, or locked SM clock in MHz
  double energy_j = 0.0;  // energy over the profiling window, all GPUs
  double time_s = 0.0;    // wall time of the profiling window

  bool operator==(const KnobMeasurement&) const = default;
};

// The MaxPower of the zeus cost for power-limit profiles: the largest profiled setting (W) x
// gpu_count. 0 when `measurements` is empty.
double default_max_power_w(std::span<const KnobMeasurement> measurements, uint32_t gpu_count);

class PowerLimitSelector {
 public:
  enum class Kind { kEnergy, kTime, kZeusCost, kMaxSlowdown, kCustom };
  // A custom selector's choice from validated measurements (and MaxPower, as for the zeus cost).
  using CustomSelect = std::function<Result<uint32_t>(std::span<const KnobMeasurement> measurements,
                                                      double max_power_w)>;

  // Argmin energy.
  static PowerLimitSelector min_energy();
  // Argmin time.
  static PowerLimitSelector min_time();
  // Argmin eta*E + (1 - eta)*MaxPower*T; InvalidArgument unless 0 <= eta <= 1.
  static Result<PowerLimitSelector> zeus_cost(double eta);
  // Lowest setting with T <= factor * T(highest setting); InvalidArgument unless factor >= 1.
  static Result<PowerLimitSelector> max_slowdown(double factor);
  // The CLI spelling: "zeus" (uses `eta`), "zeus:<eta>", "energy", "time",
  // "slowdown:<factor>" (e.g. "slowdown:1.1"). InvalidArgument naming the accepted spellings.
  static Result<PowerLimitSelector> parse(std::string_view spec, double eta = 0.5);
  // A selector whose choice is `select`'s (it may be called from any thread that calls
  // select(), and must be safe to copy); `name` is what name() answers. InvalidArgument for an
  // empty `select` or `name`.
  static Result<PowerLimitSelector> custom(std::string name, CustomSelect select);

  Kind kind() const { return kind_; }
  // eta for kZeusCost, the factor for kMaxSlowdown, 0 otherwise.
  double parameter() const { return parameter_; }
  // "zeus:0.5", "energy", "time" or "slowdown:1.1"; parse(name()) gives this selector back.
  // A custom selector's name as given.
  std::string name() const;

  // The quantity this selector minimises, one per measurement (same order): energy J, time s,
  // zeus cost (J), or for max slowdown the slowdown T / T(highest setting). max_power_w is used
  // by the zeus cost only (must be > 0 there). NotSupported for a custom selector.
  Result<std::vector<double>> costs(std::span<const KnobMeasurement> measurements,
                                    double max_power_w) const;
  // The chosen setting. Measurements may come in any order; ties go to the higher setting.
  // A custom selector's error is passed on; a setting it returns that is not among the
  // measurements is InvalidArgument naming the measured ones.
  Result<uint32_t> select(std::span<const KnobMeasurement> measurements,
                          double max_power_w) const;

 private:
  PowerLimitSelector(Kind kind, double parameter) : kind_(kind), parameter_(parameter) {}
  Kind kind_;
  double parameter_;
  std::string custom_name_;  // kCustom only
  CustomSelect custom_;      // kCustom only
};

}  // namespace zeus
