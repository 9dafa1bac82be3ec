// discover() on the fake AMD libraries: AMD SMI first, rocm_smi as the fallback, and the
// ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES selection.
#include <gtest/gtest.h>

#include <string>

#include "testing/fake_rocm_smi_state.h"
#include "zeus/device/device.h"

namespace zeus {
namespace {

using testing::FakeRocmSmiState;

DiscoverOptions amd_options() {
  DiscoverOptions options;
  options.nvml_path = "/nonexistent/libnvidia-ml.so.1";
  options.amdsmi_path = ZEUS_FAKE_AMDSMI_PATH;
  options.rocm_smi_path = ZEUS_FAKE_ROCM_SMI_PATH;
  options.want_cpus = false;
  return options;
}

const BackendReport* find_backend(const Devices& devices, const std::string& name) {
  for (const auto& b : devices.backends) {
    if (b.backend == name) return &b;
  }
  return nullptr;
}

TEST(AmdDiscoverTest, PrefersAmdSmiOverRocmSmi) {
  FakeRocmSmiState state(2);
  auto devices = discover(amd_options());
  ASSERT_TRUE(devices.has_value()) << devices.error().to_string();
  ASSERT_EQ(devices->gpus.size(), 2u);
  EXPECT_EQ(devices->gpus[0]->backend(), "amdsmi");
  const auto* amdsmi = find_backend(*devices, "amdsmi");
  ASSERT_NE(amdsmi, nullptr);
  EXPECT_TRUE(amdsmi->used);
  EXPECT_EQ(amdsmi->detail, "2 GPUs");
  const auto* rocm = find_backend(*devices, "rocm_smi");
  ASSERT_NE(rocm, nullptr);
  EXPECT_FALSE(rocm->used);
  EXPECT_EQ(rocm->detail, "skipped: AMD SMI was used");
}

TEST(AmdDiscoverTest, FallsBackToRocmSmiWithTheReason) {
  FakeRocmSmiState state(2);
  DiscoverOptions options = amd_options();
  options.amdsmi_path = "/nonexistent/libamd_smi.so";
  auto devices = discover(options);
  ASSERT_TRUE(devices.has_value()) << devices.error().to_string();
  ASSERT_EQ(devices->gpus.size(), 2u);
  EXPECT_EQ(devices->gpus[0]->backend(), "rocm_smi");
  const auto* amdsmi = find_backend(*devices, "amdsmi");
  ASSERT_NE(amdsmi, nullptr);
  EXPECT_FALSE(amdsmi->used);
  EXPECT_NE(amdsmi->detail.find("/nonexistent/libamd_smi.so"), std::string::npos) << amdsmi->detail;
  const auto* rocm = find_backend(*devices, "rocm_smi");
  ASSERT_NE(rocm, nullptr);
  EXPECT_TRUE(rocm->used);
  EXPECT_EQ(rocm->detail, "2 GPUs");
}

TEST(AmdDiscoverTest, AmdSmiTooOldFallsBackToRocmSmi) {
  FakeRocmSmiState state(1);
  state.set_field("amdsmi_abi", "23");
  auto devices = discover(amd_options());
  ASSERT_TRUE(devices.has_value()) << devices.error().to_string();
  ASSERT_EQ(devices->gpus.size(), 1u);
  EXPECT_EQ(devices->gpus[0]->backend(), "rocm_smi");
}

TEST(AmdDiscoverTest, HipVisibleDevicesCountsHipIndices) {
  FakeRocmSmiState state(3);
  state.patch_device(0, R"({"hip_id": 2})");
  state.patch_device(1, R"({"hip_id": 0})");
  state.patch_device(2, R"({"hip_id": 1})");
  DiscoverOptions options = amd_options();
  options.hip_visible_devices = "2,0";
  auto devices = discover(options);
  ASSERT_TRUE(devices.has_value()) << devices.error().to_string();
  ASSERT_EQ(devices->gpus.size(), 2u);
  EXPECT_EQ(devices->gpus[0]->physical_index(), 2);
  EXPECT_EQ(*devices->gpus[0]->pci_address(), "0000:01:00.0");  // AMD SMI's device 0
  EXPECT_EQ(devices->gpus[1]->physical_index(), 0);
  EXPECT_EQ(*devices->gpus[1]->pci_address(), "0000:02:00.0");
}

TEST(AmdDiscoverTest, CudaVisibleDevicesCountsWhenHipIsUnset) {
  FakeRocmSmiState state(3);
  DiscoverOptions options = amd_options();
  options.cuda_visible_devices = "1";
  auto devices = discover(options);
  ASSERT_TRUE(devices.has_value()) << devices.error().to_string();
  ASSERT_EQ(devices->gpus.size(), 1u);
  EXPECT_EQ(devices->gpus[0]->physical_index(), 1);
}

TEST(AmdDiscoverTest, RocrPicksFirstThenHipNumbersWhatIsLeft) {
  FakeRocmSmiState state(4);
  DiscoverOptions options = amd_options();
  options.rocr_visible_devices = "3,1";    // HIP then sees GPU 3 as 0 and GPU 1 as 1
  options.hip_visible_devices = "1";
  options.cuda_visible_devices = "0";      // ignored: HIP's is set
  auto devices = discover(options);
  ASSERT_TRUE(devices.has_value()) << devices.error().to_string();
  ASSERT_EQ(devices->gpus.size(), 1u);
  EXPECT_EQ(devices->gpus[0]->physical_index(), 1);
}

TEST(AmdDiscoverTest, RocrByUuidAndHipOutOfRangeIsAnError) {
  FakeRocmSmiState state(2);
  DiscoverOptions options = amd_options();
  options.rocr_visible_devices = "GPU-0000000000001001";
  auto one = discover(options);
  ASSERT_TRUE(one.has_value()) << one.error().to_string();
  ASSERT_EQ(one->gpus.size(), 1u);
  EXPECT_EQ(one->gpus[0]->physical_index(), 1);
  options.hip_visible_devices = "1";  // only one GPU is left after ROCR_VISIBLE_DEVICES
  auto bad = discover(options);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("HIP_VISIBLE_DEVICES=1"), std::string::npos)
      << bad.error().message;
}

}  // namespace
}  // namespace zeus
