#include "zeus/monitor/counter_update_period.h"

#include <cmath>

#include <gtest/gtest.h>

#include "device/nvml/nvml_gpu.h"
#include "testing/fake_nvml_state.h"
#include "zeus/device/replay_gpu.h"

namespace zeus {
namespace {

using ::zeus::testing::FakeNvmlDevice;
using ::zeus::testing::FakeNvmlEnvironment;

TEST(CounterUpdatePeriodTest, FastestIntervalIsBetweenConsecutiveChanges) {
  // Changes at 0.10, 0.30, 0.38 and 0.50 s: intervals 0.2, 0.08, 0.12.
  std::vector<CounterReading> readings = {{0.00, 1}, {0.05, 1}, {0.10, 2}, {0.20, 2},
                                          {0.30, 3}, {0.38, 4}, {0.40, 4}, {0.50, 5}};
  EXPECT_NEAR(fastest_change_interval_s(readings).value(), 0.08, 1e-12);
  EXPECT_FALSE(fastest_change_interval_s({{0.0, 1}, {0.1, 2}, {0.2, 2}}).has_value());
  EXPECT_FALSE(fastest_change_interval_s({}).has_value());
}

TEST(CounterUpdatePeriodTest, PollPeriodIsHalfTheIntervalAtMostATenthOfASecond) {
  EXPECT_DOUBLE_EQ(poll_period_from_interval_s(0.1), 0.05);
  EXPECT_DOUBLE_EQ(poll_period_from_interval_s(0.02), 0.01);
  EXPECT_DOUBLE_EQ(poll_period_from_interval_s(0.5), 0.1);
  EXPECT_DOUBLE_EQ(poll_period_from_interval_s(std::nullopt), 0.05);
  EXPECT_DOUBLE_EQ(poll_period_from_interval_s(0.0), 0.05);
}

TEST(CounterUpdatePeriodTest, WarnsBelowFiftyAndBelowOneMillisecond) {
  EXPECT_FALSE(poll_period_warning(0.05).has_value());
  EXPECT_FALSE(poll_period_warning(1.0).has_value());
  auto fast = poll_period_warning(0.01);
  ASSERT_TRUE(fast.has_value());
  EXPECT_NE(fast->find("might be too fast"), std::string::npos);
  EXPECT_NE(fast->find(">= 0.05 s"), std::string::npos);
  auto very_fast = poll_period_warning(0.0005);
  ASSERT_TRUE(very_fast.has_value());
  EXPECT_NE(very_fast->find("below 1 ms"), std::string::npos);
}

TEST(CounterUpdatePeriodTest, ProbeOnAReplayGpuWhosePowerStepsEveryTwentyMs) {
  FakeClock clock;
  ReplayGpuConfig config;
  config.limit_range_mw = {100'000, 500'000};
  config.default_limit_mw = 500'000;
  config.power_model = ReplayGpu::capped_power_model(
      [](double t_s) { return 100.0 + static_cast<int>(std::floor(t_s / 0.02 + 1e-9)) % 3; });
  ReplayGpu gpu(clock, config);
  CounterProbeOptions options;
  options.spacing_s = 0.001;
  auto interval_s =
      probe_fastest_change_interval_s(gpu, PowerDomain::kDeviceInstant, clock, options);
  ASSERT_TRUE(interval_s.has_value()) << interval_s.error().to_string();
  ASSERT_TRUE(interval_s->has_value());
  EXPECT_NEAR(**interval_s, 0.02, 0.0011);
  // It stopped after the wanted intervals, well before max_duration_s.
  EXPECT_LT(clock.now_s(), 0.15);
}

TEST(CounterUpdatePeriodTest, InfersHalfOfAHundredMsCounterOnTheFakeNvml) {
  FakeNvmlDevice h100 = FakeNvmlDevice::h100();
  h100.power_update_ms = 100;
  FakeNvmlEnvironment fake({h100, h100});
  auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  ASSERT_TRUE(gpus.has_value()) << gpus.error().to_string();
  SystemClock clock;
  const double period_s =
      infer_poll_period_s({(*gpus)[0].get(), (*gpus)[1].get()}, clock, PowerDomain::kDeviceInstant);
  EXPECT_NEAR(period_s, 0.05, 0.005);
}

TEST(CounterUpdatePeriodTest, ConstantPowerGetsHalfOfATenthOfASecond) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});
  auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  ASSERT_TRUE(gpus.has_value()) << gpus.error().to_string();
  SystemClock clock;
  CounterProbeOptions options;
  options.max_duration_s = 0.05;
  EXPECT_DOUBLE_EQ(
      infer_poll_period_s({(*gpus)[0].get()}, clock, PowerDomain::kDeviceInstant, options), 0.05);
}

}  // namespace
}  // namespace zeus
