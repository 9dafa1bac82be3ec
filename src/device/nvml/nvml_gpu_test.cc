#include "device/nvml/nvml_gpu.h"

#include <cstdlib>
#include <optional>

#include <gtest/gtest.h>

#include "device/nvml/fake_nvml_handle_for_test.h"
#include "device/nvml/nvml_error.h"
#include "testing/fake_nvml_state.h"

namespace zeus {
namespace {

using nvml::FakeNvmlHandle;
using nvml::open_fake_gpus;
using ::zeus::testing::FakeNvmlDevice;
using ::zeus::testing::FakeNvmlEnvironment;
using ::zeus::testing::FakeNvmlState;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(NvmlGpuTest, DescribesEveryGpuInIndexOrder) {
  FakeNvmlDevice second = FakeNvmlDevice::p100();
  second.uuid = "GPU-second";
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100(), second});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0]->vendor(), GpuVendor::kNvidia);
  EXPECT_EQ(gpus[0]->name(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpus[0]->uuid(), "GPU-00000000-fake-0000-0000-000000000000");
  EXPECT_EQ(gpus[0]->architecture(), GpuArchitecture::kHopper);
  EXPECT_EQ(gpus[0]->physical_index(), 0);
  EXPECT_EQ(gpus[1]->name(), "Tesla P100-PCIE-16GB");
  EXPECT_EQ(gpus[1]->uuid(), "GPU-second");
  EXPECT_EQ(gpus[1]->architecture(), GpuArchitecture::kPascal);
  EXPECT_EQ(gpus[1]->physical_index(), 1);
}

TEST(NvmlGpuTest, WithoutAStateFileTheFakeIsOneH100KeptInMemory) {
  const char* saved = std::getenv("ZEUS_FAKE_NVML_STATE");
  std::optional<std::string> previous;
  if (saved != nullptr) previous = saved;
  unsetenv("ZEUS_FAKE_NVML_STATE");
  {
    auto gpus = open_fake_gpus();
    ASSERT_EQ(gpus.size(), 1u);
    EXPECT_EQ(gpus[0]->name(), "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpus[0]->power_limit_range_mw()->max_mw, 700000u);
    EXPECT_EQ(gpus[0]->instant_power_mw().value(), 350000u);
    ASSERT_TRUE(gpus[0]->set_power_limit_mw(500000).has_value());
    EXPECT_EQ(gpus[0]->power_limit_mw().value(), 500000u);
  }
  if (previous) setenv("ZEUS_FAKE_NVML_STATE", previous->c_str(), 1);
}

TEST(NvmlGpuTest, NoGpusIsAnEmptyList) {
  FakeNvmlEnvironment fake(std::vector<FakeNvmlDevice>{});
  auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  ASSERT_TRUE(gpus.has_value()) << gpus.error().to_string();
  EXPECT_TRUE(gpus->empty());
}

TEST(NvmlGpuTest, ReportsLimitsAndPowerInMilliwatts) {
  FakeNvmlDevice device = FakeNvmlDevice::v100();  // 150-300 W, draws 200 W
  device.default_limit_mw = 250000;
  device.limit_mw = 275000;
  FakeNvmlEnvironment fake({device});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  Gpu& gpu = *gpus[0];
  auto range = gpu.power_limit_range_mw();
  ASSERT_TRUE(range.has_value());
  EXPECT_EQ(range->min_mw, 150000u);
  EXPECT_EQ(range->max_mw, 300000u);
  EXPECT_EQ(gpu.default_power_limit_mw().value(), 250000u);
  EXPECT_EQ(gpu.power_limit_mw().value(), 275000u);
  EXPECT_EQ(gpu.instant_power_mw().value(), 200000u);
  EXPECT_EQ(gpu.average_power_mw().value(), 200000u);
}

TEST(NvmlGpuTest, SetLimitRoundTripsCapsPowerAndIsWrittenBack) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});  // 200-700 W, draws 350 W
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  Gpu& gpu = *gpus[0];
  ASSERT_TRUE(gpu.set_power_limit_mw(300000).has_value());
  EXPECT_EQ(gpu.power_limit_mw().value(), 300000u);
  EXPECT_EQ(gpu.instant_power_mw().value(), 300000u);  // min(draw, limit)
  FakeNvmlState state = fake.read();
  EXPECT_EQ(state.devices[0].limit_mw, 300000u);

  ASSERT_TRUE(gpu.reset_power_limit().has_value());
  EXPECT_EQ(gpu.power_limit_mw().value(), 700000u);
  EXPECT_EQ(gpu.instant_power_mw().value(), 350000u);
  state = fake.read();
  ASSERT_EQ(state.set_power_limit_log.size(), 2u);
  EXPECT_EQ(state.set_power_limit_log[0].limit_mw, 300000u);
  EXPECT_EQ(state.set_power_limit_log[1].limit_mw, 700000u);
  EXPECT_EQ(state.set_power_limit_log[1].index, 0);
}

