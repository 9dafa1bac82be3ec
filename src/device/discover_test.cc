#include <gtest/gtest.h>

#include "testing/fake_nvml_state.h"
#include "testing/fake_sysfs.h"
#include "zeus/device/device.h"

namespace zeus {
namespace {

using testing::FakeNvmlDevice;
using testing::FakeNvmlEnvironment;

DiscoverOptions fake_options(const std::string& powercap_root = "/nonexistent/powercap") {
  DiscoverOptions options;
  options.nvml_path = ZEUS_FAKE_NVML_PATH;
  options.rocm_smi_path = "/nonexistent/librocm_smi64.so";
  options.amdsmi_path = "/nonexistent/libamd_smi.so";
  options.powercap_root = powercap_root;
  return options;
}

const BackendReport* find_backend(const Devices& devices, const std::string& name) {
  for (const auto& b : devices.backends) {
    if (b.backend == name) return &b;
  }
  return nullptr;
}

TEST(VisibleDevicesTest, ParsesIndexLists) {
  EXPECT_EQ(*parse_visible_devices("2,3", "CUDA_VISIBLE_DEVICES", {}), (std::vector<int>{2, 3}));
  EXPECT_EQ(*parse_visible_devices(" 1 , 0 ", "CUDA_VISIBLE_DEVICES", {}),
            (std::vector<int>{1, 0}));
  EXPECT_TRUE(parse_visible_devices("", "CUDA_VISIBLE_DEVICES", {})->empty());
}

TEST(VisibleDevicesTest, RejectsMalformedAndMig) {
  for (const char* bad : {"0,,1", "a", "1,x", "0,0", "1.5"}) {
    auto parsed = parse_visible_devices(bad, "CUDA_VISIBLE_DEVICES", {});
    ASSERT_FALSE(parsed.has_value()) << bad;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument) << bad;
    EXPECT_NE(parsed.error().message.find("CUDA_VISIBLE_DEVICES"), std::string::npos);
  }
  auto mig = parse_visible_devices("MIG-GPU-1234/1/0", "CUDA_VISIBLE_DEVICES", {});
  ASSERT_FALSE(mig.has_value());
  EXPECT_NE(mig.error().message.find("MIG"), std::string::npos);
}

TEST(VisibleDevicesTest, ResolvesUuids) {
  std::vector<std::string> uuids = {"GPU-aaaa-1111", "GPU-bbbb-2222"};
  EXPECT_EQ(*parse_visible_devices("GPU-bbbb-2222,0", "CUDA_VISIBLE_DEVICES", uuids),
            (std::vector<int>{1, 0}));
  EXPECT_EQ(*parse_visible_devices("GPU-bbbb", "CUDA_VISIBLE_DEVICES", uuids),
            (std::vector<int>{1}));
  EXPECT_EQ(parse_visible_devices("GPU-cccc", "CUDA_VISIBLE_DEVICES", uuids).error().code,
            ErrorCode::kNotFound);
}

TEST(DiscoverTest, FindsFakeNvidiaGpusAndReportsSkippedBackends) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100(), FakeNvmlDevice::v100()});
  auto devices = discover(fake_options());
  ASSERT_TRUE(devices.has_value()) << devices.error().to_string();
  ASSERT_EQ(devices->gpus.size(), 2u);
  EXPECT_EQ(devices->gpus[0]->architecture(), GpuArchitecture::kHopper);
  EXPECT_EQ(devices->gpus[1]->architecture(), GpuArchitecture::kVolta);
  const auto* nvml = find_backend(*devices, "nvml");
  ASSERT_NE(nvml, nullptr);
  EXPECT_TRUE(nvml->used);
  EXPECT_EQ(nvml->detail, "2 GPUs");
  for (const char* name : {"amdsmi", "rocm_smi"}) {
    const auto* amd = find_backend(*devices, name);
    ASSERT_NE(amd, nullptr) << name;
    EXPECT_FALSE(amd->used) << name;
  }
  const auto* rapl = find_backend(*devices, "rapl");
  ASSERT_NE(rapl, nullptr);
  EXPECT_FALSE(rapl->used);
  EXPECT_TRUE(devices->cpus.empty());
}

