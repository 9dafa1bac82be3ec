// Property tests of the frontier on the bundled profiles without a published frontier
// (docs/perseus.md): times fall by exactly one unit per plan, energy is U-shaped with one
// minimum T*, every clock is a profiled option, and the choice rules.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <set>
#include <string>

#include "perseus/planner/test_data.h"
#include "zeus/perseus/pfo_plan_choice.h"
#include "zeus/perseus/pfo_planner.h"

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
  // The all-slowest schedule lies apart, one unit slower than the first plan; on these profiles
  // T* is a plan of the frontier.
  EXPECT_EQ(frontier->all_slowest().quant_time, frontier->max_quant_time());
  EXPECT_GE(frontier->all_slowest().energy_j, points.front().energy_j - 1e-9);
  const PlanChoice t_star = min_energy_plan(plan_candidates(*frontier));
  ASSERT_TRUE(t_star.plan);
  const std::size_t star = *t_star.plan;
  // Energy: down to one minimum, then up (slowest first), within rounding.
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

INSTANTIATE_TEST_SUITE_P(
    Profiles, FrontierProperties,
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

// A frontier, slowest first, 3.3 s down to 2.8 s; energy U-shaped with its minimum at 3.0 s.
std::vector<FrontierPoint> u_shaped_points() {
  std::vector<FrontierPoint> points;
  const double times[] = {3.3, 3.2, 3.1, 3.0, 2.9, 2.8};
  const double energies[] = {105, 102, 100, 99, 103, 110};
  for (int i = 0; i < 6; ++i) points.push_back({0, times[i], 0, energies[i], 0});
  return points;
}

std::optional<std::size_t> plan_of(const Result<PlanChoice>& choice) { return choice->plan; }

TEST(PlanChoice, Rules) {
  const auto points = u_shaped_points();
  const PlanCandidates candidates{{0, 3.4, 0, 108, 0}, points};
  EXPECT_EQ(fastest_plan(candidates).plan, 5u);
  EXPECT_EQ(min_energy_plan(candidates).plan, 3u);
  EXPECT_EQ(plan_of(plan_within_slowdown(candidates, 0.0)), 5u);
  EXPECT_EQ(plan_of(plan_within_slowdown(candidates, 0.04)), 4u);  // T <= 2.912
  EXPECT_EQ(plan_of(plan_within_slowdown(candidates, 0.5)), 3u);   // T* is within
  EXPECT_EQ(plan_of(plan_for_straggler(candidates, 2.95)), 4u);    // 2.9 s (103 J) beats 2.8 s
  EXPECT_EQ(plan_of(plan_for_straggler(candidates, 3.05)), 3u);
  EXPECT_EQ(plan_of(plan_for_straggler(candidates, 10.0)), 3u);  // beyond T*: T*
  EXPECT_EQ(plan_of(plan_for_straggler(candidates, 1.0)), 5u);   // cannot go faster than T_min
  EXPECT_DOUBLE_EQ(plan_for_straggler(candidates, 2.95)->point.energy_j, 103.0);
  EXPECT_FALSE(plan_within_slowdown(candidates, -0.1));
  EXPECT_FALSE(plan_for_straggler(candidates, 0.0));
}

// The all-slowest schedule (T_max) is not a row of the frontier, yet when it
// costs least every rule that admits its time must choose it.
TEST(PlanChoice, AllSlowestScheduleIsACandidateOfEveryRule) {
  const auto points = u_shaped_points();
  const PlanCandidates candidates{{0, 3.4, 0, 98, 0}, points};
  EXPECT_EQ(min_energy_plan(candidates).plan, std::nullopt);
  EXPECT_DOUBLE_EQ(min_energy_plan(candidates).point.time_s, 3.4);
  EXPECT_EQ(plan_of(plan_for_straggler(candidates, 3.5)), std::nullopt);
  EXPECT_EQ(plan_of(plan_for_straggler(candidates, 3.4)), std::nullopt);     // exactly T_max
  EXPECT_EQ(plan_of(plan_for_straggler(candidates, 3.35)), 3u);              // T_max is too slow
  EXPECT_EQ(plan_of(plan_within_slowdown(candidates, 0.25)), std::nullopt);  // 3.5 s allowed
  EXPECT_EQ(plan_of(plan_within_slowdown(candidates, 0.2)), 3u);             // 3.36 s allowed
  EXPECT_EQ(fastest_plan(candidates).plan, 5u);
  // A tie goes to the slower candidate.
  const PlanCandidates tie{{0, 3.4, 0, 99, 0}, points};
  EXPECT_EQ(min_energy_plan(tie).plan, std::nullopt);
  // With no plan at all the all-slowest schedule is the only choice, and the fastest.
  const PlanCandidates alone{{0, 3.4, 0, 98, 0}, {}};
  EXPECT_EQ(fastest_plan(alone).plan, std::nullopt);
  EXPECT_EQ(plan_of(plan_for_straggler(alone, 1.0)), std::nullopt);
  EXPECT_EQ(plan_of(plan_within_slowdown(alone, 0.0)), std::nullopt);
}

// The same through the planner, on the hand-checkable profile (test/e2e/pfo_tiny_profile.py, as
// e2e.pfo_all_slowest_schedule_is_a_candidate uses it): 2 stages x 1 microbatch (four
// instructions in one chain), 1 ms units q = 10..14 at 1410..1000 MHz, effective energy
// e'(q) = 100 exp(-0.3 (q - 10)) + 50, blocking power 10 W. Energy falls all the way to
// T_max = 56 units (every instruction at q = 14): E = 4 e'(14) + 2 * 0.056 * 10 = 321.5977 J.
TEST(PlanChoice, AllSlowestIsTStarOfTheTinyProfile) {
  const double blocking_w = testing::kTinyBlockingW;
  auto effective = testing::tiny_effective_energy_j;
  const StageProfile profile = testing::tiny_profile();
  PlannerOptions options;
  options.num_stages = 2;
  options.num_microbatches = 1;
  options.p2p_power_w = blocking_w;
  auto frontier = plan_frontier(profile, options);
  ASSERT_TRUE(frontier) << frontier.error().to_string();
  const double t_max_energy = 4 * effective(14) + 2 * 0.056 * blocking_w;
  ASSERT_EQ(frontier->points().size(), 16u);  // 55 .. 40 units: the frontier keeps its rows
  EXPECT_EQ(frontier->points().front().quant_time, 55);
  EXPECT_EQ(frontier->all_slowest().quant_time, 56);
  EXPECT_NEAR(frontier->all_slowest().energy_j, t_max_energy, 1e-5);
  const PlanCandidates candidates = plan_candidates(*frontier);
  const PlanChoice t_star = min_energy_plan(candidates);
  EXPECT_EQ(t_star.plan, std::nullopt);
  EXPECT_NEAR(t_star.point.time_s, 0.056, 1e-12);
  EXPECT_NEAR(t_star.point.energy_j, 321.597685, 1e-5);
  EXPECT_EQ(plan_of(plan_for_straggler(candidates, 0.06)), std::nullopt);
  EXPECT_EQ(plan_of(plan_for_straggler(candidates, 0.0555)), 0u);
  for (const auto& stage : frontier->all_slowest_clocks_mhz()) {
    for (int mhz : stage) EXPECT_EQ(mhz, 1000);
  }
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

// The fastest plan is priced like the baseline (measured rows), so on a
// profile whose fastest plan runs every instruction at its highest clock (energy falling linearly
// with time) the saving is exactly 0, never negative; a clock without a row
// gives NaN (the caller falls back to the fitted energy).
TEST(PlanChoice, PfoPlan_TheAllMaxPlanSavesExactlyNothing) {
  StageProfile profile;
  const int clocks[] = {1410, 1395, 1380, 1365, 1350, 1335, 1320, 1305};
  for (int s = 0; s < 2; ++s) {
    for (int i = 0; i < 8; ++i) {
      profile.rows.push_back({s, InstructionKind::kForward, clocks[i], 0.05 + i * 0.0015, 24.0 - i * 0.48});
      profile.rows.push_back({s, InstructionKind::kBackward, clocks[i], 0.09 + i * 0.0027, 44.0 - i * 0.88});
    }
  }
  PlannerOptions options;
  options.num_stages = 2;
  options.num_microbatches = 1;
  options.p2p_power_w = 10;
  options.unit_time_s = 0.001;
  auto frontier = plan_frontier(profile, options, nullptr);
  ASSERT_TRUE(frontier) << frontier.error().to_string();
  const PlanChoice fastest = fastest_plan(plan_candidates(*frontier));
  ASSERT_TRUE(fastest.plan.has_value());
  const auto fastest_clocks = frontier->clocks_mhz(*fastest.plan);
  for (const auto& stage : fastest_clocks) {
    for (int mhz : stage) EXPECT_EQ(mhz, 1410);
  }
  const double baseline =
      all_max_clock_energy_j(profile, frontier->schedule(), 10, fastest.point.time_s);
  EXPECT_DOUBLE_EQ(measured_plan_energy_j(profile, frontier->schedule(), fastest_clocks, 10,
                                          fastest.point.time_s),
                   baseline);
  auto unprofiled = fastest_clocks;
  unprofiled[0][0] = 999;
  EXPECT_TRUE(std::isnan(measured_plan_energy_j(profile, frontier->schedule(), unprofiled, 10,
                                                fastest.point.time_s)));
}

}  // namespace
}  // namespace zeus::pfo
