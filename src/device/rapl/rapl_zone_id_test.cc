// get_current_rapl_zone_id() on fake sysfs, powercap and /proc trees: two sockets whose zone
// ids differ from their package ids, a multi-die part, the container mount, and errors.
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "device/rapl/rapl_cpu.h"
#include "testing/fake_sysfs.h"
#include "testing/fake_sysfs_tree.h"
#include "zeus/device/rapl_zone.h"

namespace zeus {
namespace {

using testing::FakePowercapTree;
using testing::FakeSysfsTree;

// A /proc/<pid>/stat line whose process last ran on `cpu`; its comm holds ") (" to trip a
// parser that splits on the first parenthesis.
std::string stat_line(int pid, int cpu) {
  std::string line = std::to_string(pid) + " (evil) (name) S";
  for (int field = 4; field <= 38; ++field) line += " " + std::to_string(field);
  return line + " " + std::to_string(cpu) + " 0 0 0";
}

class RaplZoneIdTest : public ::testing::Test {
 protected:
  RaplZoneLookup lookup() const {
    return RaplZoneLookup{.proc_root = proc_.root() + "/proc",
                          .sysfs_root = sysfs_.root(),
                          .powercap_root = powercap_.root()};
  }
  void run_on(int pid, int cpu) const {
    proc_.write("proc/" + std::to_string(pid) + "/stat", stat_line(pid, cpu));
  }
  FakeSysfsTree sysfs_;
  FakeSysfsTree proc_;
  FakePowercapTree powercap_;
};

TEST(RaplZoneIdParseTest, StatLastCpuSkipsParenthesesInTheCommand) {
  EXPECT_EQ(stat_last_cpu(stat_line(7, 13)).value(), 13);
  auto short_line = stat_last_cpu("7 (x) S 1 2 3");
  ASSERT_FALSE(short_line.has_value());
  EXPECT_EQ(short_line.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(stat_last_cpu("no command here").has_value());
}

TEST(RaplZoneIdParseTest, MatchesPackageOrPackageDieNames) {
  const std::vector<std::pair<int, std::string>> zones = {
      {0, "package-1"}, {1, "package-0"}, {2, "package-0-die-1"}, {3, "psys"}};
  EXPECT_EQ(match_rapl_package_zone(zones, 0, std::nullopt), 1);
  EXPECT_EQ(match_rapl_package_zone(zones, 1, 0), 0);
  EXPECT_EQ(match_rapl_package_zone({{0, "package-0-die-0"}, {1, "package-0-die-1"}}, 0, 1), 1);
  EXPECT_EQ(match_rapl_package_zone(zones, 2, std::nullopt), std::nullopt);
}

TEST_F(RaplZoneIdTest, TwoSocketsWhoseZoneIdsAreNotTheirPackageIds) {
  // The firmware listed socket 1 first: intel-rapl:0 is package-1.
  powercap_.add_zone("intel-rapl:0", "package-1");
  powercap_.add_zone("intel-rapl:1", "package-0");
  for (int cpu = 0; cpu < 4; ++cpu) sysfs_.add_cpu(cpu, 0);
  for (int cpu = 4; cpu < 8; ++cpu) sysfs_.add_cpu(cpu, 1);
  run_on(100, 2);
  run_on(200, 6);
  EXPECT_EQ(get_current_rapl_zone_id(100, lookup()).value(), 1);
  EXPECT_EQ(get_current_rapl_zone_id(200, lookup()).value(), 0);
}

TEST_F(RaplZoneIdTest, MultiDieZonesMatchTheDie) {
  powercap_.add_zone("intel-rapl:0", "package-0-die-0");
  powercap_.add_zone("intel-rapl:1", "package-0-die-1");
  powercap_.add_subzone(1, 0, "dram");  // sub-zones are never candidates
  sysfs_.add_cpu(0, 0, 0);
  sysfs_.add_cpu(1, 0, 1);
  run_on(300, 1);
  EXPECT_EQ(get_current_rapl_zone_id(300, lookup()).value(), 1);
  run_on(300, 0);
  EXPECT_EQ(get_current_rapl_zone_id(300, lookup()).value(), 0);
  // open_rapl_cpus() lists the die zones as packages with the same ids.
  auto cpus = open_rapl_cpus(powercap_.root());
  ASSERT_TRUE(cpus.has_value()) << cpus.error().to_string();
  ASSERT_EQ(cpus->size(), 2u);
  EXPECT_EQ((*cpus)[1]->index(), 1);
  EXPECT_EQ((*cpus)[1]->name(), "package-0-die-1");
}

TEST_F(RaplZoneIdTest, WithoutDieIdOnlyThePackageNameMatches) {
  powercap_.add_zone("intel-rapl:3", "package-7");
  sysfs_.add_cpu(0, 7);
  run_on(400, 0);
  EXPECT_EQ(get_current_rapl_zone_id(400, lookup()).value(), 3);
}

TEST_F(RaplZoneIdTest, ThisProcessOnTheRealProc) {
  // Every CPU of this machine on package 0 of a fake tree: whichever CPU this test runs on,
  // its zone is found through the real /proc/self stat line.
  powercap_.add_package(0);
  const long cpus = sysconf(_SC_NPROCESSORS_CONF);
  for (long cpu = 0; cpu < cpus; ++cpu) sysfs_.add_cpu(static_cast<int>(cpu), 0);
  RaplZoneLookup where = lookup();
  where.proc_root = "/proc";
  EXPECT_EQ(get_current_rapl_zone_id(std::nullopt, where).value(), 0);
}

TEST_F(RaplZoneIdTest, ErrorsNameWhatIsMissing) {
  powercap_.add_package(0);
  sysfs_.add_cpu(0, 5);
  run_on(500, 0);
  auto no_zone = get_current_rapl_zone_id(500, lookup());
  ASSERT_FALSE(no_zone.has_value());
  EXPECT_EQ(no_zone.error().code, ErrorCode::kNotFound);
  EXPECT_NE(no_zone.error().message.find("package-5"), std::string::npos)
      << no_zone.error().message;

  auto no_process = get_current_rapl_zone_id(999999, lookup());
  ASSERT_FALSE(no_process.has_value());
  EXPECT_EQ(no_process.error().code, ErrorCode::kNotFound);
  EXPECT_NE(no_process.error().message.find("999999"), std::string::npos);

  run_on(600, 3);  // CPU 3 has no topology directory
  auto no_topology = get_current_rapl_zone_id(600, lookup());
  ASSERT_FALSE(no_topology.has_value());
  EXPECT_NE(no_topology.error().message.find("cpu3"), std::string::npos)
      << no_topology.error().message;
}

TEST(RaplPowercapRootTest, ContainerMountIsUsedOnlyWhenTheHostPathHasNoZones) {
  FakePowercapTree host;
  FakePowercapTree container;
  container.add_package(0);
  EXPECT_EQ(choose_powercap_root(host.root(), container.root()), container.root());
  host.add_package(0);
  EXPECT_EQ(choose_powercap_root(host.root(), container.root()), host.root());
  EXPECT_EQ(choose_powercap_root("/nonexistent/a", "/nonexistent/b"), "/nonexistent/a");
}

}  // namespace
}  // namespace zeus
