#include "zeus/monitor/temperature_monitor.h"

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "device/nvml/nvml_gpu.h"
#include "testing/fake_nvml_state.h"
#include "zeus/device/replay_gpu.h"

namespace zeus {
namespace {

using ::zeus::testing::FakeNvmlDevice;
using ::zeus::testing::FakeNvmlEnvironment;

TemperatureMonitorOptions period(double period_s) {
  TemperatureMonitorOptions options;
  options.update_period_s = period_s;
  return options;
}

TEST(TemperatureMonitorTest, FollowsTheGpuAndDeduplicates) {
  FakeNvmlDevice h100 = FakeNvmlDevice::h100();
  h100.temperature_c = 40;
  FakeNvmlEnvironment fake({h100, h100});
  auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  ASSERT_TRUE(gpus.has_value());
  SystemClock clock;
  auto monitor = TemperatureMonitor::create(clock, {{0, (*gpus)[0].get()}, {1, (*gpus)[1].get()}},
                                            period(0.01));
  ASSERT_TRUE(monitor.has_value()) << monitor.error().to_string();
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  const double middle_s = clock.now_s();
  h100.temperature_c = 55;
  ::zeus::testing::FakeNvmlState state;
  state.devices = {h100, h100};
  fake.write(state);
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  (*monitor)->stop();
  for (int gpu : {0, 1}) {
    auto timeline = (*monitor)->timeline(gpu);
    ASSERT_TRUE(timeline.has_value());
    // 40 (first and last of its run), then 55 (first and last): four samples at most.
    ASSERT_GE(timeline->size(), 3u);
    ASSERT_LE(timeline->size(), 4u);
    EXPECT_EQ(timeline->front().celsius, 40);
    EXPECT_EQ(timeline->back().celsius, 55);
    EXPECT_EQ((*monitor)->temperature_c(gpu)->value(), 55);
    EXPECT_EQ((*monitor)->temperature_c(gpu, timeline->front().time_s + 0.001)->value(), 40);
    EXPECT_EQ((*monitor)->temperature_c(gpu, timeline->front().time_s - 1.0)->has_value(), false);
    auto before = (*monitor)->timeline(gpu, std::nullopt, middle_s);
    ASSERT_TRUE(before.has_value());
    for (const auto& sample : *before) EXPECT_EQ(sample.celsius, 40);
  }
  auto unknown = (*monitor)->timeline(2);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
}

TEST(TemperatureMonitorTest, AGpuWithoutTemperatureIsRejectedAtCreation) {
  FakeClock clock;
  ReplayGpu gpu(clock, {.power_model = ReplayGpu::capped_power_model(100.0)});
  auto monitor = TemperatureMonitor::create(clock, {{0, &gpu}});
  ASSERT_FALSE(monitor.has_value());
  EXPECT_EQ(monitor.error().code, ErrorCode::kNotSupported);
  EXPECT_NE(monitor.error().message.find("GPU 0 cannot be monitored for temperature"),
            std::string::npos);
}

TEST(TemperatureMonitorTest, BadOptionsAreErrors) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});
  auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  ASSERT_TRUE(gpus.has_value());
  SystemClock clock;
  EXPECT_FALSE(TemperatureMonitor::create(clock, {}).has_value());
  EXPECT_FALSE(TemperatureMonitor::create(clock, {{0, (*gpus)[0].get()}}, period(0)).has_value());
  EXPECT_FALSE(
      TemperatureMonitor::create(clock, {{0, (*gpus)[0].get()}}, TemperatureMonitorOptions{1.0, 1})
          .has_value());
}

}  // namespace
}  // namespace zeus
