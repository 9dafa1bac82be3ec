#include "zeus/monitor/power_monitor.h"

#include <chrono>
#include <cmath>
#include <thread>

#include <gtest/gtest.h>

#include "device/nvml/fake_nvml_handle_for_test.h"
#include "testing/fake_nvml_state.h"
#include "zeus/device/replay_gpu.h"

namespace zeus {
namespace {

using nvml::open_fake_gpus;
using ::zeus::testing::FakeNvmlDevice;
using ::zeus::testing::FakeNvmlEnvironment;
using D = PowerDomain;

std::map<int, Gpu*> by_index(const std::vector<std::unique_ptr<Gpu>>& gpus) {
  std::map<int, Gpu*> out;
  for (size_t i = 0; i < gpus.size(); ++i) out[static_cast<int>(i)] = gpus[i].get();
  return out;
}

PowerMonitorOptions with(std::optional<double> period_s,
                         std::optional<std::vector<D>> domains = std::nullopt) {
  PowerMonitorOptions options;
  options.update_period_s = period_s;
  options.domains = std::move(domains);
  return options;
}

bool error_mentions(const Error& error, const std::string& part) {
  return error.message.find(part) != std::string::npos;
}

TEST(PowerMonitorTest, SamplesEveryDomainOnOneThreadAndAnswersPerDomain) {
  FakeNvmlDevice h100 = FakeNvmlDevice::h100();
  h100.memory_power_mw = 80000;
  FakeNvmlEnvironment fake({h100, h100});
  auto gpus = open_fake_gpus();
  SystemClock clock;
  auto monitor = PowerMonitor::create(clock, by_index(gpus), with(0.01));
  ASSERT_TRUE(monitor.has_value()) << monitor.error().to_string();
  EXPECT_EQ((*monitor)->domains(),
            (std::vector<D>{D::kDeviceInstant, D::kDeviceAverage, D::kMemoryAverage}));
  const double start_s = clock.now_s();
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  const double end_s = clock.now_s();
  // The seconds of [start_s, end_s] a domain's samples cover (energy is integrated over that span
  // only), once it has a sample at or after end_s: the sampling thread may run late on a loaded
  // machine, and the domains are read one after the other, so their spans differ.
  auto covered_s = [&](D domain, int gpu) {
    for (int wait = 0; wait < 2000; ++wait) {
      auto samples = (*monitor)->timeline(domain, gpu);
      if (samples.has_value() && !samples->empty() && samples->back().time_s >= end_s) {
        return end_s - std::max(start_s, samples->front().time_s);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return -1.0;  // no sample after end_s in 10 s: the checks below fail
  };
  for (int gpu : {0, 1}) {
    auto memory = (*monitor)->timeline(D::kMemoryAverage, gpu);
    ASSERT_TRUE(memory.has_value());
    ASSERT_GE(memory->size(), 2u);  // deduplicated: the first and last of the constant run
    EXPECT_DOUBLE_EQ(memory->front().power_w, 80.0);
    EXPECT_DOUBLE_EQ((*monitor)->power_w(gpu, std::nullopt, D::kMemoryAverage)->value(), 80.0);
    EXPECT_DOUBLE_EQ((*monitor)->power_w(gpu)->value(), 350.0);
    // Energy of the default domain (instant) and of memory over the same range.
    const double device_s = covered_s(D::kDeviceInstant, gpu);
    const double memory_s = covered_s(D::kMemoryAverage, gpu);
    ASSERT_GT(device_s, 0.0);
    ASSERT_GT(memory_s, 0.0);
    auto device_j = (*monitor)->energy_j(gpu, start_s, end_s);
    auto memory_j = (*monitor)->energy_j(gpu, start_s, end_s, D::kMemoryAverage);
    ASSERT_TRUE(device_j.has_value() && device_j->has_value());
    ASSERT_TRUE(memory_j.has_value() && memory_j->has_value());
    // Each domain's energy is its own power over the span its samples cover.
    EXPECT_NEAR(**device_j, 350.0 * device_s, 1e-6);
    EXPECT_NEAR(**memory_j, 80.0 * memory_s, 1e-6);
  }
  // A time window keeps only the samples inside it.
  auto none = (*monitor)->timeline(D::kDeviceInstant, 0, start_s - 100, start_s - 50);
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
  EXPECT_EQ((*monitor)->energy_j(0, start_s - 100, start_s - 50).value(), std::nullopt);
}

TEST(PowerMonitorTest, UnsupportedDomainIsAClearErrorListingTheSupportedOnes) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::a100()});
  auto gpus = open_fake_gpus();
  SystemClock clock;
  auto monitor =
      PowerMonitor::create(clock, by_index(gpus), with(0.1, std::vector<D>{D::kMemoryAverage}));
  ASSERT_FALSE(monitor.has_value());
  EXPECT_EQ(monitor.error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(error_mentions(monitor.error(), "memory_average is not supported"));
  EXPECT_TRUE(error_mentions(monitor.error(), "[device_instant, device_average]"));
  // Without a request, the A100 gets the two device domains.
  auto all = PowerMonitor::create(clock, by_index(gpus), with(0.1));
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ((*all)->domains(), (std::vector<D>{D::kDeviceInstant, D::kDeviceAverage}));
}

TEST(PowerMonitorTest, WithoutInstantPowerQueriesFallBackToAverage) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});
  auto gpus = open_fake_gpus();
  SystemClock clock;
  auto monitor = PowerMonitor::create(
      clock, by_index(gpus), with(0.05, std::vector<D>{D::kDeviceAverage, D::kMemoryAverage}));
  ASSERT_TRUE(monitor.has_value()) << monitor.error().to_string();
  EXPECT_EQ((*monitor)->resolve(std::nullopt).value(), D::kDeviceAverage);
  EXPECT_DOUBLE_EQ((*monitor)->power_w(0)->value(), 350.0);
  auto instant = (*monitor)->power_w(0, std::nullopt, D::kDeviceInstant);
  ASSERT_FALSE(instant.has_value());
  EXPECT_TRUE(error_mentions(instant.error(), "device_instant is not being monitored"));
  auto timeline = (*monitor)->timeline(D::kDeviceInstant, 0);
  ASSERT_FALSE(timeline.has_value());
  EXPECT_EQ(timeline.error().code, ErrorCode::kInvalidArgument);
}