TEST(DiscoverTest, CudaVisibleDevicesReordersAndFilters) {
  FakeNvmlDevice a = FakeNvmlDevice::h100(), b = FakeNvmlDevice::a100(), c = FakeNvmlDevice::v100();
  FakeNvmlEnvironment fake({a, b, c});
  DiscoverOptions options = fake_options();
  options.cuda_visible_devices = "2,0";
  auto devices = discover(options);
  ASSERT_TRUE(devices.has_value()) << devices.error().to_string();
  ASSERT_EQ(devices->gpus.size(), 2u);
  EXPECT_EQ(devices->gpus[0]->physical_index(), 2);
  EXPECT_EQ(devices->gpus[0]->architecture(), GpuArchitecture::kVolta);
  EXPECT_EQ(devices->gpus[1]->physical_index(), 0);
}

TEST(DiscoverTest, VisibleDevicesNamingAMissingGpuIsAnError) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});
  DiscoverOptions options = fake_options();
  options.cuda_visible_devices = "0,1";
  auto devices = discover(options);
  ASSERT_FALSE(devices.has_value());
  EXPECT_EQ(devices.error().code, ErrorCode::kNotFound);
  EXPECT_NE(devices.error().message.find("only 1 GPU"), std::string::npos)
      << devices.error().message;
}

TEST(DiscoverTest, MissingLibrariesLeaveNoGpusWithReasons) {
  DiscoverOptions options = fake_options();
  options.nvml_path = "/nonexistent/libnvidia-ml.so.1";
  auto devices = discover(options);
  ASSERT_TRUE(devices.has_value());
  EXPECT_TRUE(devices->gpus.empty());
  const auto* nvml = find_backend(*devices, "nvml");
  ASSERT_NE(nvml, nullptr);
  EXPECT_FALSE(nvml->used);
  EXPECT_NE(nvml->detail.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << nvml->detail;
}

TEST(DiscoverTest, FindsRaplPackages) {
  testing::FakePowercapTree tree;
  tree.add_package(0, 1000);
  tree.add_dram(0, 10);
  tree.add_package(1, 2000);
  DiscoverOptions options = fake_options(tree.root());
  options.want_gpus = false;
  auto devices = discover(options);
  ASSERT_TRUE(devices.has_value());
  ASSERT_EQ(devices->cpus.size(), 2u);
  EXPECT_TRUE(devices->cpus[0]->has_dram());
  EXPECT_FALSE(devices->cpus[1]->has_dram());
  EXPECT_TRUE(find_backend(*devices, "rapl")->used);
  EXPECT_EQ(find_backend(*devices, "nvml"), nullptr);
}

TEST(DiscoverTest, FromEnvironmentReadsOverrides) {
  setenv("ZEUS_NVML_PATH", "/opt/x/libnvidia-ml.so.1", 1);
  setenv("CUDA_VISIBLE_DEVICES", "1", 1);
  unsetenv("HIP_VISIBLE_DEVICES");
  DiscoverOptions options = DiscoverOptions::from_environment();
  unsetenv("ZEUS_NVML_PATH");
  unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(options.nvml_path, "/opt/x/libnvidia-ml.so.1");
  EXPECT_EQ(options.cuda_visible_devices, std::optional<std::string>("1"));
  EXPECT_FALSE(options.hip_visible_devices.has_value());
}

}  // namespace
}  // namespace zeus

namespace zeus {
namespace {

// "-1" and Slurm's "NoDevFiles" end the list, as in CUDA: no GPU visible.
TEST(VisibleDevices, MinusOneAndNoDevFilesHideTheRest) {
  EXPECT_TRUE(parse_visible_devices("-1", "CUDA_VISIBLE_DEVICES", {})->empty());
  EXPECT_TRUE(parse_visible_devices("NoDevFiles", "CUDA_VISIBLE_DEVICES", {})->empty());
  EXPECT_EQ(*parse_visible_devices("1,-1,0", "CUDA_VISIBLE_DEVICES", {}), (std::vector<int>{1}));
  EXPECT_FALSE(parse_visible_devices("-", "CUDA_VISIBLE_DEVICES", {}).has_value());
}

// An ambiguous UUID prefix is an error naming the candidates.
TEST(VisibleDevices, AmbiguousUuidPrefixIsAnError) {
  const std::vector<std::string> uuids = {"GPU-aaaaaaaa-1111", "GPU-bbbbbbbb-1111", "GPU-0aaaaaaa-2222",
                                          "GPU-0bbbbbbb-3333"};
  auto ambiguous = parse_visible_devices("GPU-0", "CUDA_VISIBLE_DEVICES", uuids);
  ASSERT_FALSE(ambiguous.has_value());
  EXPECT_NE(ambiguous.error().message.find("matches 2 GPUs"), std::string::npos);
  EXPECT_NE(ambiguous.error().message.find("GPU-0aaaaaaa-2222"), std::string::npos);
  EXPECT_FALSE(parse_visible_devices("GPU-", "CUDA_VISIBLE_DEVICES", uuids).has_value());
  EXPECT_EQ(*parse_visible_devices("GPU-0b", "CUDA_VISIBLE_DEVICES", uuids), (std::vector<int>{3}));
  EXPECT_EQ(*parse_visible_devices("GPU-bbbbbbbb-1111,GPU-a", "CUDA_VISIBLE_DEVICES", uuids),
            (std::vector<int>{1, 0}));
}

}  // namespace
}  // namespace zeus