TEST(NvmlGpuTest, LimitOutsideTheRangeIsRejectedBeforeTheDriver) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});
  FakeNvmlHandle handle(ZEUS_FAKE_NVML_PATH);
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  for (uint32_t limit_mw : {150000u, 199999u, 700001u}) {
    auto set = gpus[0]->set_power_limit_mw(limit_mw);
    ASSERT_FALSE(set.has_value());
    EXPECT_EQ(set.error().code, ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(set.error().message, "[200 W, 700 W]")) << set.error().message;
  }
  EXPECT_TRUE(contains(gpus[0]->set_power_limit_mw(150000).error().message, "150 W"));
  EXPECT_TRUE(contains(gpus[0]->set_power_limit_mw(150500).error().message, "150.5 W"));
  EXPECT_EQ(handle.calls("nvmlDeviceSetPowerManagementLimit"), 0);
  EXPECT_TRUE(gpus[0]->set_power_limit_mw(200000).has_value());
  EXPECT_TRUE(gpus[0]->set_power_limit_mw(700000).has_value());
  EXPECT_EQ(handle.calls("nvmlDeviceSetPowerManagementLimit"), 2);
  // The range is read once and cached.
  EXPECT_EQ(handle.calls("nvmlDeviceGetPowerManagementLimitConstraints"), 1);
}

TEST(NvmlGpuTest, EveryInjectedNvmlErrorIsMappedWithNvmlsMessage) {
  FakeNvmlDevice device = FakeNvmlDevice::h100();
  FakeNvmlEnvironment fake({device});
  for (nvml::nvmlReturn_t code :
       {1, 2, 3, 4, 6, 8, 9, 10, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 24, 999}) {
    device.errors = {{"nvmlDeviceGetPowerManagementLimit", code}};
    fake.write({{device}, {}, 0, {}});
    auto gpus = open_fake_gpus();
    ASSERT_EQ(gpus.size(), 1u);
    auto limit = gpus[0]->power_limit_mw();
    ASSERT_FALSE(limit.has_value()) << code;
    EXPECT_EQ(limit.error().code, nvml::nvml_error_code(code)) << code;
    EXPECT_TRUE(contains(limit.error().message, nvml::nvml_return_name(code))) << code;
    EXPECT_TRUE(contains(limit.error().message, "reading the power limit of GPU 0")) << code;
    EXPECT_TRUE(contains(limit.error().message, std::string(nvml::nvml_fix(code)))) << code;
  }
}

TEST(NvmlGpuTest, SettingALimitWithoutPermissionNamesRootAndCapSysAdmin) {
  FakeNvmlDevice device = FakeNvmlDevice::h100();
  device.errors = {{"nvmlDeviceSetPowerManagementLimit", nvml::kNvmlErrorNoPermission}};
  FakeNvmlEnvironment fake({device});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  auto set = gpus[0]->set_power_limit_mw(300000);
  ASSERT_FALSE(set.has_value());
  EXPECT_EQ(set.error().code, ErrorCode::kPermissionDenied);
  EXPECT_TRUE(contains(set.error().message, "setting the power limit to 300 W of GPU 0"));
  EXPECT_TRUE(contains(set.error().message, "Insufficient Permissions"));
  EXPECT_TRUE(contains(set.error().message, "needs root or CAP_SYS_ADMIN"));
  EXPECT_EQ(fake.read().devices[0].limit_mw, 700000u);  // unchanged
  EXPECT_TRUE(fake.read().set_power_limit_log.empty());
}

TEST(NvmlGpuTest, GlobalErrorsApplyToEveryDevice) {
  FakeNvmlState state;
  state.devices = {FakeNvmlDevice::h100(), FakeNvmlDevice::h100()};
  state.errors = {{"nvmlDeviceGetPowerUsage", nvml::kNvmlErrorNotSupported},
                  {"nvmlDeviceGetFieldValues", nvml::kNvmlErrorNotSupported}};
  FakeNvmlEnvironment fake(state);
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 2u);
  for (auto& gpu : gpus) {
    auto power = gpu->instant_power_mw();
    ASSERT_FALSE(power.has_value());
    EXPECT_EQ(power.error().code, ErrorCode::kNotSupported);
  }
}

TEST(NvmlGpuTest, LostGpuIsUnavailable) {
  FakeNvmlDevice device = FakeNvmlDevice::h100();
  FakeNvmlEnvironment fake({device});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  device.lost = true;
  fake.write({{device}, {}, 0, {}});
  // A new open (nvmlInit re-reads the state) fails, and the GPU already open is gone too.
  auto reopened = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  ASSERT_FALSE(reopened.has_value());
  EXPECT_EQ(reopened.error().code, ErrorCode::kUnavailable);
  for (auto result :
       {gpus[0]->power_limit_mw(), gpus[0]->instant_power_mw(), gpus[0]->average_power_mw()}) {
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code, ErrorCode::kUnavailable);
    EXPECT_TRUE(contains(result.error().message, "fell off the bus")) << result.error().message;
  }
  auto energy = gpus[0]->total_energy_mj();
  ASSERT_FALSE(energy.has_value());
  EXPECT_EQ(energy.error().code, ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace zeus
