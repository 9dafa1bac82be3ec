// AmdSmiGpu on the fake libamd_smi.so (testing/fake_amdsmi/), whose state file is shared with the
// fake rocm_smi and driven through FakeRocmSmiState.
#include "device/amd/amdsmi_gpu.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/fake_rocm_smi_state.h"

namespace zeus {
namespace {

using testing::FakeRocmSmiClock;
using testing::FakeRocmSmiState;
using ::testing::HasSubstr;

std::vector<std::unique_ptr<Gpu>> open_fake_amdsmi(Clock& clock, double window_s = 0.5,
                                            const std::string& path = ZEUS_FAKE_AMDSMI_PATH) {
  auto gpus = open_amdsmi_gpus(path, clock, window_s);
  EXPECT_TRUE(gpus.has_value()) << gpus.error().to_string();
  if (!gpus) return {};
  return std::move(*gpus);
}

TEST(AmdSmiGpuTest, OrdersGpusByHipIndexWithTheirIdentity) {
  FakeRocmSmiState state(3);
  // AMD SMI (PCI) order 0, 1, 2; HIP order: device 1, device 2, device 0.
  state.patch_device(0, R"({"hip_id": 2, "name": "AMD Instinct MI300X", "bdf": 50432})");
  state.patch_device(1, R"({"hip_id": 0, "unique_id": 3735928559})");
  state.patch_device(2, R"({"hip_id": 1})");
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake_amdsmi(clock);
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0]->uuid(), "GPU-00000000deadbeef");
  EXPECT_EQ(gpus[1]->uuid(), "GPU-0000000000001002");
  EXPECT_EQ(gpus[2]->uuid(), "GPU-0000000000001000");
  EXPECT_EQ(gpus[2]->name(), "AMD Instinct MI300X");
  EXPECT_EQ(*gpus[2]->pci_address(), "0000:c5:00.0");  // 50432 = 0xc500
  EXPECT_EQ(*gpus[0]->pci_address(), "0000:02:00.0");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(gpus[i]->physical_index(), i);
    EXPECT_EQ(gpus[i]->backend(), "amdsmi");
    EXPECT_EQ(gpus[i]->vendor(), GpuVendor::kAmd);
  }
}

TEST(AmdSmiGpuTest, Rocm63LibraryOrdersByKfdNodeId) {
  FakeRocmSmiState state(3);
  state.patch_device(0, R"({"kfd_node_id": 5})");
  state.patch_device(1, R"({"kfd_node_id": 3})");
  state.patch_device(2, R"({"kfd_node_id": 9})");
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake_amdsmi(clock, 0.5, ZEUS_FAKE_AMDSMI_OLD_PATH);
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(*gpus[0]->pci_address(), "0000:02:00.0");  // device 1
  EXPECT_EQ(*gpus[1]->pci_address(), "0000:01:00.0");  // device 0
  EXPECT_EQ(*gpus[2]->pci_address(), "0000:03:00.0");
  // Without enumeration info there is no HIP UUID; the PCI address names the GPU.
  EXPECT_EQ(gpus[0]->uuid(), "AMD-GPU-0000:02:00.0");
}

TEST(AmdSmiGpuTest, EnumerationNotSupportedFallsBackToKfdNodeIds) {
  FakeRocmSmiState state(2);
  state.patch_device(0, R"({"kfd_node_id": 8, "hip_id": 0})");
  state.patch_device(1, R"({"kfd_node_id": 4, "hip_id": 1})");
  state.set_error("amdsmi_get_gpu_enumeration_info", 2);  // NOT_SUPPORTED
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake_amdsmi(clock, 0);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(*gpus[0]->pci_address(), "0000:02:00.0");
}

