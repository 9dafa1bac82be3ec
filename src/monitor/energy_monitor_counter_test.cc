// EnergyMonitor at the edges of a GPU energy counter: a counter that goes backwards, reads that
// take time at a window's edge, and the 0 J warning once per window name.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "device/nvml/nvml_gpu.h"
#include "testing/fake_nvml_state.h"
#include "zeus/common/log.h"
#include "zeus/device/replay_gpu.h"
#include "zeus/monitor/energy_monitor.h"

namespace zeus {
namespace {

using testing::FakeNvmlDevice;

// A ReplayGpu whose counter read takes `read_time_s` on the FakeClock, the counter being taken
// halfway through (a read preempted at one window edge).
class SlowCounterGpu final : public Gpu {
 public:
  SlowCounterGpu(FakeClock& clock, ReplayGpuConfig config)
      : clock_(clock), inner_(clock, std::move(config)) {}
  double read_time_s = 0.0;

  GpuVendor vendor() const override { return inner_.vendor(); }
  std::string name() const override { return inner_.name(); }
  std::string uuid() const override { return inner_.uuid(); }
  GpuArchitecture architecture() const override { return inner_.architecture(); }
  int physical_index() const override { return inner_.physical_index(); }
  Result<PowerLimitRangeMw> power_limit_range_mw() override {
    return inner_.power_limit_range_mw();
  }
  Result<uint32_t> default_power_limit_mw() override { return inner_.default_power_limit_mw(); }
  Result<uint32_t> power_limit_mw() override { return inner_.power_limit_mw(); }
  Result<void> set_power_limit_mw(uint32_t mw) override { return inner_.set_power_limit_mw(mw); }
  Result<void> reset_power_limit() override { return inner_.reset_power_limit(); }
  Result<uint32_t> instant_power_mw() override { return inner_.instant_power_mw(); }
  Result<uint32_t> average_power_mw() override { return inner_.average_power_mw(); }
  bool has_energy_counter() override { return true; }
  Result<uint64_t> total_energy_mj() override {
    clock_.advance_s(read_time_s / 2);
    auto energy_mj = inner_.total_energy_mj();
    clock_.advance_s(read_time_s / 2);
    return energy_mj;
  }
  Result<bool> persistence_mode() override { return inner_.persistence_mode(); }
  Result<void> set_persistence_mode(bool on) override { return inner_.set_persistence_mode(on); }
  Result<std::vector<uint32_t>> supported_memory_clocks_mhz() override {
    return inner_.supported_memory_clocks_mhz();
  }
  Result<std::vector<uint32_t>> supported_sm_clocks_mhz() override {
    return inner_.supported_sm_clocks_mhz();
  }
  Result<void> lock_sm_clocks_mhz(uint32_t lo, uint32_t hi) override {
    return inner_.lock_sm_clocks_mhz(lo, hi);
  }
  Result<void> reset_sm_clocks() override { return inner_.reset_sm_clocks(); }
  Result<void> lock_memory_clocks_mhz(uint32_t lo, uint32_t hi) override {
    return inner_.lock_memory_clocks_mhz(lo, hi);
  }
  Result<void> reset_memory_clocks() override { return inner_.reset_memory_clocks(); }

 private:
  FakeClock& clock_;
  ReplayGpu inner_;
};

ReplayGpuConfig gpu_config(double draw_w, double counter_period_s = 0.0) {
  ReplayGpuConfig config;
  config.power_model = ReplayGpu::capped_power_model(draw_w);
  config.counter_update_period_s = counter_period_s;
  config.initial_energy_mj = 123'456;
  return config;
}

class EnergyMonitorCounterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_level_ = log_level();
    set_log_level(LogLevel::kWarning);
    set_log_sink([this](LogLevel level, std::string_view message) {
      if (level == LogLevel::kWarning) warnings_.emplace_back(message);
    });
  }
  void TearDown() override {
    set_log_sink(nullptr);
    set_log_level(saved_level_);
  }
  std::unique_ptr<EnergyMonitor> make_monitor(Clock& clock, EnergyMonitorOptions options = {}) {
    options.start_sampler_thread = false;
    auto monitor = EnergyMonitor::create(devices_, clock, std::move(options));
    EXPECT_TRUE(monitor.has_value()) << monitor.error().to_string();
    return monitor ? std::move(*monitor) : nullptr;
  }

  Devices devices_;
  std::vector<std::string> warnings_;
  LogLevel saved_level_ = LogLevel::kWarning;
};

