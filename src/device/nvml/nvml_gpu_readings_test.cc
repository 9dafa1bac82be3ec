// NvmlGpu's optional readings through the fake libnvidia-ml.so.1: memory-scope average power
// and temperature.
#include <chrono>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "device/nvml/fake_nvml_handle_for_test.h"
#include "device/nvml/nvml_gpu.h"
#include "testing/fake_nvml_state.h"

namespace zeus {
namespace {

using nvml::open_fake_gpus;
using ::zeus::testing::FakeNvmlDevice;
using ::zeus::testing::FakeNvmlEnvironment;

TEST(NvmlGpuReadingsTest, MemoryPowerComesFromTheMemoryScopeNotTheDevice) {
  FakeNvmlDevice h100 = FakeNvmlDevice::h100();
  h100.memory_power_mw = 71500;
  FakeNvmlEnvironment fake({h100, FakeNvmlDevice::a100()});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0]->memory_average_power_mw().value(), 71500u);
  EXPECT_EQ(gpus[0]->average_power_mw().value(), 350000u);
  // The A100 has no memory scope: NotSupported, and its device power still reads.
  auto memory = gpus[1]->memory_average_power_mw();
  ASSERT_FALSE(memory.has_value());
  EXPECT_EQ(memory.error().code, ErrorCode::kNotSupported);
  EXPECT_NE(memory.error().message.find("memory power of GPU 1"), std::string::npos)
      << memory.error().message;
  EXPECT_EQ(gpus[1]->average_power_mw().value(), 250000u);
}

TEST(NvmlGpuReadingsTest, OldDriverWithoutFieldValuesHasNoMemoryPower) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});
  auto gpus = open_fake_gpus(ZEUS_FAKE_NVML_OLD_PATH);
  ASSERT_EQ(gpus.size(), 1u);
  auto memory = gpus[0]->memory_average_power_mw();
  ASSERT_FALSE(memory.has_value());
  EXPECT_EQ(memory.error().code, ErrorCode::kNotSupported);
}

TEST(NvmlGpuReadingsTest, TemperatureFollowsTheStateFile) {
  FakeNvmlDevice h100 = FakeNvmlDevice::h100();
  h100.temperature_c = 61;
  FakeNvmlEnvironment fake({h100});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]->temperature_c().value(), 61);
  h100.temperature_c = 74;
  ::zeus::testing::FakeNvmlState state;
  state.devices = {h100};
  fake.write(state);
  EXPECT_EQ(gpus[0]->temperature_c().value(), 74);
  EXPECT_EQ(fake.read().devices[0].temperature_c, 74);
}

TEST(NvmlGpuReadingsTest, TemperatureErrorsAreMapped) {
  FakeNvmlDevice h100 = FakeNvmlDevice::h100();
  h100.errors["nvmlDeviceGetTemperature"] = 15;  // GPU lost
  FakeNvmlEnvironment fake({h100});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  auto celsius = gpus[0]->temperature_c();
  ASSERT_FALSE(celsius.has_value());
  EXPECT_NE(celsius.error().message.find("temperature of GPU 0"), std::string::npos)
      << celsius.error().message;
}

TEST(NvmlGpuReadingsTest, PowerUpdatePeriodMakesReadingsStepAroundTheDraw) {
  FakeNvmlDevice h100 = FakeNvmlDevice::h100();
  h100.power_update_ms = 20;
  FakeNvmlEnvironment fake({h100});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  std::set<uint32_t> seen;
  for (int i = 0; i < 200 && seen.size() < 4; ++i) {
    seen.insert(gpus[0]->instant_power_mw().value());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(seen, (std::set<uint32_t>{349700, 349900, 350100, 350300}));
}

}  // namespace
}  // namespace zeus
