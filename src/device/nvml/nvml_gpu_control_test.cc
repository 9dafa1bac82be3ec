// NvmlGpu's persistence mode, clock control and cross-process visibility of what it sets,
// through the fake libnvidia-ml.so.1.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "device/nvml/nvml_gpu.h"
#include "testing/fake_nvml_state.h"

namespace zeus {
namespace {

using ::zeus::testing::FakeNvmlDevice;
using ::zeus::testing::FakeNvmlEnvironment;

std::vector<std::unique_ptr<Gpu>> open_fake_control() {
  auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  EXPECT_TRUE(gpus.has_value()) << gpus.error().to_string();
  if (!gpus) return {};
  return std::move(*gpus);
}

TEST(NvmlGpuControlTest, PersistenceModeRoundTrips) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});
  auto gpus = open_fake_control();
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_FALSE(gpus[0]->persistence_mode().value());
  ASSERT_TRUE(gpus[0]->set_persistence_mode(true).has_value());
  EXPECT_TRUE(gpus[0]->persistence_mode().value());
  EXPECT_TRUE(fake.read().devices[0].persistence);
  ASSERT_TRUE(gpus[0]->set_persistence_mode(false).has_value());
  EXPECT_FALSE(fake.read().devices[0].persistence);
}

TEST(NvmlGpuControlTest, ListsSupportedClocksHighestFirst) {
  FakeNvmlDevice device = FakeNvmlDevice::h100();
  device.memory_clocks_mhz = {1593, 2619};
  device.graphics_clocks_mhz.clear();
  for (uint32_t mhz = 210; mhz <= 1980; mhz += 5) device.graphics_clocks_mhz.push_back(mhz);
  ASSERT_GT(device.graphics_clocks_mhz.size(), 128u);  // more than the first buffer holds
  FakeNvmlEnvironment fake({device});
  auto gpus = open_fake_control();
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]->supported_memory_clocks_mhz().value(), (std::vector<uint32_t>{2619, 1593}));
  auto sm = gpus[0]->supported_sm_clocks_mhz();
  ASSERT_TRUE(sm.has_value()) << sm.error().to_string();
  ASSERT_EQ(sm->size(), device.graphics_clocks_mhz.size());
  EXPECT_EQ(sm->front(), 1980u);
  EXPECT_EQ(sm->back(), 210u);
}

TEST(NvmlGpuControlTest, LocksAndResetsClocks) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});
  auto gpus = open_fake_control();
  ASSERT_EQ(gpus.size(), 1u);
  Gpu& gpu = *gpus[0];
  ASSERT_TRUE(gpu.lock_sm_clocks_mhz(600, 1500).has_value());
  ASSERT_TRUE(gpu.lock_memory_clocks_mhz(1593, 2619).has_value());
  auto state = fake.read();
  EXPECT_EQ(state.devices[0].locked_sm_clocks_mhz, std::make_pair(600u, 1500u));
  EXPECT_EQ(state.devices[0].locked_memory_clocks_mhz, std::make_pair(1593u, 2619u));
  ASSERT_TRUE(gpu.reset_sm_clocks().has_value());
  ASSERT_TRUE(gpu.reset_memory_clocks().has_value());
  state = fake.read();
  EXPECT_FALSE(state.devices[0].locked_sm_clocks_mhz.has_value());
  EXPECT_FALSE(state.devices[0].locked_memory_clocks_mhz.has_value());
}

