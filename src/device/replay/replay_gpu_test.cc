#include "zeus/device/replay_gpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <thread>

namespace zeus {
namespace {

ReplayGpuConfig capped_config(double draw_w) {
  ReplayGpuConfig config;
  config.power_model = ReplayGpu::capped_power_model(draw_w);
  return config;
}

TEST(ReplayGpuTest, ConstantPowerEnergyIsExact) {
  FakeClock clock(5.0);
  ReplayGpu gpu(clock, capped_config(250.0));
  EXPECT_EQ(*gpu.total_energy_mj(), 0u);
  clock.advance_s(2.0);
  EXPECT_EQ(*gpu.total_energy_mj(), 500'000u);
  EXPECT_EQ(*gpu.instant_power_mw(), 250'000u);
  EXPECT_EQ(*gpu.average_power_mw(), 250'000u);
  // Many small reads do not drift.
  for (int i = 0; i < 1000; ++i) {
    clock.advance_s(0.001);
    ASSERT_TRUE(gpu.total_energy_mj().has_value());
  }
  EXPECT_EQ(*gpu.total_energy_mj(), 750'000u);
  EXPECT_NEAR(gpu.energy_j(), 750.0, 1e-6);
}

TEST(ReplayGpuTest, PiecewiseConstantPowerFollowsLimitChanges) {
  FakeClock clock;
  ReplayGpu gpu(clock, capped_config(280.0));
  clock.advance_s(1.0);                      // 280 W (under the 300 W limit)
  ASSERT_TRUE(gpu.set_power_limit_mw(200'000).has_value());
  clock.advance_s(3.0);                      // capped at 200 W
  EXPECT_EQ(*gpu.instant_power_mw(), 200'000u);
  ASSERT_TRUE(gpu.set_power_limit_mw(150'000).has_value());
  clock.advance_s(0.5);                      // 150 W
  ASSERT_TRUE(gpu.reset_power_limit().has_value());
  clock.advance_s(1.0);                      // 280 W again
  EXPECT_EQ(*gpu.total_energy_mj(), 280'000u + 600'000u + 75'000u + 280'000u);
  EXPECT_EQ(gpu.power_limit_history_mw(), (std::vector<uint32_t>{200'000, 150'000, 300'000}));
  EXPECT_EQ(*gpu.power_limit_mw(), 300'000u);
}

TEST(ReplayGpuTest, ModelSeesLockedClocks) {
  FakeClock clock;
  ReplayGpuConfig config;
  config.power_model = [](double, uint32_t, uint32_t sm_max_mhz) {
    return sm_max_mhz == 0 ? 300.0 : sm_max_mhz / 10.0;
  };
  ReplayGpu gpu(clock, config);
  clock.advance_s(1.0);
  ASSERT_TRUE(gpu.lock_sm_clocks_mhz(600, 1000).has_value());
  clock.advance_s(1.0);  // 100 W
  ASSERT_TRUE(gpu.reset_sm_clocks().has_value());
  clock.advance_s(1.0);
  EXPECT_EQ(*gpu.total_energy_mj(), 700'000u);
  EXPECT_EQ(gpu.sm_clock_history_mhz(), (std::vector<ClockLockMhz>{{600, 1000}, {0, 0}}));
}

TEST(ReplayGpuTest, SwappedModelAppliesFromNow) {
  FakeClock clock;
  ReplayGpu gpu(clock, capped_config(100.0));
  clock.advance_s(2.0);
  gpu.set_power_model(ReplayGpu::capped_power_model(50.0));
  clock.advance_s(2.0);
  EXPECT_EQ(*gpu.total_energy_mj(), 300'000u);
}

TEST(ReplayGpuTest, TimeVaryingModelIntegratesWithSimpson) {
  FakeClock clock;
  ReplayGpuConfig config;
  config.integration_step_s = 0.01;
  const double period_s = 10.0;
  config.power_model = ReplayGpu::capped_power_model([period_s](double t_s) {
    return 200.0 + 100.0 * std::sin(2.0 * std::numbers::pi * t_s / period_s);
  });
  ReplayGpu gpu(clock, config);
  clock.advance_s(2.5);
  // Integral of 200 + 100 sin(2 pi t / 10) over [0, 2.5] = 500 + 500/pi.
  const double expected_j = 500.0 + 500.0 / std::numbers::pi;
  EXPECT_NEAR(gpu.energy_j(), expected_j, 1e-6);
  clock.advance_s(7.5);  // a full period: 2000 J in all
  EXPECT_NEAR(gpu.energy_j(), 2000.0, 1e-6);
}

TEST(ReplayGpuTest, ValidatesRangesLikeARealGpu) {
  FakeClock clock;
  ReplayGpu gpu(clock, capped_config(250.0));
  auto below = gpu.set_power_limit_mw(99'999);
  ASSERT_FALSE(below.has_value());
  EXPECT_EQ(below.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(below.error().message.find("[100000, 300000]"), std::string::npos);
  EXPECT_EQ(gpu.set_power_limit_mw(300'001).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(gpu.lock_sm_clocks_mhz(1000, 900).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(gpu.lock_sm_clocks_mhz(500, 900).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(gpu.lock_memory_clocks_mhz(1215, 1300).error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(gpu.lock_memory_clocks_mhz(1215, 1215).has_value());
  EXPECT_TRUE(gpu.power_limit_history_mw().empty());
  EXPECT_TRUE(gpu.sm_clock_history_mhz().empty());
  EXPECT_EQ(*gpu.power_limit_mw(), 300'000u);
}

TEST(ReplayGpuTest, InjectedPermissionDeniedAndReadErrors) {
  FakeClock clock;
  ReplayGpu gpu(clock, capped_config(250.0));
  gpu.set_deny_control(true);
  auto denied = gpu.set_power_limit_mw(200'000);
  ASSERT_FALSE(denied.has_value());
  EXPECT_EQ(denied.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(denied.error().message.find("CAP_SYS_ADMIN"), std::string::npos);
  EXPECT_EQ(gpu.lock_sm_clocks_mhz(600, 800).error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(gpu.set_persistence_mode(true).error().code, ErrorCode::kPermissionDenied);
  gpu.set_deny_control(false);
  EXPECT_TRUE(gpu.set_persistence_mode(true).has_value());
  EXPECT_TRUE(*gpu.persistence_mode());

  gpu.set_read_error(Error{ErrorCode::kUnavailable, "GPU is lost"});
  EXPECT_EQ(gpu.total_energy_mj().error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(gpu.instant_power_mw().error().code, ErrorCode::kUnavailable);
  gpu.set_read_error(std::nullopt);
  clock.advance_s(1.0);
  EXPECT_EQ(*gpu.total_energy_mj(), 250'000u);
}

TEST(ReplayGpuTest, WithoutCounterEnergyIsNotSupported) {
  FakeClock clock;
  ReplayGpuConfig config = capped_config(120.0);
  config.has_energy_counter = false;
  config.initial_energy_mj = 42;
  ReplayGpu gpu(clock, config);
  EXPECT_FALSE(gpu.has_energy_counter());
  EXPECT_EQ(gpu.total_energy_mj().error().code, ErrorCode::kNotSupported);
  EXPECT_EQ(*gpu.instant_power_mw(), 120'000u);
  clock.advance_s(1.0);
  EXPECT_NEAR(gpu.energy_j(), 120.042, 1e-9);
}

TEST(ReplayGpuTest, CounterUpdatesOnlyEveryPeriodWhenAsked) {
  FakeClock clock;
  ReplayGpuConfig config = capped_config(200.0);
  config.counter_update_period_s = 0.1;
  ReplayGpu gpu(clock, config);
  clock.set_s(0.21);
  EXPECT_EQ(*gpu.total_energy_mj(), 40'000u);  // as of t = 0.2
  clock.set_s(0.29);
  EXPECT_EQ(*gpu.total_energy_mj(), 40'000u);  // no tick since
  ASSERT_TRUE(gpu.set_power_limit_mw(100'000).has_value());  // 100 W from t = 0.29
  clock.set_s(0.55);
  // 200 W x 0.29 s + 100 W x (0.5 - 0.29) s as of the tick at t = 0.5.
  EXPECT_EQ(*gpu.total_energy_mj(), 58'000u + 21'000u);
  EXPECT_NEAR(gpu.energy_j(), 58.0 + 26.0, 1e-9);  // the exact integral is always current
}

TEST(ReplayGpuTest, ConcurrentReadsAndSetsStayConsistent) {
  FakeClock clock;
  ReplayGpu gpu(clock, capped_config(400.0));  // always at the limit
  std::thread setter([&] {
    for (int i = 0; i < 2000; ++i) {
      ASSERT_TRUE(gpu.set_power_limit_mw(i % 2 == 0 ? 100'000 : 300'000).has_value());
    }
  });
  uint64_t last_mj = 0;
  for (int i = 0; i < 2000; ++i) {
    clock.advance_s(0.001);
    const uint64_t now_mj = *gpu.total_energy_mj();
    EXPECT_GE(now_mj, last_mj);
    last_mj = now_mj;
  }
  setter.join();
  // Between 100 W and 300 W over 2 s.
  EXPECT_GE(gpu.energy_j(), 200.0 - 1e-9);
  EXPECT_LE(gpu.energy_j(), 600.0 + 1e-9);
  EXPECT_EQ(gpu.power_limit_history_mw().size(), 2000u);
}

}  // namespace
}  // namespace zeus
