// format_perseus_table: the text output of `zeus simulate perseus` (zeus/perseus/sim_perseus.h).
#include <string>

#include "sim/appendf.h"
#include "zeus/perseus/sim_perseus.h"

namespace zeus::sim {

std::string format_perseus_table(const PerseusEmulationResult& result) {
  std::string out;
  appendf(out,
          "Perseus: intrinsic energy saving of the fastest plan (no slowdown) against every "
          "instruction at\n");
  appendf(
      out,
      "the highest clock (paper Table 6); plans = frontier size; T*: the least-energy plan.\n\n");
  appendf(out, "%-10s %-9s %4s %6s %7s %8s %8s %8s %9s %9s %8s\n", "model", "gpu", "mb", "pipes",
          "plans", "T_min s", "T* s", "T*/Tmin", "E(Tmin) J", "baseline", "saving");
  for (const PerseusConfigResult& c : result.configs) {
    appendf(out, "%-10s %-9s %4d %6d %7zu %8.3f %8.3f %8.3f %9.1f %9.1f %7.1f%%\n", c.model.c_str(),
            c.gpu.c_str(), c.num_microbatches, c.num_pipelines, c.num_plans, c.t_min_s, c.t_star_s,
            c.t_star_s / c.t_min_s, c.e_min_time_j, c.baseline_energy_j,
            100.0 * c.intrinsic_saving);
  }
  appendf(out,
          "\nWith a straggler at T' = s x T_min: total saving of all pipelines against the GPUs' "
          "default\n");
  appendf(out, "(paper Fig. 7); every other pipeline runs the least-energy plan within T'.\n");
  appendf(out,
          "combined: the cheaper at T' of the Perseus plan and the best global clock (its clock,\n"
          "or 'plan').\n\n");
  appendf(out, "%-10s %-9s %4s %6s %9s %9s %9s %12s %9s %6s\n", "model", "gpu", "mb", "s",
          "Perseus", "EnvPipe", "global", "(clock MHz)", "combined", "");
  for (const PerseusConfigResult& c : result.configs) {
    for (const StragglerRow& row : c.stragglers) {
      const std::string by = row.combined_global_clock_mhz > 0
                                 ? std::to_string(row.combined_global_clock_mhz)
                                 : std::string("plan");
      appendf(out, "%-10s %-9s %4d %6.2f %8.1f%% %8.1f%% %8.1f%% %12d %8.1f%% %6s\n",
              c.model.c_str(), c.gpu.c_str(), c.num_microbatches, row.slowdown,
              100.0 * row.perseus_saving, 100.0 * row.envpipe_saving,
              100.0 * row.global_clock_saving, row.global_clock_mhz, 100.0 * row.combined_saving,
              by.c_str());
    }
  }
  appendf(out,
          "\nReplay of the fastest plan by the event-driven executor (measured times and "
          "energies):\n\n");
  appendf(out, "%-10s %-9s %4s %10s %10s %10s %11s %11s\n", "model", "gpu", "mb", "planned s",
          "replay s", "quant. s", "planned J", "replay J");
  for (const PerseusConfigResult& c : result.configs) {
    appendf(out, "%-10s %-9s %4d %10.4f %10.4f %10.4f %11.1f %11.1f\n", c.model.c_str(),
            c.gpu.c_str(), c.num_microbatches, c.t_min_s, c.executed_time_s,
            c.executed_quantised_time_s, c.e_min_time_j, c.executed_energy_j);
  }
  return out;
}

}  // namespace zeus::sim