// The opt-in SM clock log records every lock and reset in order, per device; off by default.
TEST(NvmlGpuControlTest, SmClockLogRecordsTheSequenceWhenAskedFor) {
  testing::FakeNvmlState initial;
  initial.devices = {FakeNvmlDevice::h100(), FakeNvmlDevice::h100()};
  initial.sm_clock_log.emplace();
  FakeNvmlEnvironment fake(initial);
  auto gpus = open_fake_control();
  ASSERT_EQ(gpus.size(), 2u);
  ASSERT_TRUE(gpus[0]->lock_sm_clocks_mhz(1980, 1980).has_value());
  ASSERT_TRUE(gpus[1]->lock_sm_clocks_mhz(600, 1500).has_value());
  ASSERT_TRUE(gpus[0]->lock_sm_clocks_mhz(1200, 1200).has_value());
  ASSERT_FALSE(gpus[0]->lock_sm_clocks_mhz(100, 100).has_value());  // refused: not logged
  ASSERT_TRUE(gpus[0]->reset_sm_clocks().has_value());
  ASSERT_TRUE(gpus[0]->lock_memory_clocks_mhz(2619, 2619).has_value());  // not an SM clock
  const auto state = fake.read();
  ASSERT_TRUE(state.sm_clock_log.has_value());
  ASSERT_EQ(state.sm_clock_log->size(), 4u);
  EXPECT_EQ(state.sm_clock_log->at(1).index, 1);
  EXPECT_EQ(state.sm_clock_log->at(1).min_mhz, 600u);
  EXPECT_EQ(state.sm_clock_log->at(1).max_mhz, 1500u);
  EXPECT_EQ(state.sm_clock_sequence_mhz(0), (std::vector<uint32_t>{1980, 1200, 0}));
  EXPECT_EQ(state.sm_clock_sequence_mhz(1), (std::vector<uint32_t>{1500}));

  FakeNvmlEnvironment quiet({FakeNvmlDevice::h100()});  // without the key: nothing is recorded
  auto quiet_gpus = open_fake_control();
  ASSERT_EQ(quiet_gpus.size(), 1u);
  ASSERT_TRUE(quiet_gpus[0]->lock_sm_clocks_mhz(1980, 1980).has_value());
  EXPECT_FALSE(quiet.read().sm_clock_log.has_value());
  EXPECT_TRUE(quiet.read().sm_clock_sequence_mhz(0).empty());
}

TEST(NvmlGpuControlTest, BadClockLocksAreInvalidArguments) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});
  auto gpus = open_fake_control();
  ASSERT_EQ(gpus.size(), 1u);
  auto reversed = gpus[0]->lock_sm_clocks_mhz(1500, 600);  // caught before NVML
  ASSERT_FALSE(reversed.has_value());
  EXPECT_EQ(reversed.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(reversed.error().message.find("1500 MHz"), std::string::npos);
  auto too_high = gpus[0]->lock_memory_clocks_mhz(1593, 9999);  // refused by NVML
  ASSERT_FALSE(too_high.has_value());
  EXPECT_EQ(too_high.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(too_high.error().message.find("NVML_ERROR_INVALID_ARGUMENT"), std::string::npos);
  EXPECT_FALSE(fake.read().devices[0].locked_memory_clocks_mhz.has_value());
}

TEST(NvmlGpuControlTest, ClockLockWithoutPermissionIsPermissionDenied) {
  FakeNvmlDevice device = FakeNvmlDevice::h100();
  device.errors = {{"nvmlDeviceSetGpuLockedClocks", 4}, {"nvmlDeviceSetPersistenceMode", 4}};
  FakeNvmlEnvironment fake({device});
  auto gpus = open_fake_control();
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]->lock_sm_clocks_mhz(600, 1500).error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(gpus[0]->set_persistence_mode(true).error().code, ErrorCode::kPermissionDenied);
}

// A limit set by one process is what another process reads, also after the first one died.
TEST(NvmlGpuControlTest, LimitsSetInAChildProcessAreSeenAfterItDies) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100(), FakeNvmlDevice::h100()});
  auto gpus = open_fake_control();  // opened before the child changes anything
  ASSERT_EQ(gpus.size(), 2u);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto child_gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
    bool ok = child_gpus.has_value() && (*child_gpus)[1]->set_power_limit_mw(450000) &&
              (*child_gpus)[1]->set_power_limit_mw(400000);
    _exit(ok ? 0 : 1);  // no nvmlShutdown, no destructors: as if killed
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  auto state = fake.read();
  EXPECT_EQ(state.devices[0].limit_mw, 700000u);
  EXPECT_EQ(state.devices[1].limit_mw, 400000u);
  ASSERT_EQ(state.set_power_limit_log.size(), 2u);
  EXPECT_EQ(state.set_power_limit_log[0].index, 1);
  EXPECT_EQ(state.set_power_limit_log[0].limit_mw, 450000u);
  EXPECT_EQ(state.set_power_limit_log[1].limit_mw, 400000u);

  // This process sees the child's limit after its next nvmlInit...
  auto reopened = open_fake_control();
  ASSERT_EQ(reopened.size(), 2u);
  EXPECT_EQ(reopened[1]->power_limit_mw().value(), 400000u);
  // ...and its own change merges with the child's instead of overwriting it.
  ASSERT_TRUE(gpus[0]->set_power_limit_mw(300000).has_value());
  state = fake.read();
  EXPECT_EQ(state.devices[0].limit_mw, 300000u);
  EXPECT_EQ(state.devices[1].limit_mw, 400000u);
  EXPECT_EQ(state.set_power_limit_log.size(), 3u);
}

}  // namespace
}  // namespace zeus
