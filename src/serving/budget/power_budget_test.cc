// The power budget (issue 50): the policies' clocks kept when they fit, decode-only GPUs slowed
// first when they do not (a prefilling GPU's clock left to its cap), the caps summing to the
// budget and following the load, the correction from measured power, a budget no clock can meet
// said as such, and refused settings.
#include "zeus/serving/power_budget.h"

#include <gtest/gtest.h>

#include <numeric>

namespace zeus {
namespace {

const std::vector<double> kLadder = {1980, 1680, 1380, 1080};

// A GPU drawing `top` watts at the highest clock, falling with the clock.
BudgetedGpu gpu(double top, double need = 0, bool prefilling = false) {
  BudgetedGpu g;
  g.wanted_mhz = 1980;
  g.watts_at = {top, 0.8 * top, 0.65 * top, 0.55 * top};
  g.need = need;
  g.prefilling = prefilling;
  return g;
}

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(PowerBudgetTest, ClocksThatFitAreKeptAndTheCapsAreEqualShares) {
  auto b = PowerBudget::create(1600, kLadder);
  ASSERT_TRUE(b.has_value());
  std::vector<BudgetedGpu> gpus = {gpu(300), gpu(350), gpu(200), gpu(250)};
  BudgetDecision d = (*b)->allocate(gpus, 0);
  EXPECT_EQ(d.clock_mhz, std::vector<double>(4, 1980));
  EXPECT_EQ(d.lowered_steps, 0);
  EXPECT_FALSE(d.over);
  EXPECT_EQ(d.cap_w, std::vector<double>(4, 400));
}

TEST(PowerBudgetTest, OverTheBudgetTheDecodeOnlyGpusSlowAndAPrefillingOneKeepsItsClock) {
  auto b = PowerBudget::create(1600, kLadder);
  ASSERT_TRUE(b.has_value());
  // 2000 W wanted: the prefilling GPU (600 W) is left to its cap; the others step down, the
  // one with the least queue first.
  std::vector<BudgetedGpu> gpus = {gpu(600, 0.5, true), gpu(500, 0.2), gpu(500, 0.01), gpu(400)};
  BudgetDecision d = (*b)->allocate(gpus, 0);
  EXPECT_EQ(d.clock_mhz[0], 1980);
  EXPECT_LT(d.clock_mhz[2], 1980);
  EXPECT_LE(d.clock_mhz[2], d.clock_mhz[1]);  // less need: slowed at least as much
  EXPECT_LE(d.predicted_w, 1600 + 1e-9);
  EXPECT_GT(d.lowered_steps, 0);
  // The caps sum to the budget; a GPU predicted over its 400 W share gets what it draws, the
  // others pay for it from their slack.
  EXPECT_NEAR(sum(d.cap_w), 1600, 1e-6);
  EXPECT_NEAR(d.cap_w[0], 600, 1e-6);
  for (size_t i = 0; i < 4; ++i) {
    size_t k = 0;
    while (kLadder[k] > d.clock_mhz[i]) ++k;
    const double predicted = gpus[i].watts_at[k];
    if (predicted > 400) {
      EXPECT_NEAR(d.cap_w[i], predicted, 1e-6) << i;
    } else {
      EXPECT_LT(d.cap_w[i], 400) << i;
      EXPECT_GE(d.cap_w[i], predicted - 1e-6) << i;
    }
  }
}

TEST(PowerBudgetTest, MeasuredPowerAboveThePredictionTightensTheNextAllocation) {
  auto b = PowerBudget::create(1000, kLadder);
  ASSERT_TRUE(b.has_value());
  std::vector<BudgetedGpu> gpus = {gpu(450), gpu(450)};
  BudgetDecision first = (*b)->allocate(gpus, 0);
  EXPECT_EQ(first.lowered_steps, 0);  // 900 W predicted: fits
  // The meter reads 1.4x what the model predicted at the clocks chosen.
  BudgetDecision later = first;
  for (int i = 0; i < 10; ++i) {
    later = (*b)->allocate(gpus, 1.4 * later.predicted_w / (*b)->correction());
  }
  EXPECT_GT((*b)->correction(), 1.3);
  EXPECT_GT(later.lowered_steps, 0);
  EXPECT_LE(later.predicted_w, 1000 + 1e-6);
}

TEST(PowerBudgetTest, ABudgetNoClockMeetsLeavesTheLowestAndSaysSo) {
  auto b = PowerBudget::create(300, kLadder);
  ASSERT_TRUE(b.has_value());
  std::vector<BudgetedGpu> gpus = {gpu(500), gpu(500)};
  BudgetDecision d = (*b)->allocate(gpus, 0);
  EXPECT_TRUE(d.over);
  EXPECT_EQ(d.clock_mhz, std::vector<double>(2, 1080));
  EXPECT_NEAR(sum(d.cap_w), 300, 1e-6);
}

TEST(PowerBudgetTest, BadSettingsAreRefused) {
  EXPECT_FALSE(PowerBudget::create(0, kLadder).has_value());
  EXPECT_FALSE(PowerBudget::create(2e6, kLadder).has_value());
  EXPECT_FALSE(PowerBudget::create(100, {}).has_value());
  EXPECT_FALSE(PowerBudget::create(100, {1080, 1980}).has_value());  // lowest first
  EXPECT_FALSE(PowerBudget::create(100, kLadder, 1.5).has_value());
}

}  // namespace
}  // namespace zeus