TEST(PowerMonitorTest, BadArgumentsAreErrorsNotCrashes) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});
  auto gpus = open_fake_gpus();
  SystemClock clock;
  EXPECT_FALSE(PowerMonitor::create(clock, {}, with(0.1)).has_value());
  for (double bad : {0.0, -1.0, std::nan("")}) {
    auto monitor = PowerMonitor::create(clock, by_index(gpus), with(bad));
    ASSERT_FALSE(monitor.has_value());
    EXPECT_TRUE(error_mentions(monitor.error(), "update_period must be a positive number"));
  }
  auto monitor = PowerMonitor::create(clock, by_index(gpus), with(0.1));
  ASSERT_TRUE(monitor.has_value());
  auto unknown_gpu = (*monitor)->timeline(D::kDeviceInstant, 3);
  ASSERT_FALSE(unknown_gpu.has_value());
  EXPECT_EQ(unknown_gpu.error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(error_mentions(unknown_gpu.error(), "GPU 3 is not monitored; monitored GPUs are [0]"));
  EXPECT_FALSE((*monitor)->timeline(D::kDeviceInstant, 0, 10.0, 5.0).has_value());
  EXPECT_FALSE((*monitor)->energy_j(0, 10.0, 5.0).has_value());
  EXPECT_FALSE((*monitor)->energy_j(7, 0.0, 5.0).has_value());
}

TEST(PowerMonitorTest, PowerAtATimeIsTheClosestSample) {
  std::vector<PowerSample> samples = {{1.0, 10.0}, {2.0, 20.0}, {4.0, 40.0}};
  EXPECT_DOUBLE_EQ(closest_sample(samples, 1.0)->power_w, 10.0);
  EXPECT_DOUBLE_EQ(closest_sample(samples, 1.4)->power_w, 10.0);
  EXPECT_DOUBLE_EQ(closest_sample(samples, 1.5)->power_w, 10.0);  // a tie: the earlier
  EXPECT_DOUBLE_EQ(closest_sample(samples, 3.1)->power_w, 40.0);
  EXPECT_DOUBLE_EQ(closest_sample(samples, 4.5, 1.0)->power_w, 40.0);  // within the slack
  // Outside the sampled span there is no answer.
  EXPECT_FALSE(closest_sample(samples, 0.9).has_value());
  EXPECT_FALSE(closest_sample(samples, 5.5, 1.0).has_value());
  EXPECT_FALSE(closest_sample(std::vector<PowerSample>{}, 1.0).has_value());
}

// A constant power is kept as the two ends of its run: a window inside the run still gets the
// reading at its edges (it was [] before), one that starts inside keeps the run's value from
// its start; samples outside every run are unchanged.
TEST(PowerMonitorTest, Timelines_AWindowInsideAConstantRunIsNotEmpty) {
  const std::vector<PowerSample> run = {{0.0, 300.0}, {10.0, 300.0}, {11.0, 200.0}};
  auto inside = samples_between<&PowerSample::power_w>(run, 2.0, 3.0);
  ASSERT_TRUE(inside);
  ASSERT_EQ(inside->size(), 2u);
  EXPECT_DOUBLE_EQ((*inside)[0].time_s, 2.0);
  EXPECT_DOUBLE_EQ((*inside)[0].power_w, 300.0);
  EXPECT_DOUBLE_EQ((*inside)[1].time_s, 3.0);
  auto across = samples_between<&PowerSample::power_w>(run, 5.0, 12.0);
  ASSERT_TRUE(across);
  ASSERT_EQ(across->size(), 3u);  // 5.0 (edge), 10.0, 11.0
  EXPECT_DOUBLE_EQ(across->front().time_s, 5.0);
  EXPECT_DOUBLE_EQ(across->back().power_w, 200.0);
  auto between_changes = samples_between<&PowerSample::power_w>(run, 10.2, 10.8);
  ASSERT_TRUE(between_changes);
  EXPECT_TRUE(between_changes->empty());  // 300 -> 200 W: nothing known in between
  EXPECT_FALSE(samples_between<&PowerSample::power_w>(run, 3.0, 2.0));
}

TEST(PowerMonitorTest, InfersThePeriodWhenNoneIsGiven) {
  FakeNvmlDevice h100 = FakeNvmlDevice::h100();
  h100.power_update_ms = 100;
  FakeNvmlEnvironment fake({h100});
  auto gpus = open_fake_gpus();
  SystemClock clock;
  auto monitor = PowerMonitor::create(clock, by_index(gpus));
  ASSERT_TRUE(monitor.has_value()) << monitor.error().to_string();
  EXPECT_NEAR((*monitor)->update_period_s(), 0.05, 0.005);
}

}  // namespace
}  // namespace zeus
