#include "device/nvml/nvml_library.h"

#include <gtest/gtest.h>

#include "device/nvml/fake_nvml_handle_for_test.h"
#include "device/nvml/nvml_gpu.h"
#include "testing/fake_nvml_state.h"

namespace zeus::nvml {
namespace {

using ::zeus::testing::FakeNvmlDevice;
using ::zeus::testing::FakeNvmlEnvironment;
using ::zeus::testing::FakeNvmlState;

TEST(NvmlLibraryTest, MissingLibraryIsUnavailableAndNamesTheFix) {
  auto gpus = open_nvml_gpus("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(gpus.has_value());
  EXPECT_EQ(gpus.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(gpus.error().message.find("ZEUS_NVML_PATH"), std::string::npos);
  EXPECT_NE(gpus.error().message.find("install the NVIDIA driver"), std::string::npos);
}

TEST(NvmlLibraryTest, LibraryWithoutNvmlSymbolsIsUnavailable) {
  auto library = NvmlLibrary::load("libm.so.6");
  ASSERT_FALSE(library.has_value());
  EXPECT_EQ(library.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(library.error().message.find("lacks nvmlInit"), std::string::npos);
}

TEST(NvmlLibraryTest, InitFailureIsUnavailableWithNvmlsMessage) {
  FakeNvmlState state;
  state.devices = {FakeNvmlDevice::h100()};
  state.init_error = kNvmlErrorDriverNotLoaded;
  FakeNvmlEnvironment fake(state);
  auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  ASSERT_FALSE(gpus.has_value());
  EXPECT_EQ(gpus.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(gpus.error().message.find("Driver Not Loaded"), std::string::npos);
  EXPECT_NE(gpus.error().message.find("NVML_ERROR_DRIVER_NOT_LOADED"), std::string::npos);

  state.init_error = kNvmlErrorNoPermission;
  fake.write(state);
  auto denied = NvmlLibrary::load(ZEUS_FAKE_NVML_PATH);
  ASSERT_FALSE(denied.has_value());
  EXPECT_EQ(denied.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(denied.error().message.find("CAP_SYS_ADMIN"), std::string::npos);
}

TEST(NvmlLibraryTest, PrefersV2SymbolsAndShutsDownWithTheLastUser) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100(), FakeNvmlDevice::a100()});
  FakeNvmlHandle handle(ZEUS_FAKE_NVML_PATH);
  {
    auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
    ASSERT_TRUE(gpus.has_value()) << gpus.error().to_string();
    EXPECT_EQ(gpus->size(), 2u);
    EXPECT_EQ(handle.calls("nvmlInit_v2"), 1);
    EXPECT_EQ(handle.calls("nvmlInit"), 0);
    EXPECT_EQ(handle.calls("nvmlDeviceGetCount_v2"), 1);
    EXPECT_EQ(handle.calls("nvmlDeviceGetCount"), 0);
    EXPECT_EQ(handle.calls("nvmlDeviceGetHandleByIndex_v2"), 2);
    EXPECT_EQ(handle.calls("nvmlDeviceGetHandleByIndex"), 0);
    // Both GPUs share one library: destroying one does not shut NVML down.
    gpus->pop_back();
    EXPECT_EQ(handle.calls("nvmlShutdown"), 0);
  }
  EXPECT_EQ(handle.calls("nvmlShutdown"), 1);
}

TEST(NvmlLibraryTest, OldDriverFallsBackToPlainNames) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});
  FakeNvmlHandle handle(ZEUS_FAKE_NVML_OLD_PATH);
  auto library = NvmlLibrary::load(ZEUS_FAKE_NVML_OLD_PATH);
  ASSERT_TRUE(library.has_value()) << library.error().to_string();
  EXPECT_EQ(handle.calls("nvmlInit"), 1);
  EXPECT_EQ((*library)->api().device_get_total_energy_consumption, nullptr);
  EXPECT_EQ((*library)->api().device_get_field_values, nullptr);
  EXPECT_NE((*library)->api().device_get_power_usage, nullptr);
  unsigned int count = 0;
  ASSERT_TRUE((*library)->check((*library)->api().device_get_count(&count), "counting"));
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(handle.calls("nvmlDeviceGetCount"), 1);
}

TEST(NvmlLibraryTest, CheckMapsFailuresWithTheLibrarysMessage) {
  FakeNvmlEnvironment fake;
  auto library = NvmlLibrary::load(ZEUS_FAKE_NVML_PATH);
  ASSERT_TRUE(library.has_value()) << library.error().to_string();
  EXPECT_TRUE((*library)->check(kNvmlSuccess, "anything").has_value());
  auto failed = (*library)->check(kNvmlErrorInUse, "locking the clocks of GPU 3");
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(failed.error().message.rfind("locking the clocks of GPU 3 failed: In use by another "
                                         "client (NVML_ERROR_IN_USE).",
                                         0),
            0u)
      << failed.error().message;
  Error missing = (*library)->missing_function("nvmlDeviceFoo", "fooing GPU 0");
  EXPECT_EQ(missing.code, ErrorCode::kNotSupported);
  EXPECT_NE(missing.message.find("function not found: nvmlDeviceFoo"), std::string::npos);
}

}  // namespace
}  // namespace zeus::nvml
