#include "zeus/monitor/profile_trial.h"

#include <cmath>

#include <gtest/gtest.h>

namespace zeus {
namespace {

TrialParameters params(double measurement_s, double cooldown_s = 0) {
  TrialParameters p;
  p.measurement_duration_s = measurement_s;
  p.cooldown_duration_s = cooldown_s;
  return p;
}

TEST(ProfileTrialTest, IterationCountsUseCeilAndAtLeastOne) {
  EXPECT_EQ(measured_iterations(5.0, 0.1), 50);
  EXPECT_EQ(measured_iterations(5.0, 0.3), 17);  // 16.67 rounds up
  EXPECT_EQ(measured_iterations(0.01, 1.0), 1);  // shorter than one iteration
  EXPECT_EQ(measured_iterations(1.0, 0.0), 1);   // an iteration too fast to time
  TrialParameters p = params(1.0);
  p.num_warmup_iterations = 7;
  EXPECT_EQ(warmup_iterations(p, 0.01), 7);
  p.warmup_settle_duration_s = 0.25;
  EXPECT_EQ(warmup_iterations(p, 0.01), 25);
  EXPECT_EQ(warmup_iterations(p, 0.1), 3);  // 2.5 rounds up
  p.warmup_settle_duration_s = 0.0;
  EXPECT_EQ(warmup_iterations(p, 0.1), 1);
}

TEST(ProfileTrialTest, RanksSumEnergyTakeMaxTimeAndAverageTemperature) {
  auto result = combine_ranks({{100.0, 2.0, 40.0, 50.0}, {120.0, 2.5, 44.0, 58.0}}, 10);
  ASSERT_TRUE(result.has_value());
  EXPECT_DOUBLE_EQ(result->total_energy_j, 220.0);
  EXPECT_DOUBLE_EQ(result->total_time_s, 2.5);
  EXPECT_DOUBLE_EQ(result->energy_per_iter_j, 22.0);
  EXPECT_DOUBLE_EQ(result->time_per_iter_s, 0.25);
  EXPECT_DOUBLE_EQ(result->temperature_before_c, 42.0);
  EXPECT_DOUBLE_EQ(result->temperature_after_c, 54.0);
  EXPECT_EQ(result->iterations, 10);
  EXPECT_FALSE(combine_ranks({}, 10).has_value());
  EXPECT_FALSE(combine_ranks({{1, 1, 1, 1}}, 0).has_value());
}

TEST(ProfileTrialTest, BadParametersNameTheParameter) {
  EXPECT_TRUE(check_trial_parameters(params(1.0)).has_value());
  auto expect_error = [](const TrialParameters& p, const std::string& part) {
    auto checked = check_trial_parameters(p);
    ASSERT_FALSE(checked.has_value());
    EXPECT_EQ(checked.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(checked.error().message.find(part), std::string::npos) << checked.error().message;
  };
  expect_error(params(0.0), "measurement_duration");
  expect_error(params(std::nan("")), "measurement_duration");
  expect_error(params(1.0, -1.0), "cooldown_duration");
  TrialParameters p = params(1.0);
  p.num_calibration_iterations = 0;
  expect_error(p, "num_calibration_iterations");
  p = params(1.0);
  p.num_warmup_iterations = -1;
  expect_error(p, "num_warmup_iterations");
  p = params(1.0);
  p.warmup_settle_duration_s = -0.5;
  expect_error(p, "warmup_settle_duration must be non-negative");
}

}  // namespace
}  // namespace zeus