// The end edge's read is delayed 20 ms (the counter taken halfway). With the
// timestamp taken before the reads only, the 100 ms window at 200 W got 110 ms of energy and
// 100 ms of time: 220 W. The window's time now spans its counter reads, so the power read is
// never above the device's.
TEST_F(EnergyMonitorCounterTest, TimeIsTakenAroundTheCounterReadSoPowerIsNeverOverstated) {
  FakeClock clock(5.0);
  auto gpu = std::make_unique<SlowCounterGpu>(clock, gpu_config(200.0));
  SlowCounterGpu* slow = gpu.get();
  devices_.gpus.push_back(std::move(gpu));
  auto monitor = make_monitor(clock);
  ASSERT_TRUE(monitor->begin_window("w").has_value());
  clock.advance_s(0.1);
  slow->read_time_s = 0.02;
  auto m = monitor->end_window("w");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  EXPECT_NEAR(m->time_s, 0.12, 1e-9);  // the end read included
  EXPECT_NEAR(m->gpu_energy_j.at(0), 22.0, 1e-3);
  EXPECT_LE(m->gpu_energy_j.at(0) / m->time_s, 200.0);
  // A delayed begin read: its energy is not counted, its time is.
  slow->read_time_s = 0.02;
  ASSERT_TRUE(monitor->begin_window("v").has_value());
  slow->read_time_s = 0.0;
  clock.advance_s(0.1);
  auto v = monitor->end_window("v");
  ASSERT_TRUE(v.has_value()) << v.error().to_string();
  EXPECT_NEAR(v->time_s, 0.12, 1e-9);
  EXPECT_NEAR(v->gpu_energy_j.at(0), 22.0, 1e-3);
}

// A counter that restarts (driver reload, GPU reset) gave 0 J and a warning about
// short windows. It is now named as such, and the window is power x time.
TEST_F(EnergyMonitorCounterTest, CounterGoingBackwardsIsReportedAndApproximated) {
  FakeNvmlDevice device = FakeNvmlDevice::h100();  // 350 W
  device.energy_mj = 5.0e6;
  device.energy_reset_after_calls = 2;  // open's probe, begin; the end read sees the reset
  testing::FakeNvmlEnvironment fake({device});
  auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  ASSERT_TRUE(gpus.has_value()) << gpus.error().to_string();
  devices_.gpus = std::move(*gpus);
  SystemClock clock;
  auto monitor = make_monitor(clock);
  ASSERT_TRUE(monitor->begin_window("reset").has_value());
  auto m = monitor->end_window("reset");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  EXPECT_NEAR(m->gpu_energy_j.at(0), 350.0 * m->time_s, 1e-9);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("energy counter of GPU 0 went backwards"), std::string::npos)
      << warnings_[0];
  EXPECT_NE(warnings_[0].find("'reset'"), std::string::npos);
  EXPECT_NE(warnings_[0].find("instant power x elapsed time"), std::string::npos);
  EXPECT_EQ(warnings_[0].find("update period"), std::string::npos) << warnings_[0];
}

// Issue 23: the 0 J warning names the option of each kind of user, and comes
// once per window name: a training loop of 500 short "step" windows gets one line, however long
// it runs; another short window name gets its own (one) line.
TEST_F(EnergyMonitorCounterTest, ZeroEnergyWarningNamesEveryOptionOncePerWindowName) {
  FakeClock clock(10.21);
  devices_.gpus.push_back(std::make_unique<ReplayGpu>(clock, gpu_config(200.0, 100.0)));
  auto monitor = make_monitor(clock);
  for (int i = 0; i < 500; ++i) {
    ASSERT_TRUE(monitor->begin_window("step").has_value());
    clock.advance_s(0.01);
    auto m = monitor->end_window("step");
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->gpu_energy_j.at(0), 0.0);
  }
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("'step'"), std::string::npos) << warnings_[0];
  for (const char* option : {"--approx-zero", "approx_instant_energy",
                             "EnergyMonitorOptions::approximate_zero_energy"}) {
    EXPECT_NE(warnings_[0].find(option), std::string::npos) << option << ": " << warnings_[0];
  }
  clock.advance_s(60.0);  // a minute later (the counter's 100 s period has not passed yet)
  ASSERT_TRUE(monitor->begin_window("step").has_value());
  clock.advance_s(0.01);
  ASSERT_TRUE(monitor->end_window("step").has_value());
  EXPECT_EQ(warnings_.size(), 1u) << "a window name already warned about warned again";
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(monitor->begin_window("eval").has_value());
    clock.advance_s(0.01);
    ASSERT_TRUE(monitor->end_window("eval").has_value());
  }
  ASSERT_EQ(warnings_.size(), 2u);
  EXPECT_NE(warnings_[1].find("'eval'"), std::string::npos) << warnings_[1];
}

}  // namespace
}  // namespace zeus