TEST(AmdSmiGpuTest, DuplicateHipIndicesAreRejected) {
  FakeRocmSmiState state(2);
  state.patch_device(1, R"({"hip_id": 0})");
  FakeRocmSmiClock clock(state);
  auto gpus = open_amdsmi_gpus(ZEUS_FAKE_AMDSMI_PATH, clock, 0);
  ASSERT_FALSE(gpus.has_value());
  EXPECT_EQ(gpus.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(gpus.error().message, HasSubstr("HIP index 0"));
}

TEST(AmdSmiGpuTest, ProcessorsOfOneSocketAreAllFound) {
  FakeRocmSmiState state(3);
  state.patch_device(0, R"({"socket": 7})");
  state.patch_device(1, R"({"socket": 7})");
  state.patch_device(2, R"({"socket": 9})");
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake_amdsmi(clock, 0);
  EXPECT_EQ(gpus.size(), 3u);
}

TEST(AmdSmiGpuTest, EnergyOfAWindowMatchesTheFakeIntegral) {
  FakeRocmSmiState state(1);
  state.set_power_w(0, 300.0);
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake_amdsmi(clock);
  ASSERT_EQ(gpus.size(), 1u);
  ASSERT_TRUE(gpus[0]->has_energy_counter());
  auto start = gpus[0]->total_energy_mj();
  ASSERT_TRUE(start.has_value()) << start.error().to_string();
  state.advance_time_s(10.0);
  state.set_power_w(0, 120.0);  // the second part at another power
  state.advance_time_s(5.0);
  auto end = gpus[0]->total_energy_mj();
  ASSERT_TRUE(end.has_value());
  // 300 W x 10 s + 120 W x 5 s = 3600 J; counts are floored, so within one 15.3 uJ count + 1 mJ.
  EXPECT_NEAR(static_cast<double>(*end - *start), 3600000.0, 1.0);
}

TEST(AmdSmiGpuTest, CounterWithinTheLooseBoundIsTrustedLikeUpstream) {
  FakeRocmSmiState state(4);
  state.patch_device(0, R"({"energy_scale": 3.0})");   // 3x power: inside (0.1, 10)
  state.patch_device(1, R"({"energy_scale": 0.05})");  // 0.05x: below
  state.patch_device(2, R"({"energy_scale": 20.0})");  // 20x: above
  state.patch_device(3, R"({"energy_frozen": true})");
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake_amdsmi(clock);
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_TRUE(gpus[0]->has_energy_counter());
  EXPECT_FALSE(gpus[1]->has_energy_counter());
  EXPECT_FALSE(gpus[2]->has_energy_counter());
  EXPECT_FALSE(gpus[3]->has_energy_counter());
  auto energy = gpus[1]->total_energy_mj();
  ASSERT_FALSE(energy.has_value());
  EXPECT_EQ(energy.error().code, ErrorCode::kNotSupported);
  EXPECT_THAT(energy.error().message, HasSubstr("plausibility"));
}

TEST(AmdSmiGpuTest, IdleGpuAtZeroWattsCannotBeChecked) {
  FakeRocmSmiState state(1);
  state.set_power_w(0, 0.0);
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake_amdsmi(clock);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_FALSE(gpus[0]->has_energy_counter());
  EXPECT_EQ(*gpus[0]->instant_power_mw(), 0u);  // power itself still reads
}

TEST(AmdSmiGpuTest, CurrentAndAverageSocketPowerInEveryAbi) {
  for (int abi : {24, 25, 26}) {
    FakeRocmSmiState state(1);
    state.set_field("amdsmi_abi", std::to_string(abi));
    state.set_power_w(0, 301.4, 287.6);
    FakeRocmSmiClock clock(state);
    auto gpus = open_fake_amdsmi(clock, 0);
    ASSERT_EQ(gpus.size(), 1u) << abi;
    EXPECT_EQ(*gpus[0]->instant_power_mw(), 301000u) << abi;  // whole watts
    EXPECT_EQ(*gpus[0]->average_power_mw(), 288000u) << abi;
  }
}

TEST(AmdSmiGpuTest, PowerFieldTheGpuDoesNotReportIsNotSupported) {
  FakeRocmSmiState state(2);
  state.patch_device(0, R"({"average_power_na": true})");  // MI300: current only
  state.patch_device(1, R"({"current_power_na": true})");  // MI200: average only
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake_amdsmi(clock);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(*gpus[0]->instant_power_mw(), 300000u);
  EXPECT_EQ(gpus[0]->average_power_mw().error().code, ErrorCode::kNotSupported);
  EXPECT_EQ(gpus[1]->instant_power_mw().error().code, ErrorCode::kNotSupported);
  EXPECT_EQ(*gpus[1]->average_power_mw(), 300000u);
  // The check used whichever power there is.
  EXPECT_TRUE(gpus[0]->has_energy_counter());
  EXPECT_TRUE(gpus[1]->has_energy_counter());
}

TEST(AmdSmiGpuTest, PowerCapsInMicrowattsRoundTrip) {
  FakeRocmSmiState state(2);
  state.patch_device(1, R"({"min_cap_uw": 115000000, "default_cap_uw": 480000999})");
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake_amdsmi(clock, 0);
  ASSERT_EQ(gpus.size(), 2u);
  auto range = gpus[1]->power_limit_range_mw();
  ASSERT_TRUE(range.has_value()) << range.error().to_string();
  EXPECT_EQ(range->min_mw, 115000u);
  EXPECT_EQ(range->max_mw, 560000u);
  EXPECT_EQ(*gpus[1]->default_power_limit_mw(), 480000u);
  ASSERT_TRUE(gpus[1]->set_power_limit_mw(250000).has_value());
  EXPECT_EQ(*gpus[1]->power_limit_mw(), 250000u);
  EXPECT_EQ(state.device_number(1, "cap_uw"), 250000000.0);
  EXPECT_EQ(state.device_number(0, "cap_uw"), 500000000.0);  // the other GPU is untouched
  ASSERT_TRUE(gpus[1]->reset_power_limit().has_value());
  EXPECT_EQ(state.device_number(1, "cap_uw"), 480000999.0);  // the exact default, in uW
}

TEST(AmdSmiGpuTest, OutOfRangeLimitIsRejectedBeforeTheLibrary) {
  FakeRocmSmiState state(1);
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake_amdsmi(clock, 0);
  ASSERT_EQ(gpus.size(), 1u);
  auto set = gpus[0]->set_power_limit_mw(50000);
  ASSERT_FALSE(set.has_value());
  EXPECT_EQ(set.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(set.error().message, HasSubstr("[100000, 560000] mW"));
  EXPECT_EQ(state.device_number(0, "cap_uw"), 500000000.0);
}

TEST(AmdSmiGpuTest, PermissionDeniedNamesTheFix) {
  FakeRocmSmiState state(1);
  state.set_error("amdsmi_set_power_cap", 10);  // AMDSMI_STATUS_NO_PERM
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake_amdsmi(clock, 0);
  ASSERT_EQ(gpus.size(), 1u);
  auto set = gpus[0]->set_power_limit_mw(300000);
  ASSERT_FALSE(set.has_value());
  EXPECT_EQ(set.error().code, ErrorCode::kPermissionDenied);
  EXPECT_THAT(set.error().message, HasSubstr("amdsmi_set_power_cap"));
  EXPECT_THAT(set.error().message, HasSubstr("root"));
  EXPECT_EQ(state.device_number(0, "cap_uw"), 500000000.0);
}

TEST(AmdSmiGpuTest, ClockRangesLocksAndReset) {
  FakeRocmSmiState state(1);
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake_amdsmi(clock, 0);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(*gpus[0]->supported_sm_clocks_mhz(), (std::vector<uint32_t>{1700, 500}));
  EXPECT_EQ(*gpus[0]->supported_memory_clocks_mhz(), (std::vector<uint32_t>{1600, 400}));
  ASSERT_TRUE(gpus[0]->lock_sm_clocks_mhz(800, 1200).has_value());
  EXPECT_THAT(state.device_json(0), HasSubstr(R"("sclk_range_mhz":[800,1200])"));
  EXPECT_EQ(state.device_number(0, "perf_level"), 3.0);  // manual
  ASSERT_TRUE(gpus[0]->lock_memory_clocks_mhz(400, 1600).has_value());
  auto bad = gpus[0]->lock_sm_clocks_mhz(1200, 800);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  auto outside = gpus[0]->lock_sm_clocks_mhz(100, 800);  // below the lowest level
  ASSERT_FALSE(outside.has_value());
  EXPECT_EQ(outside.error().code, ErrorCode::kInvalidArgument);
  ASSERT_TRUE(gpus[0]->reset_sm_clocks().has_value());
  EXPECT_EQ(state.device_number(0, "perf_level"), 0.0);
  EXPECT_THAT(state.device_json(0), HasSubstr(R"("sclk_range_mhz":[])"));
  EXPECT_THAT(state.device_json(0), HasSubstr(R"("mclk_range_mhz":[])"));
}

TEST(AmdSmiGpuTest, HotspotTemperatureInCelsius) {
  FakeRocmSmiState state(1);
  state.patch_device(0, R"({"temperature_c": 67})");
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake_amdsmi(clock, 0);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(*gpus[0]->temperature_c(), 67);
  state.set_error("amdsmi_get_temp_metric", 2);
  EXPECT_EQ(gpus[0]->temperature_c().error().code, ErrorCode::kNotSupported);
  // AMD GPUs have no persistence mode at all.
  EXPECT_FALSE(gpus[0]->set_persistence_mode(true).has_value());
}

TEST(AmdSmiGpuTest, LostAndRemovedGpusFailCleanly) {
  FakeRocmSmiState state(3);
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake_amdsmi(clock);
  ASSERT_EQ(gpus.size(), 3u);
  state.patch_device(1, R"({"lost": true})");
  auto lost = gpus[1]->total_energy_mj();
  ASSERT_FALSE(lost.has_value());
  EXPECT_EQ(lost.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(lost.error().message, HasSubstr("dmesg"));
  EXPECT_TRUE(gpus[0]->total_energy_mj().has_value());  // the others go on
  state.remove_device(2);
  auto gone = gpus[2]->instant_power_mw();
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
  EXPECT_THAT(gone.error().message, HasSubstr("gone"));
}

TEST(AmdSmiGpuTest, Mi250SecondDieReportsNoPowerOfItsOwn) {
  FakeRocmSmiState state(2);
  state.patch_device(0, R"({"name": "AMD Instinct MI250X", "socket": 0})");
  state.patch_device(1, R"({"name": "AMD Instinct MI250X", "socket": 0, "power_uw": 0})");
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake_amdsmi(clock);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_TRUE(gpus[0]->has_energy_counter());
  EXPECT_EQ(*gpus[0]->instant_power_mw(), 300000u);
  EXPECT_FALSE(gpus[1]->has_energy_counter());
  for (const auto& result : {gpus[1]->instant_power_mw(), gpus[1]->average_power_mw()}) {
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code, ErrorCode::kNotSupported);
    EXPECT_THAT(result.error().message, HasSubstr("measure GPU 0"));
  }
  auto energy = gpus[1]->total_energy_mj();
  ASSERT_FALSE(energy.has_value());
  EXPECT_THAT(energy.error().message, HasSubstr("second die"));
  // Power caps are per die and still work.
  EXPECT_TRUE(gpus[1]->power_limit_mw().has_value());
}

TEST(AmdSmiGpuTest, Mi300WithZeroPowerIsNotTakenForASecondDie) {
  FakeRocmSmiState state(2);
  state.patch_device(0, R"({"name": "AMD Instinct MI300X"})");
  state.patch_device(1, R"({"name": "AMD Instinct MI300X", "power_uw": 0})");
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake_amdsmi(clock);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(*gpus[1]->instant_power_mw(), 0u);
  EXPECT_FALSE(gpus[1]->has_energy_counter());  // 0 W: cannot be checked, not an MI250 die
}

TEST(AmdSmiGpuTest, OpenFailuresAreUnavailableWithTheFix) {
  SystemClock clock;
  auto missing = open_amdsmi_gpus("/nonexistent/libamd_smi.so", clock, 0);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(missing.error().message, HasSubstr("ZEUS_AMDSMI_PATH"));

  auto not_amdsmi = open_amdsmi_gpus(ZEUS_FAKE_ROCM_SMI_PATH, clock, 0);
  ASSERT_FALSE(not_amdsmi.has_value());
  EXPECT_THAT(not_amdsmi.error().message, HasSubstr("not an AMD SMI library"));

  FakeRocmSmiState state(1);
  state.set_error("amdsmi_init", 34);  // DRIVER_NOT_LOADED
  auto init = open_amdsmi_gpus(ZEUS_FAKE_AMDSMI_PATH, clock, 0);
  ASSERT_FALSE(init.has_value());
  EXPECT_EQ(init.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(init.error().message, HasSubstr("amdsmi_init failed"));

  state.clear_errors();
  state.set_field("amdsmi_abi", "23");
  auto old = open_amdsmi_gpus(ZEUS_FAKE_AMDSMI_PATH, clock, 0);
  ASSERT_FALSE(old.has_value());
  EXPECT_THAT(old.error().message, HasSubstr("rocm_smi instead"));
}

TEST(AmdSmiGpuTest, BdfFormatting) {
  EXPECT_EQ(format_amdsmi_bdf((uint64_t{1} << 16) | (0xc5 << 8)), "0001:c5:00.0");
  EXPECT_EQ(format_amdsmi_bdf((0x3a << 8) | (0x1f << 3) | 0x7), "0000:3a:1f.7");
}

}  // namespace
}  // namespace zeus
