#include "zeus/optimizer/power_limit_selector.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace zeus {
namespace {

// Energy falls then rises as the limit drops; time rises monotonically.
const std::vector<KnobMeasurement> kProfile = {
    {300, 3000.0, 10.0},  // cost(eta=0.5, 300 W) = 1500 + 1500 = 3000
    {250, 2600.0, 10.5},  // 1300 + 1575 = 2875
    {200, 2400.0, 12.0},  // 1200 + 1800 = 3000
    {150, 2500.0, 16.0},  // 1250 + 2400 = 3650
};

TEST(PowerLimitSelectorTest, MinEnergyAndMinTime) {
  EXPECT_EQ(*PowerLimitSelector::min_energy().select(kProfile, 300), 200u);
  EXPECT_EQ(*PowerLimitSelector::min_time().select(kProfile, 300), 300u);
}

TEST(PowerLimitSelectorTest, ZeusCostFollowsEta) {
  const double max_power_w = default_max_power_w(kProfile, 1);
  EXPECT_EQ(max_power_w, 300.0);
  EXPECT_EQ(*PowerLimitSelector::zeus_cost(0.5)->select(kProfile, max_power_w), 250u);
  EXPECT_EQ(*PowerLimitSelector::zeus_cost(1.0)->select(kProfile, max_power_w), 200u);
  EXPECT_EQ(*PowerLimitSelector::zeus_cost(0.0)->select(kProfile, max_power_w), 300u);
  auto costs = PowerLimitSelector::zeus_cost(0.5)->costs(kProfile, max_power_w);
  ASSERT_TRUE(costs.has_value());
  EXPECT_EQ(*costs, (std::vector<double>{3000.0, 2875.0, 3000.0, 3650.0}));
}

TEST(PowerLimitSelectorTest, ZeusCostMaxPowerScalesWithGpuCount) {
  EXPECT_EQ(default_max_power_w(kProfile, 4), 1200.0);
  EXPECT_EQ(default_max_power_w({}, 4), 0.0);
  // With MaxPower = 1200 W, time dominates at eta = 0.5: 300 W costs 1500 + 6000 = 7500,
  // 250 W costs 1300 + 6300 = 7600.
  EXPECT_EQ(*PowerLimitSelector::zeus_cost(0.5)->select(kProfile, 1200.0), 300u);
}

TEST(PowerLimitSelectorTest, TiesGoToTheHigherSettingInAnyOrder) {
  // eta = 0.5: 300 W and 200 W both cost 3000; with 250 W removed they tie.
  std::vector<KnobMeasurement> tie = {kProfile[2], kProfile[0], kProfile[3]};
  EXPECT_EQ(*PowerLimitSelector::zeus_cost(0.5)->select(tie, 300.0), 300u);
  std::vector<KnobMeasurement> same_time = {{200, 10.0, 5.0}, {250, 20.0, 5.0}};
  EXPECT_EQ(*PowerLimitSelector::min_time().select(same_time, 0), 250u);
}

TEST(PowerLimitSelectorTest, MaxSlowdownPicksLowestFeasible) {
  EXPECT_EQ(*PowerLimitSelector::max_slowdown(1.0)->select(kProfile, 0), 300u);
  EXPECT_EQ(*PowerLimitSelector::max_slowdown(1.05)->select(kProfile, 0), 250u);
  EXPECT_EQ(*PowerLimitSelector::max_slowdown(1.2)->select(kProfile, 0), 200u);
  EXPECT_EQ(*PowerLimitSelector::max_slowdown(1.6)->select(kProfile, 0), 150u);
  auto costs = PowerLimitSelector::max_slowdown(1.1)->costs(kProfile, 0);
  ASSERT_TRUE(costs.has_value());
  EXPECT_DOUBLE_EQ((*costs)[3], 1.6);
}

TEST(PowerLimitSelectorTest, RejectsBadParameters) {
  for (double eta : {-0.01, 1.01, std::numeric_limits<double>::quiet_NaN()}) {
    auto s = PowerLimitSelector::zeus_cost(eta);
    ASSERT_FALSE(s.has_value());
    EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(s.error().message.find("[0, 1]"), std::string::npos);
  }
  for (double factor : {0.99, 0.0, -1.0, std::numeric_limits<double>::infinity()}) {
    auto s = PowerLimitSelector::max_slowdown(factor);
    ASSERT_FALSE(s.has_value());
    EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  }
}

TEST(PowerLimitSelectorTest, RejectsBadMeasurements) {
  auto energy = PowerLimitSelector::min_energy();
  EXPECT_EQ(energy.select({}, 0).error().code, ErrorCode::kInvalidArgument);
  std::vector<KnobMeasurement> duplicate = {{300, 1, 1}, {300, 2, 2}};
  EXPECT_EQ(energy.select(duplicate, 0).error().code, ErrorCode::kInvalidArgument);
  std::vector<KnobMeasurement> zero_time = {{300, 1, 0}};
  EXPECT_EQ(energy.select(zero_time, 0).error().code, ErrorCode::kInvalidArgument);
  std::vector<KnobMeasurement> nan_energy = {{300, std::numeric_limits<double>::quiet_NaN(), 1}};
  EXPECT_EQ(energy.select(nan_energy, 0).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(PowerLimitSelector::zeus_cost(0.5)->select(kProfile, 0.0).error().code,
            ErrorCode::kInvalidArgument);
}

TEST(PowerLimitSelectorTest, ParsesCliSpellingsAndRoundTripsNames) {
  EXPECT_EQ(PowerLimitSelector::parse("energy")->kind(), PowerLimitSelector::Kind::kEnergy);
  EXPECT_EQ(PowerLimitSelector::parse("time")->kind(), PowerLimitSelector::Kind::kTime);
  auto zeus = PowerLimitSelector::parse("zeus", 0.25);
  ASSERT_TRUE(zeus.has_value());
  EXPECT_EQ(zeus->kind(), PowerLimitSelector::Kind::kZeusCost);
  EXPECT_EQ(zeus->parameter(), 0.25);
  EXPECT_EQ(zeus->name(), "zeus:0.25");
  auto slowdown = PowerLimitSelector::parse("slowdown:1.1");
  ASSERT_TRUE(slowdown.has_value());
  EXPECT_EQ(slowdown->parameter(), 1.1);
  EXPECT_EQ(slowdown->name(), "slowdown:1.1");
  for (const auto& s : {PowerLimitSelector::min_energy(), PowerLimitSelector::min_time(), *zeus,
                        *slowdown}) {
    auto back = PowerLimitSelector::parse(s.name());
    ASSERT_TRUE(back.has_value()) << s.name();
    EXPECT_EQ(back->kind(), s.kind());
    EXPECT_EQ(back->parameter(), s.parameter());
  }
  EXPECT_EQ(PowerLimitSelector::parse("zeus", 2.0).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(PowerLimitSelector::parse("slowdown:0.9").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(PowerLimitSelector::parse("slowdown:").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(PowerLimitSelector::parse("slowdown:1.1x").error().code, ErrorCode::kInvalidArgument);
  auto unknown = PowerLimitSelector::parse("fastest");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message.find("slowdown:<factor>"), std::string::npos);
}


TEST(PowerLimitSelectorTest, CustomSelectorChoosesAndIsRefusedAnUnmeasuredSetting) {
  double seen_max_power_w = 0;
  auto second_lowest = PowerLimitSelector::custom(
      "custom:SecondLowest",
      [&](std::span<const KnobMeasurement> m, double max_power_w) -> Result<uint32_t> {
        seen_max_power_w = max_power_w;
        return m[m.size() - 2].setting;
      });
  ASSERT_TRUE(second_lowest.has_value());
  EXPECT_EQ(second_lowest->kind(), PowerLimitSelector::Kind::kCustom);
  EXPECT_EQ(second_lowest->name(), "custom:SecondLowest");
  EXPECT_EQ(*second_lowest->select(kProfile, 300), 200u);
  EXPECT_EQ(seen_max_power_w, 300.0);
  EXPECT_EQ(second_lowest->costs(kProfile, 300).error().code, ErrorCode::kNotSupported);
  // Measurements are validated before the function sees them.
  std::vector<KnobMeasurement> duplicate = {{300, 1, 1}, {300, 2, 2}};
  EXPECT_EQ(second_lowest->select(duplicate, 300).error().code, ErrorCode::kInvalidArgument);

  auto unmeasured = PowerLimitSelector::custom(
      "custom:Off", [](std::span<const KnobMeasurement>, double) -> Result<uint32_t> { return 123; });
  auto refused = unmeasured->select(kProfile, 300);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("chose 123, which is not a measured setting"),
            std::string::npos) << refused.error().message;
  EXPECT_NE(refused.error().message.find("300, 250, 200, 150"), std::string::npos);

  auto failing = PowerLimitSelector::custom(
      "custom:Raises", [](std::span<const KnobMeasurement>, double) -> Result<uint32_t> {
        return fail(ErrorCode::kUnavailable, "the user's function failed");
      });
  auto error = failing->select(kProfile, 300);
  ASSERT_FALSE(error.has_value());
  EXPECT_EQ(error.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(error.error().message, "the user's function failed");

  EXPECT_EQ(PowerLimitSelector::custom("x", nullptr).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(PowerLimitSelector::custom("", [](std::span<const KnobMeasurement>, double)
                                               -> Result<uint32_t> { return 1; })
                .error()
                .code,
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace zeus
