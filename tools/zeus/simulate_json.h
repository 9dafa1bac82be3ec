// The JSON documents of `zeus simulate --json`, one per experiment. Keys are stable and
// documented in docs/simulate.md; numbers are means over seeds, in SI units (J, s, W).
#pragma once

#include <nlohmann/json.hpp>

#include "zeus/perseus/sim_perseus.h"
#include "zeus/sim/sim_compare.h"
#include "zeus/sim/sim_concurrent.h"
#include "zeus/sim/sim_drift.h"
#include "zeus/sim/sim_experiments.h"
#include "zeus/sim/sim_search_path.h"
#include "zeus/sim/sim_sweeps.h"

namespace zeus::cli {

nlohmann::ordered_json headline_json(const sim::HeadlineResult& result);
nlohmann::ordered_json pareto_json(const sim::ParetoResult& result);
nlohmann::ordered_json sweep_json(const sim::SweepResult& result);
nlohmann::ordered_json search_path_json(const sim::SearchPathResult& result);
nlohmann::ordered_json drift_json(const sim::DriftResult& result);
nlohmann::ordered_json concurrent_json(const sim::ConcurrentResult& result);
nlohmann::ordered_json perseus_json(const sim::PerseusEmulationResult& result);
nlohmann::ordered_json compare_json(const sim::CompareResult& result);

}  // namespace zeus::cli
