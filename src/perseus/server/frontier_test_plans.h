// Test helper: a real frontier (GPT-3 175B on A100, 8 stages x 4 microbatches, from the bundled
// stage profile) planned and written as DIR/plans.bin with its global-clock alternatives, as
// `zeus pfo plan --out DIR` does.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "zeus/perseus/pfo_plan_store.h"
#include "zeus/perseus/sim_perseus.h"

namespace zeus::pfo::testing {

inline constexpr int kTestStages = 8;
inline constexpr int kTestMicrobatches = 4;

// Plans and writes DIR/plans.bin; returns the store opened from it.
inline PlanStore write_test_plans(const std::filesystem::path& dir) {
  std::ifstream in(std::filesystem::path(ZEUS_SOURCE_DIR) / "data" / "perseus" / "stage_profile" /
                   "gpt3-175b+a100_sxm_bf16.csv");
  std::stringstream text;
  text << in.rdbuf();
  const StageProfile profile = *parse_stage_profile(text.str(), "gpt3");
  PlannerOptions options;
  options.num_stages = kTestStages;
  options.num_microbatches = kTestMicrobatches;
  options.p2p_power_w = 83.64;
  const Frontier frontier = *plan_frontier(profile, options);
  std::vector<GlobalClockPlan> clocks;
  auto runs = sim::global_clock_runs(profile, frontier.schedule(), 83.64);
  EXPECT_TRUE(runs);
  for (const auto& run : *runs) clocks.push_back(run.plan);
  std::filesystem::create_directories(dir);
  EXPECT_TRUE(write_plan_store(dir / "plans.bin", frontier, clocks));
  return *PlanStore::open(dir / "plans.bin");
}

// The A100's profiled SM clocks, 1410 down to 855 MHz.
inline std::vector<int> a100_clocks_mhz() {
  std::vector<int> out;
  for (int mhz = 1410; mhz >= 855; mhz -= 15) out.push_back(mhz);
  return out;
}

// A straggler time (s) at which the combined policy picks a global clock: scans T' upwards.
inline double straggler_time_for_global_clock(const PlanStore& store) {
  const double t_min = fastest_plan(store.candidates()).point.time_s;
  for (double s = 1.0; s < 3.0; s += 0.01) {
    auto choice = combined_straggler_plan(store.candidates(), store.global_clocks(),
                                          {store.num_stages(), store.p2p_power_w()}, s * t_min);
    if (choice && choice->global_clock_mhz) return s * t_min;
  }
  return 0.0;
}

}  // namespace zeus::pfo::testing
