// Property tests of the frontier on the bundled profiles without a published frontier
// (docs/perseus.md): times fall by exactly one unit per plan, energy is U-shaped with one
// minimum T*, every clock is a profiled option, and the choice rules.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "optimizer/pipeline_frequency/test_data.h"
#include "zeus/pfo_plan_choice.h"
#include "zeus/pfo_planner.h"

namespace zeus::pfo {
namespace {

struct Case {
  std::string profile;
  int microbatches;
  double p2p_power_w;
  double unit_s;
};

class FrontierProperties : public ::testing::TestWithParam<Case> {};

TEST_P(FrontierProperties, Hold) {
  const Case& c = GetParam();
  const StageProfile profile = testing::load_profile(c.profile);
  PlannerOptions options;
  options.num_stages = 8;
  options.num_microbatches = c.microbatches;
  options.p2p_power_w = c.p2p_power_w;
  options.unit_time_s = c.unit_s;
  int64_t last_progress = 0;
  auto frontier =
      plan_frontier(profile, options, [&](int64_t done, int64_t) { last_progress = done; });
  ASSERT_TRUE(frontier) << frontier.error().to_string();
  const auto& points = frontier->points();
  ASSERT_GT(points.size(), 100u);
  EXPECT_EQ(last_progress, static_cast<int64_t>(points.size()));
  // Times: from T_max - 1 down by exactly one unit to T_min.
  EXPECT_EQ(points.front().quant_time, frontier->max_quant_time() - 1);
  EXPECT_EQ(points.back().quant_time, frontier->min_quant_time());
  for (std::size_t i = 1; i < points.size(); ++i)
    ASSERT_EQ(points[i].quant_time, points[i - 1].quant_time - 1) << i;
  // Energy: down to one minimum, then up (slowest first), within rounding.
  const std::size_t star = *min_energy_plan(points);
  for (std::size_t i = 1; i <= star; ++i)
    EXPECT_LE(points[i].energy_j, points[i - 1].energy_j + 1e-9) << i;
  for (std::size_t i = star + 1; i < points.size(); ++i)
    EXPECT_GE(points[i].energy_j, points[i - 1].energy_j - 1e-9) << i;
  EXPECT_GT(star, 0u);
  EXPECT_LT(star, points.size() - 1);
  // Every planned clock is a profiled option of its operation whose quantised time fits the
  // planned duration (or the fastest, when nothing fits); sampled plans.
  for (std::size_t i : {std::size_t{0}, star, points.size() / 2, points.size() - 1}) {
    const auto clocks = frontier->clocks_mhz(i);
    const auto durations = frontier->durations(i);
    for (std::size_t s = 0; s < clocks.size(); ++s) {
      for (std::size_t k = 0; k < clocks[s].size(); ++k) {
        const auto& inst = frontier->schedule()[s][k];
        const OperationModel& model = frontier->model(inst.stage, inst.kind);
        const ExecutionOption* option = nullptr;
        for (const auto& o : model.options) {
          if (o.frequency_mhz == clocks[s][k]) option = &o;
        }
        ASSERT_NE(option, nullptr) << "plan " << i << " stage " << s << " clock " << clocks[s][k];
        EXPECT_NE(profile.find(inst.stage, inst.kind, clocks[s][k]), nullptr);
        EXPECT_TRUE(option->quant_time <= durations[s][k] || option == &model.options.back());
        EXPECT_GE(durations[s][k], model.min_quant_time());
        EXPECT_LE(durations[s][k], model.max_quant_time());
      }
    }
  }
  // Streaming every plan gives the same clocks as reading one back.
  std::size_t seen = 0;
  frontier->for_each_plan([&](std::size_t i, const std::vector<std::vector<int>>& clocks) {
    if (i == star) {
      EXPECT_EQ(clocks, frontier->clocks_mhz(star));
    }
    ++seen;
  });
  EXPECT_EQ(seen, points.size());
}

INSTANTIATE_TEST_SUITE_P(Profiles, FrontierProperties,
                         ::testing::Values(Case{"bloom+a100_sxm_bf16", 12, 83.64, 0.001},
                                           Case{"gpt3-175b+a100_sxm_bf16", 24, 83.64, 0.001},
                                           Case{"bloom+a100_sxm_bf16", 24, 83.64, 0.001},
                                           Case{"gpt3-175b+a40_bf16", 12, 70.38, 0.001},
                                           Case{"bloom+a40_bf16", 12, 70.38, 0.0005},
                                           // The paper's A40 unit, and the larger microbatch counts.
                                           Case{"gpt3-175b+a40_bf16", 12, 70.38, 0.0001},
                                           Case{"gpt3-175b+a100_sxm_bf16", 48, 83.64, 0.001},
                                           Case{"bloom+a100_sxm_bf16", 48, 83.64, 0.001},
                                           Case{"gpt3-175b+a100_sxm_bf16", 96, 83.64, 0.001},
                                           Case{"bloom+a100_sxm_bf16", 96, 83.64, 0.001}));

TEST(PlanChoice, Rules) {
  // Slowest first; energy U-shaped with T* at 3.0 s.
  std::vector<FrontierPoint> points;
  const double times[] = {3.3, 3.2, 3.1, 3.0, 2.9, 2.8};
  const double energies[] = {105, 102, 100, 99, 103, 110};
  for (int i = 0; i < 6; ++i) points.push_back({0, times[i], 0, energies[i], 0});
  EXPECT_EQ(*fastest_plan(points), 5u);
  EXPECT_EQ(*min_energy_plan(points), 3u);
  EXPECT_EQ(*plan_within_slowdown(points, 0.0), 5u);
  EXPECT_EQ(*plan_within_slowdown(points, 0.04), 4u);  // T <= 2.912
  EXPECT_EQ(*plan_within_slowdown(points, 0.5), 3u);   // T* is within
  EXPECT_EQ(*plan_for_straggler(points, 2.95), 4u);    // 2.9 s (103 J) beats 2.8 s (110 J)
  EXPECT_EQ(*plan_for_straggler(points, 3.05), 3u);
  EXPECT_EQ(*plan_for_straggler(points, 10.0), 3u);  // beyond T*: T*
  EXPECT_EQ(*plan_for_straggler(points, 1.0), 5u);   // cannot go faster than T_min
  EXPECT_FALSE(plan_within_slowdown(points, -0.1));
  EXPECT_FALSE(plan_for_straggler(points, 0.0));
  EXPECT_FALSE(fastest_plan({}));
}

TEST(PlanChoice, StragglerAccountingMatchesTheFormula) {
  StragglerScenario s{16, 8, 80.0, 1.2, 10.0, 1000.0};
  // E = 1000 * 1.2 + 15 * (900 + 80 * 8 * (12 - 11))
  EXPECT_DOUBLE_EQ(straggler_total_energy_j(s, 11.0, 900.0), 1200.0 + 15 * (900.0 + 640.0));
}

TEST(PlanChoice, AllMaxClockBaseline) {
  StageProfile profile;
  for (int s = 0; s < 2; ++s) {
    profile.rows.push_back({s, InstructionKind::kForward, 1000, 1.0, 10.0});
    profile.rows.push_back({s, InstructionKind::kForward, 1400, 0.5, 12.0});
    profile.rows.push_back({s, InstructionKind::kBackward, 1400, 1.0, 20.0});
  }
  std::vector<std::vector<PipelineInstruction>> schedule = {one_f_one_b_order(2, 1, 0),
                                                            one_f_one_b_order(2, 1, 1)};
  // Each stage: 12 + 20 J busy 1.5 s; at T = 4 s, 2.5 s blocking at 10 W each.
  EXPECT_DOUBLE_EQ(all_max_clock_energy_j(profile, schedule, 10.0, 4.0), 2 * (32.0 + 25.0));
}

}  // namespace
}  // namespace zeus::pfo
