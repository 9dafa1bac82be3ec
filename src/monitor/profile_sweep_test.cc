#include "zeus/monitor/profile_sweep.h"

#include <cmath>

#include <gtest/gtest.h>

namespace zeus {
namespace {

TrialResult trial(double energy_per_iter, double before = 40, double after = 50) {
  TrialResult t;
  t.energy_per_iter_j = energy_per_iter;
  t.iterations = 10;
  t.total_energy_j = energy_per_iter * 10;
  t.time_per_iter_s = 0.1;
  t.total_time_s = 1.0;
  t.temperature_before_c = before;
  t.temperature_after_c = after;
  return t;
}

TEST(ProfileSweepTest, SampleStandardDeviationDecidesValidity) {
  auto r = summarize_sweep(5.0, 10.0, {trial(10.0, 40, 50), trial(12.0, 44, 54), trial(14.0)}, 2.5);
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->energy_mean_j, 12.0);
  EXPECT_DOUBLE_EQ(r->energy_std_j, 2.0);  // sample deviation: sqrt(8 / 2)
  EXPECT_TRUE(r->is_valid);
  EXPECT_DOUBLE_EQ(r->avg_temperature_before_c, 124.0 / 3);
  EXPECT_DOUBLE_EQ(r->avg_temperature_after_c, 154.0 / 3);
  EXPECT_DOUBLE_EQ(r->avg_total_energy_j, 120.0);
  EXPECT_DOUBLE_EQ(r->avg_total_time_s, 1.0);
  EXPECT_EQ(r->trials.size(), 3u);
  EXPECT_DOUBLE_EQ(r->measurement_duration_s, 5.0);
  EXPECT_DOUBLE_EQ(r->cooldown_duration_s, 10.0);
  // The threshold is strict and absolute (joules).
  EXPECT_FALSE(summarize_sweep(5.0, 10.0, {trial(10.0), trial(12.0), trial(14.0)}, 2.0)->is_valid);
  // One trial deviates by 0.
  auto single = summarize_sweep(1.0, 1.0, {trial(7.0)}, 0.01);
  EXPECT_DOUBLE_EQ(single->energy_std_j, 0.0);
  EXPECT_TRUE(single->is_valid);
}

TEST(ProfileSweepTest, BadInputNamesTheParameter) {
  EXPECT_FALSE(summarize_sweep(1.0, 1.0, {}, 0.01).has_value());
  auto negative = summarize_sweep(1.0, 1.0, {trial(1.0)}, -1.0);
  ASSERT_FALSE(negative.has_value());
  EXPECT_NE(negative.error().message.find("trial_stddev_threshold"), std::string::npos);
  EXPECT_FALSE(check_sweep_parameters(0, 0, 0.01).has_value());
  EXPECT_FALSE(check_sweep_parameters(1, -1, 0.01).has_value());
  EXPECT_FALSE(check_sweep_parameters(1, 0, std::nan("")).has_value());
  EXPECT_TRUE(check_sweep_parameters(1, 0, 0.0).has_value());
  auto range = sweep_range(std::vector<double>{1.0, 0.0}, "cooldown_duration_search_range");
  ASSERT_FALSE(range.has_value());
  EXPECT_EQ(range.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(range.error().message.find("cooldown_duration_search_range"), std::string::npos);
}

TEST(ProfileSweepTest, DefaultRangeIsOneToTenSeconds) {
  auto unset = sweep_range(std::nullopt, "r");
  ASSERT_TRUE(unset.has_value());
  ASSERT_EQ(unset->size(), 10u);
  EXPECT_DOUBLE_EQ(unset->front(), 1.0);
  EXPECT_DOUBLE_EQ(unset->back(), 10.0);
  EXPECT_EQ(sweep_range(std::vector<double>{}, "r")->size(), 10u);
  EXPECT_EQ(*sweep_range(std::vector<double>{3.0, 0.5}, "r"), (std::vector<double>{3.0, 0.5}));
}

TEST(ProfileSweepTest, ShortestValidValueOfEachSweep) {
  std::vector<SweepResult> entries;
  for (double m : {3.0, 1.0, 2.0, 4.0}) {
    SweepResult e;
    e.measurement_duration_s = m;
    e.cooldown_duration_s = 10.0 - m;
    e.is_valid = m != 1.0;
    entries.push_back(e);
  }
  EXPECT_EQ(shortest_valid(entries, SweptParameter::kMeasurement), 2.0);
  EXPECT_EQ(shortest_valid(entries, SweptParameter::kCooldown), 6.0);
  for (auto& e : entries) e.is_valid = false;
  EXPECT_EQ(shortest_valid(entries, SweptParameter::kMeasurement), std::nullopt);
}

}  // namespace
}  // namespace zeus
