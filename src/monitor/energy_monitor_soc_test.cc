// EnergyMonitor with a Jetson SoC (Measurement::soc_energy) and with a module-scope GPU next to
// RAPL CPUs (the CPU must not be counted twice), on the fake sysfs trees and the fake NVML.
#include <gtest/gtest.h>

#include <string>

#include "device/jetson/jetson_soc.h"
#include "testing/fake_jetson.h"
#include "testing/fake_nvml_state.h"
#include "testing/fake_sysfs.h"
#include "testing/fake_sysfs_tree.h"
#include "zeus/common/log.h"
#include "zeus/monitor/energy_monitor.h"

namespace zeus {
namespace {

using testing::FakeJetsonBoard;
using testing::FakeSysfsTree;

TEST(EnergyMonitorSocTest, WindowsCarryTheSocsRailEnergy) {
  FakeSysfsTree sysfs;
  FakeJetsonBoard board(sysfs, FakeJetsonBoard::Family::kOrin);
  board.set_rail_mw("VDD_GPU_SOC", 12000);
  FakeClock clock(10.0);
  Devices devices;
  auto soc = open_jetson_soc(sysfs.root(), clock, 0.0);
  ASSERT_TRUE(soc.has_value()) << soc.error().to_string();
  devices.soc = std::move(*soc);
  auto monitor = EnergyMonitor::create(devices, clock, {.start_sampler_thread = false});
  ASSERT_TRUE(monitor.has_value()) << monitor.error().to_string();
  ASSERT_TRUE((*monitor)->begin_window("w").has_value());
  clock.advance_s(2.5);
  auto m = (*monitor)->end_window("w");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  ASSERT_TRUE(m->soc_energy.has_value());
  EXPECT_NEAR(*m->soc_energy->gpu_j, 30.0, 1e-9);  // 12 W x 2.5 s
  EXPECT_NEAR(*m->soc_energy->cpu_j, 2.5, 1e-9);   // 1 W x 2.5 s
  EXPECT_NEAR(*m->soc_energy->total_j, 2.5, 1e-9);
  EXPECT_DOUBLE_EQ(m->total_energy_j(), 0.0);  // the SoC is not in the GPU total

  EnergyMonitorOptions without;
  without.start_sampler_thread = false;
  without.measure_soc = false;
  auto plain = EnergyMonitor::create(devices, clock, without);
  ASSERT_TRUE(plain.has_value());
  ASSERT_TRUE((*plain)->begin_window("w").has_value());
  clock.advance_s(1.0);
  EXPECT_FALSE((*plain)->end_window("w").value().soc_energy.has_value());
}

TEST(EnergyMonitorSocTest, RailThatDisappearsFailsTheWindow) {
  FakeSysfsTree sysfs;
  FakeJetsonBoard board(sysfs, FakeJetsonBoard::Family::kXavier);
  FakeClock clock;
  Devices devices;
  devices.soc = open_jetson_soc(sysfs.root(), clock, 0.0).value();
  auto monitor = EnergyMonitor::create(devices, clock, {.start_sampler_thread = false});
  ASSERT_TRUE(monitor.has_value());
  ASSERT_TRUE((*monitor)->begin_window("w").has_value());
  board.remove_rail("GPU");
  auto m = (*monitor)->end_window("w");
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message.find("SoC jetson"), std::string::npos) << m.error().message;
  EXPECT_TRUE((*monitor)->is_window_open("w"));  // still open: it can be cancelled
}

TEST(EnergyMonitorSocTest, ModuleScopeGpuTurnsDefaultCpuMeasurementOff) {
  testing::FakeNvmlEnvironment fake({testing::FakeNvmlDevice::gh200()});
  testing::FakePowercapTree powercap;
  powercap.add_package(0, 1000);
  FakeSysfsTree sysfs;  // no Jetson
  DiscoverOptions options;
  options.nvml_path = ZEUS_FAKE_NVML_PATH;
  options.powercap_root = powercap.root();
  options.sysfs_root = sysfs.root();
  auto devices = discover(options);
  ASSERT_TRUE(devices.has_value()) << devices.error().to_string();
  ASSERT_EQ(devices->gpus.size(), 1u);
  ASSERT_EQ(devices->cpus.size(), 1u);
  EXPECT_EQ(devices->soc, nullptr);
  EXPECT_EQ(devices->gpus[0]->power_scope(), PowerScope::kModule);

  std::vector<std::string> warnings;
  const LogLevel saved = log_level();
  set_log_level(LogLevel::kWarning);
  set_log_sink([&](LogLevel level, std::string_view message) {
    if (level == LogLevel::kWarning) warnings.emplace_back(message);
  });
  SystemClock clock;
  auto by_default = EnergyMonitor::create(*devices, clock, {.start_sampler_thread = false});
  auto listed = EnergyMonitor::create(
      *devices, clock, {.cpu_indices = std::vector<int>{0}, .start_sampler_thread = false});
  set_log_sink(nullptr);
  set_log_level(saved);
  ASSERT_TRUE(by_default.has_value()) << by_default.error().to_string();
  ASSERT_TRUE(listed.has_value()) << listed.error().to_string();
  EXPECT_TRUE((*by_default)->cpu_indices().empty());
  EXPECT_EQ((*listed)->cpu_indices(), std::vector<int>{0});
  ASSERT_GE(warnings.size(), 2u);
  std::string all;
  for (const auto& w : warnings) all += w + "\n";
  EXPECT_NE(all.find("CPU energy measurement is off"), std::string::npos) << all;
  EXPECT_NE(all.find("counts that CPU twice"), std::string::npos) << all;
}

}  // namespace
}  // namespace zeus