namespace zeus {
namespace {

// A lost GPU is skipped with its reason; the healthy ones stay measurable.
TEST(DiscoverTest, OneLostGpuDoesNotHideTheOthers) {
  FakeNvmlDevice healthy = FakeNvmlDevice::h100();
  FakeNvmlDevice lost = FakeNvmlDevice::h100();
  lost.lost = true;
  FakeNvmlEnvironment fake({healthy, lost});
  auto devices = discover(fake_options());
  ASSERT_TRUE(devices.has_value()) << devices.error().to_string();
  ASSERT_EQ(devices->gpus.size(), 1u);
  EXPECT_EQ(devices->gpus[0]->physical_index(), 0);
  EXPECT_TRUE(devices->gpus[0]->total_energy_mj().has_value());
  const auto* nvml = find_backend(*devices, "nvml");
  ASSERT_NE(nvml, nullptr);
  EXPECT_TRUE(nvml->used);
  EXPECT_NE(nvml->detail.find("1 GPU; GPU 1 skipped: "), std::string::npos) << nvml->detail;
  EXPECT_NE(nvml->detail.find("NVML_ERROR_GPU_IS_LOST"), std::string::npos) << nvml->detail;

  DiscoverOptions only_healthy = fake_options();
  only_healthy.cuda_visible_devices = "0";
  auto visible = discover(only_healthy);
  ASSERT_TRUE(visible.has_value()) << visible.error().to_string();
  ASSERT_EQ(visible->gpus.size(), 1u);
  EXPECT_EQ(visible->gpus[0]->physical_index(), 0);

  // Naming the lost GPU is an error that says why it cannot be used (never another GPU).
  DiscoverOptions names_lost = fake_options();
  names_lost.cuda_visible_devices = "1";
  auto refused = discover(names_lost);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(refused.error().message.find("GPU 1, which cannot be used"), std::string::npos)
      << refused.error().message;
}

TEST(DiscoverTest, AllGpusLostLeavesNvmlUnusedWithTheReason) {
  FakeNvmlDevice lost = FakeNvmlDevice::h100();
  lost.lost = true;
  FakeNvmlEnvironment fake({lost});
  auto devices = discover(fake_options());
  ASSERT_TRUE(devices.has_value()) << devices.error().to_string();
  EXPECT_TRUE(devices->gpus.empty());
  const auto* nvml = find_backend(*devices, "nvml");
  ASSERT_NE(nvml, nullptr);
  EXPECT_FALSE(nvml->used);
  EXPECT_NE(nvml->detail.find("GPU_IS_LOST"), std::string::npos) << nvml->detail;
}

// An empty library path would dlopen("") (the main program); it means unset.
TEST(DiscoverTest, EmptyLibraryPathsCountAsUnset) {
  setenv("ZEUS_NVML_PATH", "", 1);
  setenv("ZEUS_ROCM_SMI_PATH", "", 1);
  setenv("ZEUS_AMDSMI_PATH", "", 1);
  setenv("ZEUS_POWERCAP_ROOT", "", 1);
  DiscoverOptions options = DiscoverOptions::from_environment();
  unsetenv("ZEUS_NVML_PATH");
  unsetenv("ZEUS_ROCM_SMI_PATH");
  unsetenv("ZEUS_AMDSMI_PATH");
  unsetenv("ZEUS_POWERCAP_ROOT");
  const DiscoverOptions defaults;
  EXPECT_EQ(options.nvml_path, defaults.nvml_path);
  EXPECT_EQ(options.rocm_smi_path, defaults.rocm_smi_path);
  EXPECT_EQ(options.amdsmi_path, defaults.amdsmi_path);
  EXPECT_EQ(options.powercap_root, defaults.powercap_root);
}

}  // namespace
}  // namespace zeus
