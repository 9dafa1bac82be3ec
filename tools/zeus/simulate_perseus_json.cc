// perseus_json: `zeus simulate perseus --json` (keys documented in docs/simulate.md).
#include "simulate_json.h"

namespace zeus::cli {

nlohmann::ordered_json perseus_json(const sim::PerseusEmulationResult& result) {
  nlohmann::ordered_json configs = nlohmann::ordered_json::array();
  for (const sim::PerseusConfigResult& c : result.configs) {
    nlohmann::ordered_json stragglers = nlohmann::ordered_json::array();
    for (const sim::StragglerRow& r : c.stragglers) {
      stragglers.push_back({{"slowdown", r.slowdown},
                            {"plan_time_s", r.plan_time_s},
                            {"perseus_saving", r.perseus_saving},
                            {"envpipe_saving", r.envpipe_saving},
                            {"global_clock_saving", r.global_clock_saving},
                            {"global_clock_mhz", r.global_clock_mhz},
                            {"combined_saving", r.combined_saving},
                            {"combined_plan_time_s", r.combined_time_s},
                            {"combined_global_clock_mhz", r.combined_global_clock_mhz}});
    }
    configs.push_back({{"model", c.model},
                       {"gpu", c.gpu},
                       {"microbatches", c.num_microbatches},
                       {"pipelines", c.num_pipelines},
                       {"unit_s", c.unit_s},
                       {"p2p_power_w", c.p2p_power_w},
                       {"plans", c.num_plans},
                       {"planning_s", c.plan_seconds},
                       {"t_max_s", c.t_max_s},
                       {"t_min_s", c.t_min_s},
                       {"t_star_s", c.t_star_s},
                       {"slowest_plan_energy_j", c.e_first_j},
                       {"fastest_plan_energy_j", c.e_min_time_j},
                       {"t_star_energy_j", c.e_star_j},
                       {"all_max_clock_energy_j", c.baseline_energy_j},
                       {"intrinsic_saving", c.intrinsic_saving},
                       {"envpipe_time_s", c.envpipe_time_s},
                       {"envpipe_energy_j", c.envpipe_energy_j},
                       {"replay_time_s", c.executed_time_s},
                       {"replay_energy_j", c.executed_energy_j},
                       {"replay_quantised_time_s", c.executed_quantised_time_s},
                       {"stragglers", stragglers}});
  }
  return {{"experiment", "perseus"}, {"configs", configs}};
}

}  // namespace zeus::cli
