// Charging a span of energy used at constant power: the pure core that the simulator's replay of a
// carbon-intensity or price series uses (zeus/sim/sim_carbon.h), beside the accounting monitor's
// measured windows (zeus/monitor/accounting_monitor.h), whose per-part charging (account_window)
// it reuses.
//
// The span [start_s, start_s + duration_s) is split wherever the provider's value may change
// (IntensityProvider::next_boundary_after); each part gets energy_j × its share of the duration and
// is charged at the value of the interval it begins in: amount = J / 3.6e6 × value per kWh.
// Example: 3.6 MJ over three half-hour intervals worth 100, 200 and 300 gCO2eq/kWh, the job covering
// the last 10 min of the first, all of the second and the first 20 min of the third (1 h in all):
// 1/6 kWh × 100 + 1/2 kWh × 200 + 1/3 kWh × 300 = 216.67 gCO2eq.
// No I/O of its own: with an offline provider (a series, a constant) the answer depends only on the
// arguments. A part whose value the provider lacks (a gap, a time past the series' end) leaves the
// amount unknown: `complete = false` and `unknown_reason`, never an error.
// Thread-safety: as the provider's value_at (IntensitySeries and ConstantIntensity: any thread).
// Failure: InvalidArgument for a negative or non-finite start, duration or energy.
//
//   auto m = zeus::charge_constant_power(*series, start, 3600, 3.6e6);  // m->total() grams
#pragma once

#include "zeus/common/result.h"
#include "zeus/monitor/accounting_monitor.h"
#include "zeus/monitor/intensity_provider.h"

namespace zeus {

// The amount of `energy_j` used at constant power over [start_s, start_s + duration_s) (Unix
// seconds), as an AccountedMeasurement of one device (GPU 0) whose parts are the intervals.
Result<AccountedMeasurement> charge_constant_power(IntensityProvider& provider, double start_s,
                                                   double duration_s, double energy_j);

}  // namespace zeus
