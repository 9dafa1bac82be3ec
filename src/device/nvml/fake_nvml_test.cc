// The fake libnvidia-ml.so.1 as the tests use it: it sees another process's
// change of its state file at the next call, a read-only client never writes the file, and
// failures and counter resets can be injected after N calls.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "device/nvml/fake_nvml_handle_for_test.h"
#include "device/nvml/nvml_gpu.h"
#include "testing/fake_nvml_state.h"

namespace zeus {
namespace {

using nvml::FakeNvmlHandle;
using ::zeus::testing::FakeNvmlDevice;
using ::zeus::testing::FakeNvmlEnvironment;

std::vector<std::unique_ptr<Gpu>> open_fake() {
  auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  EXPECT_TRUE(gpus.has_value()) << gpus.error().to_string();
  if (!gpus) return {};
  return std::move(*gpus);
}

// Runs `write` in a child process (as another client of the fake would) and waits for it.
template <typename Write>
void in_another_process(Write write) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    write();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

struct stat stat_of(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(stat(path.c_str(), &info), 0) << path;
  return info;
}

TEST(FakeNvmlTest, E_SeesAnotherProcesssChangeAtTheNextCall) {
  FakeNvmlHandle handle(ZEUS_FAKE_NVML_PATH);
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});  // draws 350 W
  auto gpus = open_fake();
  ASSERT_EQ(gpus.size(), 1u);
  ASSERT_EQ(gpus[0]->instant_power_mw().value(), 350000u);
  const uint64_t before_mj = gpus[0]->total_energy_mj().value();

  // Another process rewrites the file by hand: new power, no energy keys.
  in_another_process([&] {
    std::ofstream(fake.path() + ".new") << R"({"devices": [{"power_draw_mw": 200000}]})";
    std::rename((fake.path() + ".new").c_str(), fake.path().c_str());
  });
  EXPECT_EQ(gpus[0]->instant_power_mw().value(), 200000u);
  // The counter carries over instead of restarting from 0.
  EXPECT_GE(gpus[0]->total_energy_mj().value(), before_mj);

  // A lost GPU, written by another process, is seen at once too.
  in_another_process([&] {
    FakeNvmlDevice lost = FakeNvmlDevice::h100();
    lost.lost = true;
    auto written = testing::write_fake_nvml_state(fake.path(), {{lost}, {}, 0, {}});
    if (!written) _exit(1);
  });
  auto power = gpus[0]->instant_power_mw();
  ASSERT_FALSE(power.has_value());
  EXPECT_EQ(power.error().code, ErrorCode::kUnavailable);
}

TEST(FakeNvmlTest, E_ReadOnlyClientNeverWritesTheFile) {
  FakeNvmlHandle handle(ZEUS_FAKE_NVML_PATH);
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});
  const struct stat before = stat_of(fake.path());
  {
    auto gpus = open_fake();
    ASSERT_EQ(gpus.size(), 1u);
    ASSERT_TRUE(gpus[0]->total_energy_mj().has_value());
    ASSERT_TRUE(gpus[0]->power_limit_mw().has_value());
    ASSERT_TRUE(gpus[0]->instant_power_mw().has_value());
  }
  const struct stat after = stat_of(fake.path());
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);

  // A change is still written back (a new file replaces the old one).
  {
    auto gpus = open_fake();
    ASSERT_TRUE(gpus[0]->set_power_limit_mw(300000).has_value());
  }
  EXPECT_NE(stat_of(fake.path()).st_ino, before.st_ino);
  EXPECT_EQ(fake.read().devices[0].limit_mw, 300000u);
}

TEST(FakeNvmlTest, E_FailAfterCallsFailsOnlyLaterCalls) {
  FakeNvmlHandle handle(ZEUS_FAKE_NVML_PATH);
  FakeNvmlDevice device = FakeNvmlDevice::h100();
  device.fail_after_calls["nvmlDeviceGetTotalEnergyConsumption"] = {3, 15};
  FakeNvmlEnvironment fake({device});
  auto gpus = open_fake();  // call 1: the counter probe at open
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_TRUE(gpus[0]->has_energy_counter());
  EXPECT_TRUE(gpus[0]->total_energy_mj().has_value());  // 2
  EXPECT_TRUE(gpus[0]->total_energy_mj().has_value());  // 3
  auto lost = gpus[0]->total_energy_mj();               // 4: fails
  ASSERT_FALSE(lost.has_value());
  EXPECT_EQ(lost.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(gpus[0]->instant_power_mw().has_value());  // other calls are unaffected
}

TEST(FakeNvmlTest, E_EnergyResetAfterCallsRestartsTheCounterOnce) {
  FakeNvmlHandle handle(ZEUS_FAKE_NVML_PATH);
  FakeNvmlDevice device = FakeNvmlDevice::h100();
  device.energy_mj = 5.0e6;
  device.energy_reset_after_calls = 2;
  FakeNvmlEnvironment fake({device});
  auto gpus = open_fake();                                        // call 1 (probe)
  const uint64_t before_mj = gpus[0]->total_energy_mj().value();  // 2
  EXPECT_GE(before_mj, 5000000u);
  const uint64_t reset_mj = gpus[0]->total_energy_mj().value();  // 3: restarted from 0
  EXPECT_LT(reset_mj, before_mj);
  EXPECT_LT(reset_mj, 1000000u);
  EXPECT_GE(gpus[0]->total_energy_mj().value(), reset_mj);  // then monotone again
  EXPECT_FALSE(fake.read().devices[0].energy_reset_after_calls.has_value());
}

}  // namespace
}  // namespace zeus
