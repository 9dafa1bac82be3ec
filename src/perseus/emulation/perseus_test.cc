// The event-driven 1F1B executor and the Perseus emulation against the paper's numbers.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "zeus/perseus/pfo_planner.h"
#include "zeus/perseus/sim_perseus.h"

namespace zeus::sim {
namespace {

using pfo::InstructionKind;

std::filesystem::path data_dir() { return std::filesystem::path(ZEUS_SOURCE_DIR) / "data"; }

pfo::StageProfile load(const std::string& name) {
  std::ifstream in(data_dir() / "perseus" / "stage_profile" / (name + ".csv"));
  std::stringstream text;
  text << in.rdbuf();
  return *pfo::parse_stage_profile(text.str(), name);
}

TEST(PipelineExecutor, TwoStagesOneMicrobatchByHand) {
  pfo::StageProfile profile;
  profile.rows = {{0, InstructionKind::kForward, 1000, 1.0, 10.0},
                  {0, InstructionKind::kBackward, 1000, 1.0, 20.0},
                  {1, InstructionKind::kForward, 1000, 2.0, 30.0},
                  {1, InstructionKind::kBackward, 1000, 3.0, 40.0}};
  std::vector<std::vector<pfo::PipelineInstruction>> schedule = {pfo::one_f_one_b_order(2, 1, 0),
                                                                 pfo::one_f_one_b_order(2, 1, 1)};
  auto run =
      execute_pipeline(profile, schedule, {{1000, 1000}, {1000, 1000}}, {.p2p_power_w = 5.0});
  ASSERT_TRUE(run) << run.error().to_string();
  // Stage 0: F 0-1, B 6-7; stage 1: F 1-3, B 3-6.
  EXPECT_DOUBLE_EQ(run->iteration_time_s, 7.0);
  EXPECT_DOUBLE_EQ(run->stages[1][0].start_s, 1.0);
  EXPECT_DOUBLE_EQ(run->stages[0][1].start_s, 6.0);
  EXPECT_DOUBLE_EQ(run->compute_energy_j, 100.0);
  EXPECT_DOUBLE_EQ(run->blocking_energy_j, 5.0 * ((7 - 2) + (7 - 5)));
}

TEST(PipelineExecutor, RejectsAnUnprofiledClock) {
  pfo::StageProfile profile = load("gpt3-175b+a100_sxm_bf16");
  std::vector<std::vector<pfo::PipelineInstruction>> schedule;
  std::vector<std::vector<int>> clocks;
  for (int s = 0; s < 8; ++s) {
    schedule.push_back(pfo::one_f_one_b_order(8, 2, s));
    clocks.emplace_back(schedule.back().size(), 1410);
  }
  clocks[3][1] = 1411;
  auto run = execute_pipeline(profile, schedule, clocks, {.p2p_power_w = 83.64});
  ASSERT_FALSE(run);
  EXPECT_NE(run.error().message.find("1411 MHz"), std::string::npos);
}

TEST(PipelineExecutor, ReplayNeverExceedsThePlannedTimeAndMatchesItsEnergy) {
  const pfo::StageProfile profile = load("gpt3-175b+a100_sxm_bf16");
  pfo::PlannerOptions options;
  options.num_stages = 8;
  options.num_microbatches = 12;
  options.p2p_power_w = 83.64;
  auto frontier = pfo::plan_frontier(profile, options);
  ASSERT_TRUE(frontier);
  double worst_energy_gap = 0.0;
  frontier->for_each_plan([&](std::size_t i, const std::vector<std::vector<int>>& clocks) {
    const pfo::FrontierPoint& point = frontier->points()[i];
    auto quantised = execute_pipeline(profile, frontier->schedule(), clocks,
                                      {.p2p_power_w = 83.64, .quantised_unit_s = 0.001});
    ASSERT_TRUE(quantised);
    // With the durations the planner reasons with, the replay is never slower than planned.
    EXPECT_LE(quantised->iteration_time_s, point.time_s + 1e-9) << "plan " << i;
    auto measured = execute_pipeline(profile, frontier->schedule(), clocks, {.p2p_power_w = 83.64});
    ASSERT_TRUE(measured);
    // Measured times lie within one unit per instruction of the quantised ones.
    EXPECT_LT(measured->iteration_time_s, point.time_s * 1.02) << "plan " << i;
    // Energy at the replayed time against the planner's model at its time: only the fit differs.
    const double replay_at_plan_time =
        measured->energy_j() - 83.64 * 8 * (measured->iteration_time_s - point.time_s);
    worst_energy_gap =
        std::max(worst_energy_gap, std::abs(replay_at_plan_time / point.energy_j - 1.0));
  });
  EXPECT_LT(worst_energy_gap, 0.01);
  RecordProperty("worst_energy_gap", std::to_string(worst_energy_gap));
}

TEST(PerseusEmulation, ReproducesTable6AndFigure7ForGpt3OnA100) {
  PerseusEmulationOptions options;
  options.data_dir = data_dir();
  options.models = {"gpt3-175b"};
  options.gpus = {"a100_sxm"};
  options.microbatches = {12, 96};
  options.slowdowns = {1.2};
  auto result = run_perseus_emulation(options);
  ASSERT_TRUE(result) << result.error().to_string();
  ASSERT_EQ(result->configs.size(), 2u);
  const PerseusConfigResult& mb12 = result->configs[0];
  const PerseusConfigResult& mb96 = result->configs[1];
  EXPECT_EQ(mb12.num_plans, 639u);
  EXPECT_NEAR(100.0 * mb12.intrinsic_saving, 15.2, 0.05);  // Table 6
  EXPECT_NEAR(100.0 * mb96.intrinsic_saving, 13.3, 0.05);
  EXPECT_EQ(mb96.num_pipelines, 16);
  EXPECT_NEAR(100.0 * mb96.stragglers[0].perseus_saving, 27.0, 0.05);  // Fig. 7
  EXPECT_GT(mb96.stragglers[0].perseus_saving, mb96.stragglers[0].envpipe_saving);
  EXPECT_LE(mb12.executed_quantised_time_s, mb12.t_min_s + 1e-9);
  EXPECT_FALSE(mb12.baseline_run.stages.empty());
}

// The combined straggler policy never saves less than Perseus or the best global clock, at every
// T'/T of the emulation, on both models and GPUs at 12 microbatches (the whole default table,
// 12 to 96 microbatches, is e2e.simulate_perseus_combined: a minute of planning, too slow for the
// sanitizer run).
TEST(PerseusEmulation, CombinedPolicyIsNeverBelowPerseusOrTheGlobalClock) {
  PerseusEmulationOptions options;
  options.data_dir = data_dir();
  options.microbatches = {12};
  auto result = run_perseus_emulation(options);
  ASSERT_TRUE(result) << result.error().to_string();
  ASSERT_EQ(result->configs.size(), 4u);
  int global_clock_wins = 0;
  for (const PerseusConfigResult& c : result->configs) {
    ASSERT_EQ(c.stragglers.size(), options.slowdowns.size());
    for (const StragglerRow& r : c.stragglers) {
      const std::string where = c.model + " " + c.gpu + " mb" +
                                std::to_string(c.num_microbatches) + " s=" +
                                std::to_string(r.slowdown);
      EXPECT_GE(r.combined_saving, r.perseus_saving - 1e-12) << where;
      EXPECT_GE(r.combined_saving, r.global_clock_saving - 1e-12) << where;
      EXPECT_LE(r.combined_time_s, c.t_min_s * r.slowdown * (1 + 1e-12)) << where;
      if (r.combined_global_clock_mhz > 0) {
        ++global_clock_wins;
        EXPECT_GT(r.combined_saving, r.perseus_saving) << where;
      } else {
        EXPECT_DOUBLE_EQ(r.combined_saving, r.perseus_saving) << where;
      }
    }
  }
  // Long stragglers are where a global clock beats the frontier's T* (part 1's finding).
  EXPECT_GT(global_clock_wins, 0);
}

TEST(PerseusEmulation, GlobalClockRunsCoverEveryClockProfiledEverywhere) {
  const pfo::StageProfile profile = load("gpt3-175b+a100_sxm_bf16");
  std::vector<std::vector<pfo::PipelineInstruction>> schedule;
  for (int s = 0; s < 8; ++s) schedule.push_back(pfo::one_f_one_b_order(8, 4, s));
  auto runs = global_clock_runs(profile, schedule, 83.64);
  ASSERT_TRUE(runs) << runs.error().to_string();
  ASSERT_EQ(runs->size(), 38u);  // 1410 down to 855 MHz in 15 MHz steps
  EXPECT_EQ(runs->front().plan.clock_mhz, 855);
  EXPECT_EQ(runs->back().plan.clock_mhz, 1410);
  EXPECT_GT(runs->front().plan.time_s, runs->back().plan.time_s);
  EXPECT_DOUBLE_EQ(runs->back().plan.energy_j, runs->back().run.energy_j());
}

TEST(PerseusEmulation, BadOptionsAreClearErrors) {
  PerseusEmulationOptions options;
  options.data_dir = data_dir();
  options.gpus = {"h100"};
  auto result = run_perseus_emulation(options);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("h100"), std::string::npos);
  options.gpus = {"a40"};
  options.slowdowns = {0.5};
  EXPECT_FALSE(run_perseus_emulation(options));
  options.slowdowns = {1.2};
  options.data_dir = "/nonexistent";
  result = run_perseus_emulation(options);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("--data"), std::string::npos);
}

}  // namespace
}  // namespace zeus::sim
