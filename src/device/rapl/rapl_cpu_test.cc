#include "device/rapl/rapl_cpu.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "testing/fake_sysfs.h"

namespace zeus {
namespace {

using testing::FakePowercapTree;

TEST(RaplCpuTest, FindsPackagesInIndexOrderAndSkipsOtherZones) {
  FakePowercapTree tree;
  tree.add_package(10, 5);
  tree.add_package(2, 7);
  tree.add_package(0, 9);
  tree.add_zone("intel-rapl:1", "psys");
  tree.add_zone("intel-rapl-mmio:0", "package-0");
  tree.add_dram(2);
  auto cpus = open_rapl_cpus(tree.root());
  ASSERT_TRUE(cpus.has_value()) << cpus.error().to_string();
  ASSERT_EQ(cpus->size(), 3u);
  EXPECT_EQ((*cpus)[0]->index(), 0);
  EXPECT_EQ((*cpus)[1]->index(), 2);
  EXPECT_EQ((*cpus)[2]->index(), 10);
  EXPECT_EQ((*cpus)[1]->name(), "package-2");
  EXPECT_FALSE((*cpus)[0]->has_dram());
  EXPECT_TRUE((*cpus)[1]->has_dram());
  EXPECT_FALSE((*cpus)[2]->has_dram());
}

TEST(RaplCpuTest, EnergyCountsFromCreation) {
  FakePowercapTree tree;
  tree.add_package(0, 1000000);
  tree.add_package(1, 50);
  tree.add_dram(0, 2000);
  auto cpus = open_rapl_cpus(tree.root());
  ASSERT_TRUE(cpus.has_value()) << cpus.error().to_string();
  Cpu& cpu0 = *(*cpus)[0];
  Cpu& cpu1 = *(*cpus)[1];
  EXPECT_EQ(*cpu0.package_energy_uj(), 0u);
  tree.set_package_energy_uj(0, 1500000);
  tree.set_package_energy_uj(1, 80);
  tree.set_dram_energy_uj(0, 2600);
  EXPECT_EQ(*cpu0.package_energy_uj(), 500000u);
  EXPECT_EQ(*cpu1.package_energy_uj(), 30u);
  EXPECT_EQ(*cpu0.dram_energy_uj(), 600u);
  tree.set_dram_energy_uj(0, 2700);
  EXPECT_EQ(*cpu0.dram_energy_uj(), 700u);
  EXPECT_EQ(*cpu0.package_energy_uj(), 500000u);
}

TEST(RaplCpuTest, TracksWraparound) {
  FakePowercapTree tree;
  constexpr uint64_t kMaxUj = 1000000;
  tree.add_package(0, 900000, kMaxUj);
  tree.add_dram(0, 999000, kMaxUj);
  auto cpus = open_rapl_cpus(tree.root());
  ASSERT_TRUE(cpus.has_value()) << cpus.error().to_string();
  Cpu& cpu = *(*cpus)[0];
  tree.set_package_energy_uj(0, 990000);
  EXPECT_EQ(*cpu.package_energy_uj(), 90000u);
  tree.set_package_energy_uj(0, 10000);  // wrapped: (1000000 - 990000) + 10000 more
  EXPECT_EQ(*cpu.package_energy_uj(), 110000u);
  tree.set_package_energy_uj(0, 20000);
  EXPECT_EQ(*cpu.package_energy_uj(), 120000u);
  tree.set_package_energy_uj(0, 5000);  // wraps a second time
  EXPECT_EQ(*cpu.package_energy_uj(), 120000u + (kMaxUj - 20000) + 5000);

  tree.set_dram_energy_uj(0, 1000);  // wrapped between creation and the first read
  EXPECT_EQ(*cpu.dram_energy_uj(), 2000u);
}

TEST(RaplCpuTest, DramWithoutZoneIsNotSupported) {
  FakePowercapTree tree;
  tree.add_package(0);
  tree.add_subzone(0, 0, "core");
  auto cpus = open_rapl_cpus(tree.root());
  ASSERT_TRUE(cpus.has_value()) << cpus.error().to_string();
  EXPECT_FALSE((*cpus)[0]->has_dram());
  auto dram = (*cpus)[0]->dram_energy_uj();
  ASSERT_FALSE(dram.has_value());
  EXPECT_EQ(dram.error().code, ErrorCode::kNotSupported);
}

TEST(RaplCpuTest, FindsDramAmongOtherSubzones) {
  FakePowercapTree tree;
  tree.add_package(0);
  tree.add_subzone(0, 0, "core", 100);
  tree.add_subzone(0, 1, "uncore", 200);
  tree.add_subzone(0, 2, "dram", 300);
  auto cpus = open_rapl_cpus(tree.root());
  ASSERT_TRUE(cpus.has_value()) << cpus.error().to_string();
  ASSERT_TRUE((*cpus)[0]->has_dram());
  testing::write_file(tree.subzone_dir(0, 2) + "/energy_uj", "345");
  testing::write_file(tree.subzone_dir(0, 0) + "/energy_uj", "999");
  EXPECT_EQ(*(*cpus)[0]->dram_energy_uj(), 45u);
}

TEST(RaplCpuTest, MissingOrEmptyTreeIsNotFound) {
  FakePowercapTree tree;
  for (const std::string& root : {tree.root() + "/absent", tree.root()}) {
    auto cpus = open_rapl_cpus(root);
    ASSERT_FALSE(cpus.has_value());
    EXPECT_EQ(cpus.error().code, ErrorCode::kNotFound);
    EXPECT_NE(cpus.error().message.find("no RAPL zones under " + root), std::string::npos);
    EXPECT_NE(cpus.error().message.find("intel_rapl"), std::string::npos);
  }
  tree.add_zone("intel-rapl:0", "psys");
  auto only_psys = open_rapl_cpus(tree.root());
  ASSERT_FALSE(only_psys.has_value());
  EXPECT_EQ(only_psys.error().code, ErrorCode::kNotFound);
}

TEST(RaplCpuTest, CorruptCounterIsAnError) {
  FakePowercapTree tree;
  tree.add_package(0, 10);
  auto cpus = open_rapl_cpus(tree.root());
  ASSERT_TRUE(cpus.has_value());
  testing::write_file(tree.package_dir(0) + "/energy_uj", "garbage");
  auto energy = (*cpus)[0]->package_energy_uj();
  ASSERT_FALSE(energy.has_value());
  EXPECT_EQ(energy.error().code, ErrorCode::kInternal);
}

// Exit codes of the unprivileged children below.
enum Outcome { kPermissionDeniedWithFix = 0, kSucceeded = 1, kOtherCode = 2, kNoFixInMessage = 3 };

int classify(const Error& error) {
  if (error.code != ErrorCode::kPermissionDenied) return kOtherCode;
  if (error.message.find("needs root since Linux 5.10") == std::string::npos ||
      error.message.find("CVE-2020-8694") == std::string::npos ||
      error.message.find("zeusd") == std::string::npos) {
    return kNoFixInMessage;
  }
  return kPermissionDeniedWithFix;
}

TEST(RaplCpuTest, UnreadableCounterAtOpenIsPermissionDenied) {
  FakePowercapTree tree;
  tree.add_package(0, 10);
  FakePowercapTree::make_unreadable(tree.package_dir(0) + "/energy_uj");
  int outcome = testing::run_unprivileged([&]() -> int {
    auto cpus = open_rapl_cpus(tree.root());
    return cpus.has_value() ? kSucceeded : classify(cpus.error());
  });
  EXPECT_EQ(outcome, kPermissionDeniedWithFix);
}

TEST(RaplCpuTest, CounterThatBecomesUnreadableIsPermissionDenied) {
  FakePowercapTree tree;
  tree.add_package(0, 10);
  tree.add_dram(0, 10);
  auto cpus = open_rapl_cpus(tree.root());
  ASSERT_TRUE(cpus.has_value());
  FakePowercapTree::make_unreadable(tree.subzone_dir(0, 0) + "/energy_uj");
  Cpu& cpu = *(*cpus)[0];
  int outcome = testing::run_unprivileged([&]() -> int {
    if (!cpu.package_energy_uj().has_value()) return kOtherCode;  // still readable
    auto dram = cpu.dram_energy_uj();
    return dram.has_value() ? kSucceeded : classify(dram.error());
  });
  EXPECT_EQ(outcome, kPermissionDeniedWithFix);
}

TEST(RaplCpuTest, ConcurrentReadersSeeMonotoneEnergy) {
  FakePowercapTree tree;
  tree.add_package(0, 100);
  auto cpus = open_rapl_cpus(tree.root());
  ASSERT_TRUE(cpus.has_value());
  tree.set_package_energy_uj(0, 400);
  Cpu& cpu = *(*cpus)[0];
  std::vector<std::thread> readers;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto energy = cpu.package_energy_uj();
        if (!energy || *energy != 300u) ++failures[t];
      }
    });
  }
  for (auto& reader : readers) reader.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << "reader " << t;
}

}  // namespace
}  // namespace zeus
