#include "perseus/planner/execution_options.h"

#include <algorithm>
#include <set>
#include <string>

#include "perseus/planner/python_float.h"

namespace zeus::pfo {
namespace {

// Step 1: options not dominated by another one that is faster and cheaper by `factor`; kept in
// order of time, slowest first (a stable sort, as the reference's).
std::vector<ProfileRow> pareto_filter(std::vector<ProfileRow> rows, double factor) {
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ProfileRow& x, const ProfileRow& y) { return x.time_s > y.time_s; });
  std::vector<ProfileRow> kept;
  for (const ProfileRow& row : rows) {
    const double time = row.time_s * factor;
    const double energy = row.energy_j * factor;
    bool dominated = false;
    for (const ProfileRow& other : rows) {
      if (other.time_s < time && other.energy_j < energy) {
        dominated = true;
        break;
      }
    }
    if (!dominated) kept.push_back(row);
  }
  return kept;
}

// Steps 2 and 3.
std::vector<ExecutionOption> quantise_and_dedup(std::vector<ProfileRow> rows, double unit_time_s) {
  std::stable_sort(rows.begin(), rows.end(), [](const ProfileRow& x, const ProfileRow& y) {
    return x.energy_j > y.energy_j;
  });
  std::vector<ExecutionOption> options;
  std::set<int64_t> seen;
  for (const ProfileRow& row : rows) {
    const auto quant = static_cast<int64_t>(python_floordiv(row.time_s, unit_time_s));
    if (!seen.insert(quant).second) continue;
    options.push_back({row.frequency_mhz, row.time_s, row.energy_j, quant, row.energy_j});
  }
  std::stable_sort(options.begin(), options.end(),
                   [](const ExecutionOption& x, const ExecutionOption& y) {
                     return x.quant_time > y.quant_time;
                   });
  return options;
}

}  // namespace

Result<std::vector<ExecutionOption>> candidate_options(const std::vector<ProfileRow>& measured,
                                                       double unit_time_s, double p2p_power_w,
                                                       double noise_factor, ParetoEnergy pareto) {
  // Zeus 0.16's order: filter and de-duplicate on effective energy.
  std::vector<ProfileRow> rows = measured;
  if (pareto == ParetoEnergy::kEffective) {
    for (ProfileRow& row : rows) {
      row.energy_j -= p2p_power_w * python_floordiv(row.time_s, unit_time_s) * unit_time_s;
    }
  }
  std::vector<ExecutionOption> options = quantise_and_dedup(pareto_filter(rows, 1.0), unit_time_s);
  if (options.size() <= 3) {
    options = quantise_and_dedup(pareto_filter(rows, noise_factor), unit_time_s);
  }
  if (options.size() < 4) {
    const ProfileRow& any = rows.front();
    return fail(ErrorCode::kInvalidArgument,
                "stage " + std::to_string(any.stage) + " " +
                    std::string(instruction_name(any.instruction)) + ": only " +
                    std::to_string(options.size()) +
                    " distinct quantised times survive the Pareto filter; the exponential cost "
                    "fit needs at least 4 (profile more clocks, use a smaller --unit, or a lower "
                    "--noise factor)");
  }
  for (ExecutionOption& option : options) {
    if (pareto == ParetoEnergy::kEffective) {
      option.effective_energy_j = option.energy_j;  // already effective; restore the measured one
      for (const ProfileRow& row : measured) {
        if (row.frequency_mhz == option.frequency_mhz) option.energy_j = row.energy_j;
      }
      continue;
    }
    // Evaluated as the reference does: (P_b * q) * unit.
    option.effective_energy_j =
        option.energy_j - p2p_power_w * static_cast<double>(option.quant_time) * unit_time_s;
  }
  return options;
}

}  // namespace zeus::pfo
