// The combined straggler policy on a hand-made frontier where each branch wins somewhere.
#include <gtest/gtest.h>

#include <vector>

#include "zeus/perseus/pfo_straggler_policy.h"

namespace zeus::pfo {
namespace {

// 2 stages at 10 W of blocking power: waiting costs 20 J per second.
constexpr WaitingCost kWaiting{2, 10.0};

FrontierPoint point(double time_s, double energy_j) { return {0, time_s, 0.0, energy_j, 0.0}; }

// T_max 1.2 s (100 J, apart), then plans at 1.1 s (T*, 95 J) and 1.0 s (T_min, 98 J).
const std::vector<FrontierPoint> kPlans = {point(1.1, 95.0), point(1.0, 98.0)};
const PlanCandidates kCandidates{point(1.2, 100.0), kPlans};
// 1400 MHz is as fast as T_min but costly; 1000 and 800 MHz reach past T_max.
const std::vector<GlobalClockPlan> kClocks = {
    {800, 1.6, 103.0}, {1000, 1.5, 108.0}, {1400, 1.0, 110.0}};

TEST(StragglerPolicy, WaitingEnergyIsBlockingPowerOfEveryStage) {
  EXPECT_DOUBLE_EQ(energy_at_straggler_time_j(kWaiting, 1.0, 98.0, 1.5), 98.0 + 20.0 * 0.5);
  // A plan that ends after T' waits for nobody.
  EXPECT_DOUBLE_EQ(energy_at_straggler_time_j(kWaiting, 1.0, 98.0, 0.9), 98.0);
}

TEST(StragglerPolicy, ShortStragglerTakesTheFrontierPlan) {
  auto choice = combined_straggler_plan(kCandidates, kClocks, kWaiting, 1.05);
  ASSERT_TRUE(choice) << choice.error().to_string();
  EXPECT_FALSE(choice->global_clock_mhz);
  ASSERT_TRUE(choice->frontier.plan);
  EXPECT_EQ(*choice->frontier.plan, 1u);  // T_min: 98 + 1 J against 1400 MHz's 110 + 1 J
  EXPECT_DOUBLE_EQ(choice->time_s, 1.0);
  EXPECT_DOUBLE_EQ(choice->energy_at_straggler_j, 99.0);
}

TEST(StragglerPolicy, PastTStarTheFrontierWaitsAtTStarUntilAGlobalClockIsCheaper) {
  // T' = 1.55: T* waits 0.45 s (95 + 9 = 104 J); 1000 MHz costs 108 + 1 = 109 J.
  auto mid = combined_straggler_plan(kCandidates, kClocks, kWaiting, 1.55);
  ASSERT_TRUE(mid);
  EXPECT_FALSE(mid->global_clock_mhz);
  EXPECT_EQ(mid->frontier.plan, std::optional<std::size_t>(0));
  EXPECT_DOUBLE_EQ(mid->energy_at_straggler_j, 104.0);
  // T' = 1.6: T* costs 95 + 10 = 105 J; 800 MHz finishes exactly at T' for 103 J.
  auto long_straggler = combined_straggler_plan(kCandidates, kClocks, kWaiting, 1.6);
  ASSERT_TRUE(long_straggler);
  ASSERT_TRUE(long_straggler->global_clock_mhz);
  EXPECT_EQ(*long_straggler->global_clock_mhz, 800);
  EXPECT_DOUBLE_EQ(long_straggler->time_s, 1.6);
  EXPECT_DOUBLE_EQ(long_straggler->energy_at_straggler_j, 103.0);
  // The frontier branch is still reported.
  EXPECT_EQ(long_straggler->frontier.plan, std::optional<std::size_t>(0));
}

TEST(StragglerPolicy, NeverCostsMoreThanEitherBranchAtAnyStragglerTime) {
  for (double t = 0.9; t <= 2.5; t += 0.01) {
    auto choice = combined_straggler_plan(kCandidates, kClocks, kWaiting, t);
    ASSERT_TRUE(choice);
    auto frontier = plan_for_straggler(kCandidates, t);
    EXPECT_LE(
        choice->energy_at_straggler_j,
        energy_at_straggler_time_j(kWaiting, frontier->point.time_s, frontier->point.energy_j, t) +
            1e-12)
        << t;
    for (const GlobalClockPlan& clock : kClocks) {
      if (clock.time_s > t * (1 + 1e-12)) continue;
      EXPECT_LE(choice->energy_at_straggler_j,
                energy_at_straggler_time_j(kWaiting, clock.time_s, clock.energy_j, t) + 1e-12)
          << t << " " << clock.clock_mhz;
    }
  }
}

TEST(StragglerPolicy, TiesGoToTheFrontierAndNoClocksMeansTheFrontier) {
  const std::vector<GlobalClockPlan> tie = {{900, 1.0, 98.0}};
  auto choice = combined_straggler_plan(kCandidates, tie, kWaiting, 1.0);
  ASSERT_TRUE(choice);
  EXPECT_FALSE(choice->global_clock_mhz);
  auto none = combined_straggler_plan(kCandidates, {}, kWaiting, 3.0);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->global_clock_mhz);
  EXPECT_EQ(none->frontier.plan, std::optional<std::size_t>(0));  // T*
}

TEST(StragglerPolicy, BadInputIsAClearError) {
  auto negative = combined_straggler_plan(kCandidates, kClocks, kWaiting, -1.0);
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.error().message.find("--straggler-time"), std::string::npos);
  auto no_stages = combined_straggler_plan(kCandidates, kClocks, {0, 10.0}, 1.5);
  ASSERT_FALSE(no_stages);
  EXPECT_NE(no_stages.error().message.find("stage"), std::string::npos);
}

}  // namespace
}  // namespace zeus::pfo
