#include "zeus/monitor/power_sampler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <numbers>
#include <thread>

#include "zeus/device/replay_gpu.h"
#include "zeus/monitor/sample_ring.h"

namespace zeus {
namespace {

constexpr double kPeriodS = 10.0;

double sine_power_w(double t_s) {
  return 200.0 + 100.0 * std::sin(2.0 * std::numbers::pi * t_s / kPeriodS);
}

// Integral of sine_power_w over [t0_s, t1_s].
double sine_energy_j(double t0_s, double t1_s) {
  const double w = 2.0 * std::numbers::pi / kPeriodS;
  return 200.0 * (t1_s - t0_s) + 100.0 / w * (std::cos(w * t0_s) - std::cos(w * t1_s));
}

ReplayGpuConfig model_config(ReplayPowerModel model) {
  ReplayGpuConfig config;
  config.limit_range_mw = {100'000, 500'000};
  config.default_limit_mw = 500'000;
  config.power_model = std::move(model);
  return config;
}

TEST(PowerSamplerTest, IntegratesAnAnalyticCurveWithinHalfAPercent) {
  FakeClock clock;
  ReplayGpu gpu(clock, model_config(ReplayGpu::capped_power_model(sine_power_w)));
  PowerSampler sampler(clock, {{0, &gpu}}, {.interval_s = 0.1});
  for (int i = 0; i <= 250; ++i) {
    clock.set_s(0.1 * i);
    ASSERT_TRUE(sampler.sample_once().has_value());
  }
  // Windows with edges between samples, over a full period and across several.
  for (auto [t0_s, t1_s] : {std::pair{1.234, 7.891}, std::pair{0.0, 10.0}, std::pair{2.05, 24.97},
                            std::pair{3.33, 3.37}}) {
    auto energy_j = sampler.energy_j(0, t0_s, t1_s);
    ASSERT_TRUE(energy_j.has_value());
    const double expected_j = sine_energy_j(t0_s, t1_s);
    EXPECT_LT(std::abs(*energy_j - expected_j) / expected_j, 0.005)
        << "[" << t0_s << ", " << t1_s << "]: " << *energy_j << " J vs " << expected_j << " J";
  }
  EXPECT_EQ(sampler.samples(0).size(), 251u);
}

TEST(PowerSamplerTest, DeduplicatesRunsAndStaysExact) {
  FakeClock clock;
  ReplayGpu gpu(clock, model_config(ReplayGpu::capped_power_model(100.0)));
  PowerSampler sampler(clock, {{3, &gpu}}, {.interval_s = 0.1});
  for (int i = 0; i <= 10; ++i) {  // 100 W from t = 0 to t = 1
    clock.set_s(0.1 * i);
    ASSERT_TRUE(sampler.sample_once().has_value());
  }
  gpu.set_power_model(ReplayGpu::capped_power_model(300.0));
  for (int i = 11; i <= 20; ++i) {  // 300 W from t = 1.1 to t = 2
    clock.set_s(0.1 * i);
    ASSERT_TRUE(sampler.sample_once().has_value());
  }
  auto samples = sampler.samples(3);
  ASSERT_EQ(samples.size(), 4u);  // first and last of each run
  EXPECT_DOUBLE_EQ(samples[0].time_s, 0.0);
  EXPECT_DOUBLE_EQ(samples[1].time_s, 1.0);
  EXPECT_DOUBLE_EQ(samples[2].time_s, 1.1);
  EXPECT_DOUBLE_EQ(samples[3].time_s, 2.0);
  EXPECT_NEAR(*sampler.energy_j(3, 0.0, 1.0), 100.0, 1e-9);
  EXPECT_NEAR(*sampler.energy_j(3, 0.25, 0.75), 50.0, 1e-9);
  EXPECT_NEAR(*sampler.energy_j(3, 1.0, 1.1), 20.0, 1e-9);  // the ramp between runs
  EXPECT_NEAR(*sampler.energy_j(3, 1.5, 2.0), 150.0, 1e-9);
  // Nothing is extrapolated outside the samples.
  EXPECT_NEAR(*sampler.energy_j(3, 2.0, 3.0), 0.0, 1e-9);
  EXPECT_NEAR(*sampler.energy_j(3, -1.0, 0.5), 50.0, 1e-9);
  EXPECT_DOUBLE_EQ(sampler.latest(3)->power_w, 300.0);
  EXPECT_DOUBLE_EQ(sampler.latest(3)->time_s, 2.0);
}

TEST(PowerSamplerTest, RingBufferIsBounded) {
  FakeClock clock;
  ReplayGpu gpu(clock, model_config(ReplayGpu::capped_power_model([](double t_s) {
                  return 100.0 + 10.0 * t_s;  // a new value at every sample
                })));
  PowerSampler sampler(clock, {{0, &gpu}}, {.interval_s = 1.0, .capacity = 4});
  for (int i = 0; i < 10; ++i) {
    clock.set_s(i);
    ASSERT_TRUE(sampler.sample_once().has_value());
  }
  auto samples = sampler.samples(0);
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_DOUBLE_EQ(samples.front().time_s, 6.0);
  EXPECT_DOUBLE_EQ(samples.back().time_s, 9.0);
  // Linear power is integrated exactly by trapezoid: 100 + 10 t over [6.5, 8.5].
  EXPECT_NEAR(*sampler.energy_j(0, 6.5, 8.5), 200.0 + 5.0 * (8.5 * 8.5 - 6.5 * 6.5), 1e-9);
  auto evicted = sampler.energy_j(0, 5.0, 8.0);
  ASSERT_FALSE(evicted.has_value());
  EXPECT_EQ(evicted.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(evicted.error().message.find("capacity"), std::string::npos);
}

// A large capacity costs nothing until samples come (it was allocated up
// front: 3 GB for 100,000,000 samples); the ring still wraps at its capacity.
TEST(PowerSamplerTest, PowerMonitorMemory_TheRingGrowsOnDemandUpToItsCapacity) {
  SampleRing<PowerSample, &PowerSample::power_w> big(100'000'000);
  for (int i = 0; i < 5; ++i) big.push({static_cast<double>(i), 100.0 + i});
  EXPECT_EQ(big.size, 5u);
  EXPECT_LE(big.buffer.capacity(), 16u);
  SampleRing<PowerSample, &PowerSample::power_w> small(3);
  for (int i = 0; i < 5; ++i) small.push({static_cast<double>(i), 100.0 + i});
  const auto kept = small.copy();
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_DOUBLE_EQ(kept.front().time_s, 2.0);
  EXPECT_DOUBLE_EQ(kept.back().time_s, 4.0);
  EXPECT_TRUE(small.dropped);
  EXPECT_LE(small.buffer.capacity(), 3u);
}

TEST(PowerSamplerTest, ReportsErrors) {
  FakeClock clock;
  ReplayGpu gpu(clock, model_config(ReplayGpu::capped_power_model(100.0)));
  ReplayGpu other(clock, model_config(ReplayGpu::capped_power_model(50.0)));
  PowerSampler sampler(clock, {{0, &gpu}, {1, &other}});
  EXPECT_EQ(sampler.gpu_indices(), (std::vector<int>{0, 1}));
  EXPECT_EQ(sampler.energy_j(0, 0.0, 1.0).error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(sampler.latest(0).error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(sampler.energy_j(7, 0.0, 1.0).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(sampler.latest(7).error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(sampler.samples(7).empty());
  gpu.set_read_error(Error{ErrorCode::kUnavailable, "GPU is lost"});
  auto result = sampler.sample_once();
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message, "GPU is lost");
  EXPECT_EQ(sampler.samples(1).size(), 1u);  // the other GPU is still sampled
  EXPECT_EQ(sampler.energy_j(1, 1.0, 0.5).error().code, ErrorCode::kInvalidArgument);
}

TEST(PowerSamplerTest, BackgroundThreadSamplesOnTheSystemClock) {
  SystemClock clock;
  // Power changes every millisecond, so no sample is deduplicated away.
  ReplayGpu gpu(clock, model_config([](double t_s, uint32_t, uint32_t) {
                  return 200.0 + 50.0 * std::sin(t_s * 100.0);
                }));
  PowerSampler sampler(clock, {{0, &gpu}},
                       {.interval_s = 0.01, .domains = {PowerDomain::kDeviceAverage}});
  ASSERT_TRUE(sampler.start().has_value());
  EXPECT_TRUE(sampler.running());
  EXPECT_EQ(sampler.start().error().code, ErrorCode::kInvalidArgument);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  sampler.stop();
  EXPECT_FALSE(sampler.running());
  auto samples = sampler.samples(0);
  ASSERT_GE(samples.size(), 5u);
  for (size_t i = 1; i < samples.size(); ++i) EXPECT_GT(samples[i].time_s, samples[i - 1].time_s);
  const size_t count = samples.size();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(sampler.samples(0).size(), count);  // stopped means stopped
  // Power stays within [150, 250] W, so the energy does too.
  const double t0_s = samples.front().time_s;
  const double t1_s = samples.back().time_s;
  auto energy_j = sampler.energy_j(0, t0_s, t1_s);
  ASSERT_TRUE(energy_j.has_value());
  EXPECT_GE(*energy_j, 150.0 * (t1_s - t0_s) * 0.999);
  EXPECT_LE(*energy_j, 250.0 * (t1_s - t0_s) * 1.001);
  // It can be started again.
  ASSERT_TRUE(sampler.start().has_value());
  sampler.stop();
  EXPECT_GT(sampler.samples(0).size(), count);
}

// The first and last samples were held constant forever, so a range before the
// sampler existed, in the future, or unbounded "measured" energy; NaN was accepted.
TEST(PowerSamplerTest, NeverExtrapolatesBeyondTheSamplesAndRejectsNonFiniteTimes) {
  FakeClock clock(100.0);
  ReplayGpu gpu(clock, model_config(ReplayGpu::capped_power_model(350.0)));
  PowerSampler sampler(clock, {{0, &gpu}}, {.interval_s = 0.05});
  for (int i = 0; i <= 10; ++i) {  // samples over [100, 100.5]
    clock.set_s(100.0 + 0.05 * i);
    ASSERT_TRUE(sampler.sample_once().has_value());
  }
  ASSERT_EQ(sampler.span_s(0), std::make_pair(100.0, 100.5));
  EXPECT_FALSE(sampler.span_s(1).has_value());
  // Before the first sample and in the future: no samples in the range.
  for (auto [t0_s, t1_s] : {std::pair{-900.0, -800.0}, std::pair{1e6, 2e6}}) {
    EXPECT_FALSE(sampler.has_samples_in(0, t0_s, t1_s));
    auto energy_j = sampler.energy_j(0, t0_s, t1_s);
    ASSERT_FALSE(energy_j.has_value());
    EXPECT_EQ(energy_j.error().code, ErrorCode::kUnavailable);
    EXPECT_NE(energy_j.error().message.find("no power samples"), std::string::npos);
  }
  // A range wider than the samples counts only the sampled 0.5 s.
  EXPECT_TRUE(sampler.has_samples_in(0, 90.0, 110.0));
  EXPECT_NEAR(*sampler.energy_j(0, 90.0, 110.0), 350.0 * 0.5, 1e-9);
  EXPECT_NEAR(*sampler.energy_j(0, 0.0, 1e300), 350.0 * 0.5, 1e-9);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (auto [t0_s, t1_s] : {std::pair{0.0, inf}, std::pair{nan, nan}, std::pair{-inf, 100.2}}) {
    auto energy_j = sampler.energy_j(0, t0_s, t1_s);
    ASSERT_FALSE(energy_j.has_value());
    EXPECT_EQ(energy_j.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(energy_j.error().message.find("finite"), std::string::npos);
  }
}

}  // namespace
}  // namespace zeus
