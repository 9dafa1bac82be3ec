// The Jetson SoC backend on fake sysfs trees of two board families: rail discovery, energy of a
// window against the fake's integral, and a rail that disappears or cannot be read.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "device/jetson/jetson_rails.h"
#include "device/jetson/jetson_soc.h"
#include "testing/fake_jetson.h"
#include "testing/fake_sysfs.h"
#include "testing/fake_sysfs_tree.h"
#include "zeus/common/clock.h"

namespace zeus {
namespace {

using testing::FakeJetsonBoard;
using testing::FakeSysfsTree;

std::string describe(const std::vector<JetsonRail>& rails) {
  std::string text;
  for (const auto& rail : rails) {
    text += (text.empty() ? "" : ",") + jetson_rail_kind_name(rail.kind) + "=" + rail.label;
  }
  return text;
}

TEST(JetsonRailsTest, ClassifiesRailNamesAsUpstream) {
  EXPECT_EQ(classify_jetson_rail("VDD_CPU_CV"), JetsonRailKind::kCpu);
  EXPECT_EQ(classify_jetson_rail("VDD_CPU_GPU_CV"), JetsonRailKind::kCpu);  // cpu is checked first
  EXPECT_EQ(classify_jetson_rail("VDD_GPU_SOC"), JetsonRailKind::kGpu);
  EXPECT_EQ(classify_jetson_rail("GPU"), JetsonRailKind::kGpu);
  EXPECT_EQ(classify_jetson_rail("VDD_IN"), JetsonRailKind::kTotal);
  EXPECT_EQ(classify_jetson_rail("VIN_SYS_5V0"), JetsonRailKind::kTotal);
  EXPECT_EQ(classify_jetson_rail("POM_5V_IN"), JetsonRailKind::kTotal);
  EXPECT_EQ(classify_jetson_rail("SOC"), std::nullopt);
  EXPECT_EQ(classify_jetson_rail("SYS5V"), std::nullopt);
  EXPECT_EQ(classify_jetson_rail("NC"), std::nullopt);
}

TEST(JetsonRailsTest, OrinHwmonLayout) {
  FakeSysfsTree sysfs;
  FakeJetsonBoard board(sysfs, FakeJetsonBoard::Family::kOrin);
  board.set_rail_mw("VDD_GPU_SOC", 7500);
  auto rails = find_jetson_rails(sysfs.root());
  ASSERT_TRUE(rails.has_value()) << rails.error().to_string();
  EXPECT_EQ(describe(*rails), "cpu=VDD_CPU_CV,gpu=VDD_GPU_SOC,total=VIN_SYS_5V0");
  // mV x mA / 1000.
  EXPECT_DOUBLE_EQ(read_jetson_rail_mw((*rails)[1]).value(), 7500.0);
  EXPECT_TRUE((*rails)[1].power_path.empty());
}

TEST(JetsonRailsTest, XavierIioLayoutHasNoTotalRail) {
  FakeSysfsTree sysfs;
  FakeJetsonBoard board(sysfs, FakeJetsonBoard::Family::kXavier);
  board.set_rail_mw("CPU", 3210);
  auto rails = find_jetson_rails(sysfs.root());
  ASSERT_TRUE(rails.has_value()) << rails.error().to_string();
  EXPECT_EQ(describe(*rails), "cpu=CPU,gpu=GPU");
  EXPECT_DOUBLE_EQ(read_jetson_rail_mw((*rails)[0]).value(), 3210.0);  // in_power in mW
}

TEST(JetsonRailsTest, Ina238PowerIsInMicrowattsAndReplacesTheTotal) {
  FakeSysfsTree sysfs;
  FakeJetsonBoard board(sysfs, FakeJetsonBoard::Family::kOrinWithIna238);
  board.set_rail_mw("VDD_IN", 21000);
  auto rails = find_jetson_rails(sysfs.root());
  ASSERT_TRUE(rails.has_value()) << rails.error().to_string();
  EXPECT_EQ(describe(*rails), "cpu=VDD_CPU_CV,gpu=VDD_GPU_SOC,total=VDD_IN");
  EXPECT_DOUBLE_EQ(read_jetson_rail_mw((*rails)[2]).value(), 21000.0);
}

TEST(JetsonRailsTest, NoMonitorIsNotFound) {
  FakeSysfsTree sysfs;
  auto none = find_jetson_rails(sysfs.root());
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  EXPECT_NE(none.error().message.find("not an NVIDIA Jetson"), std::string::npos);
  // A monitor whose rails are all unused.
  sysfs.write("bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon1/in1_label", "NC");
  sysfs.write("bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon1/in1_input", "0");
  auto unused = find_jetson_rails(sysfs.root());
  ASSERT_FALSE(unused.has_value());
  EXPECT_NE(unused.error().message.find("no CPU, GPU or total rail"), std::string::npos);
}

TEST(JetsonSocTest, WindowEnergyIsTheIntegralOfTheFakesPower) {
  FakeSysfsTree sysfs;
  FakeJetsonBoard board(sysfs, FakeJetsonBoard::Family::kOrin);
  board.set_rail_mw("VDD_GPU_SOC", 10000);
  board.set_rail_mw("VDD_CPU_CV", 4000);
  board.set_rail_mw("VIN_SYS_5V0", 20000);
  FakeClock clock(100.0);
  auto soc = open_jetson_soc(sysfs.root(), clock, 0.0);
  ASSERT_TRUE(soc.has_value()) << soc.error().to_string();
  EXPECT_EQ((*soc)->name(), "jetson");
  auto start = (*soc)->energy_mj().value();
  clock.advance_s(2.0);
  (*soc)->energy_mj().value();  // a sample at t = 2 s, where the GPU steps up
  board.set_rail_mw("VDD_GPU_SOC", 30000);
  clock.advance_s(1.0);
  (*soc)->energy_mj().value();  // trapezoid 10 W -> 30 W over 1 s
  clock.advance_s(1.0);
  auto end = (*soc)->energy_mj().value();
  // GPU: 10 W x 2 s + (10 + 30) / 2 W x 1 s + 30 W x 1 s = 70 J.
  EXPECT_NEAR(*end.gpu_mj - *start.gpu_mj, 70000.0, 1e-6);
  EXPECT_NEAR(*end.cpu_mj - *start.cpu_mj, 16000.0, 1e-6);
  EXPECT_NEAR(*end.total_mj - *start.total_mj, 80000.0, 1e-6);
}

TEST(JetsonSocTest, XavierHasNoTotalEnergy) {
  FakeSysfsTree sysfs;
  FakeJetsonBoard board(sysfs, FakeJetsonBoard::Family::kXavier);
  FakeClock clock;
  auto soc = open_jetson_soc(sysfs.root(), clock, 0.0);
  ASSERT_TRUE(soc.has_value()) << soc.error().to_string();
  clock.advance_s(3.0);
  auto energy = (*soc)->energy_mj().value();
  EXPECT_NEAR(*energy.gpu_mj, 3000.0, 1e-6);  // 1 W for 3 s
  EXPECT_FALSE(energy.total_mj.has_value());
}

TEST(JetsonSocTest, RailThatDisappearsFailsEveryLaterRead) {
  FakeSysfsTree sysfs;
  FakeJetsonBoard board(sysfs, FakeJetsonBoard::Family::kOrin);
  FakeClock clock;
  auto soc = open_jetson_soc(sysfs.root(), clock, 0.0);
  ASSERT_TRUE(soc.has_value()) << soc.error().to_string();
  board.remove_rail("VDD_CPU_CV");
  auto gone = (*soc)->energy_mj();
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
  EXPECT_NE(gone.error().message.find("VDD_CPU_CV disappeared"), std::string::npos)
      << gone.error().message;
  board.set_rail_mw("VDD_CPU_CV", 1000);  // back again: the gap is not papered over
  EXPECT_FALSE((*soc)->energy_mj().has_value());
}

TEST(JetsonSocTest, UnreadableRailIsPermissionDenied) {
  FakeSysfsTree sysfs;
  FakeJetsonBoard board(sysfs, FakeJetsonBoard::Family::kXavier);
  testing::FakePowercapTree::make_unreadable(sysfs.root() + "/" + board.rail_file("GPU"));
  const int code = testing::run_unprivileged([&] {
    FakeClock clock;
    auto soc = open_jetson_soc(sysfs.root(), clock, 0.0);
    if (soc.has_value()) return 1;
    return soc.error().code == ErrorCode::kPermissionDenied ? 0 : 2;
  });
  EXPECT_EQ(code, 0);
}

TEST(JetsonSocTest, BackgroundSamplingFollowsPowerBetweenReads) {
  FakeSysfsTree sysfs;
  FakeJetsonBoard board(sysfs, FakeJetsonBoard::Family::kOrin);
  SystemClock clock;
  auto soc = open_jetson_soc(sysfs.root(), clock, 0.01);
  ASSERT_TRUE(soc.has_value()) << soc.error().to_string();
  const double t0 = clock.now_s();
  auto start = (*soc)->energy_mj().value();
  clock.sleep_for_s(0.2);
  auto end = (*soc)->energy_mj().value();
  const double elapsed_s = clock.now_s() - t0;
  // 1 W on the GPU rail: about 1 mJ per ms, bounded by the time between the reads.
  EXPECT_GT(*end.gpu_mj - *start.gpu_mj, 150.0);
  EXPECT_LE(*end.gpu_mj - *start.gpu_mj, elapsed_s * 1000.0 + 1e-6);
}

}  // namespace
}  // namespace zeus
