#include "device/amd/amd_gpu.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/fake_rocm_smi_state.h"
#include "zeus/common/log.h"

namespace zeus {
namespace {

using testing::FakeRocmSmiClock;
using testing::FakeRocmSmiState;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Opens the GPUs of the fake library; fails the test when that fails.
std::vector<std::unique_ptr<Gpu>> open_fake(Clock& clock, double window_s = 0.5,
                                            const std::string& path = ZEUS_FAKE_ROCM_SMI_PATH) {
  auto gpus = open_amd_gpus(path, clock, window_s);
  EXPECT_TRUE(gpus.has_value()) << gpus.error().to_string();
  if (!gpus) return {};
  return std::move(*gpus);
}

TEST(AmdGpuTest, OpensEveryDeviceWithItsIdentity) {
  FakeRocmSmiState state(2);
  state.patch_device(1, R"({"name": "AMD Instinct MI300X", "unique_id": 3735928559})");
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake(clock);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0]->vendor(), GpuVendor::kAmd);
  EXPECT_EQ(gpus[0]->architecture(), GpuArchitecture::kAmd);
  EXPECT_EQ(gpus[0]->name(), "AMD Instinct MI250X");
  EXPECT_EQ(gpus[1]->name(), "AMD Instinct MI300X");
  EXPECT_EQ(gpus[0]->uuid(), "GPU-0000000000001000");
  EXPECT_EQ(gpus[1]->uuid(), "GPU-00000000deadbeef");
  EXPECT_EQ(gpus[0]->physical_index(), 0);
  EXPECT_EQ(gpus[1]->physical_index(), 1);
}

TEST(AmdGpuTest, ConvertsMicrowattsToMilliwatts) {
  FakeRocmSmiState state(1);
  state.set_power_w(0, 301.2345, 287.6543);
  state.patch_device(0, R"({"cap_uw": 123456789, "default_cap_uw": 480000999})");
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake(clock, 0);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(*gpus[0]->instant_power_mw(), 301234u);
  EXPECT_EQ(*gpus[0]->average_power_mw(), 287654u);
  EXPECT_EQ(*gpus[0]->power_limit_mw(), 123456u);
  EXPECT_EQ(*gpus[0]->default_power_limit_mw(), 480000u);
}

TEST(AmdGpuTest, CapRangeComesMaxFirstFromRocmSmi) {
  FakeRocmSmiState state(1);
  state.patch_device(0, R"({"min_cap_uw": 115000000, "max_cap_uw": 560000000})");
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake(clock, 0);
  ASSERT_EQ(gpus.size(), 1u);
  auto range = gpus[0]->power_limit_range_mw();
  ASSERT_TRUE(range.has_value()) << range.error().to_string();
  EXPECT_EQ(range->min_mw, 115000u);
  EXPECT_EQ(range->max_mw, 560000u);
}

TEST(AmdGpuTest, PowerLimitRoundTripsThroughTheLibrary) {
  FakeRocmSmiState state(2);
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake(clock, 0);
  ASSERT_EQ(gpus.size(), 2u);
  ASSERT_TRUE(gpus[1]->set_power_limit_mw(250000).has_value());
  EXPECT_EQ(*gpus[1]->power_limit_mw(), 250000u);
  EXPECT_EQ(state.device_number(1, "cap_uw"), 250000000.0);
  EXPECT_EQ(*gpus[0]->power_limit_mw(), 500000u);  // the other GPU is untouched

  state.patch_device(1, R"({"default_cap_uw": 450000000})");
  ASSERT_TRUE(gpus[1]->reset_power_limit().has_value());
  EXPECT_EQ(*gpus[1]->power_limit_mw(), 450000u);
}

TEST(AmdGpuTest, PowerLimitOutsideRangeIsInvalidArgument) {
  FakeRocmSmiState state(1);
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake(clock, 0);
  ASSERT_EQ(gpus.size(), 1u);
  for (uint32_t limit_mw : {99999u, 560001u}) {
    auto set = gpus[0]->set_power_limit_mw(limit_mw);
    ASSERT_FALSE(set.has_value());
    EXPECT_EQ(set.error().code, ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(set.error().message, "[100000, 560000] mW")) << set.error().message;
  }
  EXPECT_EQ(state.device_number(0, "cap_uw"), 500000000.0);
}

TEST(AmdGpuTest, PermissionErrorSaysRootIsNeeded) {
  FakeRocmSmiState state(1);
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake(clock, 0);
  ASSERT_EQ(gpus.size(), 1u);
  state.set_error("rsmi_dev_power_cap_set", rsmi::kStatusPermission);
  auto set = gpus[0]->set_power_limit_mw(300000);
  ASSERT_FALSE(set.has_value());
  EXPECT_EQ(set.error().code, ErrorCode::kPermissionDenied);
  EXPECT_TRUE(contains(set.error().message, "needs root")) << set.error().message;
  EXPECT_TRUE(contains(set.error().message, "rsmi_dev_power_cap_set")) << set.error().message;
  EXPECT_TRUE(contains(set.error().message, "sufficient permission")) << set.error().message;
  EXPECT_EQ(state.device_number(0, "cap_uw"), 500000000.0);
}

TEST(AmdGpuTest, LostGpuIsUnavailable) {
  FakeRocmSmiState state(2);
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake(clock, 0);
  ASSERT_EQ(gpus.size(), 2u);
  state.patch_device(0, R"({"lost": true})");
  auto limit = gpus[0]->power_limit_mw();
  ASSERT_FALSE(limit.has_value());
  EXPECT_EQ(limit.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(contains(limit.error().message, "lost")) << limit.error().message;
  EXPECT_EQ(gpus[0]->total_energy_mj().error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(gpus[1]->power_limit_mw().has_value());
}

TEST(AmdGpuTest, MapsEveryStatusToAnErrorCode) {
  FakeRocmSmiState state(1);
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake(clock, 0);
  ASSERT_EQ(gpus.size(), 1u);
  const std::vector<std::pair<rsmi::Status, ErrorCode>> cases = {
      {rsmi::kStatusInvalidArgs, ErrorCode::kInvalidArgument},
      {rsmi::kStatusNotSupported, ErrorCode::kNotSupported},
      {rsmi::kStatusFileError, ErrorCode::kUnavailable},
      {rsmi::kStatusPermission, ErrorCode::kPermissionDenied},
      {rsmi::kStatusOutOfResources, ErrorCode::kInternal},
      {rsmi::kStatusInternalException, ErrorCode::kInternal},
      {rsmi::kStatusInputOutOfBounds, ErrorCode::kInvalidArgument},
      {rsmi::kStatusInitError, ErrorCode::kUnavailable},
      {rsmi::kStatusNotYetImplemented, ErrorCode::kNotSupported},
      {rsmi::kStatusNotFound, ErrorCode::kNotFound},
      {rsmi::kStatusInterrupt, ErrorCode::kUnavailable},
      {rsmi::kStatusNoData, ErrorCode::kUnavailable},
      {rsmi::kStatusBusy, ErrorCode::kUnavailable},
      {rsmi::kStatusUnknownError, ErrorCode::kInternal},
  };
  for (const auto& [status, code] : cases) {
    state.set_error("rsmi_dev_power_ave_get", status);
    auto power = gpus[0]->average_power_mw();
    ASSERT_FALSE(power.has_value()) << "status " << status;
    EXPECT_EQ(power.error().code, code) << "status " << status << ": " << power.error().message;
    EXPECT_TRUE(contains(power.error().message, "rsmi_dev_power_ave_get"));
  }
  state.clear_errors();
  EXPECT_TRUE(gpus[0]->average_power_mw().has_value());
}

TEST(AmdGpuTest, EnergyIsCountTimesResolutionInMillijoules) {
  FakeRocmSmiState state(1);
  state.set_energy_count(0, 1000000, 15.3);
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake(clock, 0);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(*gpus[0]->total_energy_mj(), 15300u);  // 1e6 x 15.3 uJ
  // 100 counts = 1530 uJ at a time: the sub-mJ remainder must carry over, not be dropped.
  for (int step = 1; step <= 10; ++step) {
    state.set_energy_count(0, 1000000 + 100 * step, 15.3);
    EXPECT_EQ(*gpus[0]->total_energy_mj(), 15300u + (1530u * step) / 1000) << "step " << step;
  }
}

TEST(AmdGpuTest, EnergyGrowsWithPowerTimesTime) {
  FakeRocmSmiState state(1);
  state.set_power_w(0, 250.0);
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake(clock);
  ASSERT_EQ(gpus.size(), 1u);
  ASSERT_TRUE(gpus[0]->has_energy_counter());
  uint64_t before_mj = *gpus[0]->total_energy_mj();
  state.advance_time_s(4.0);
  uint64_t after_mj = *gpus[0]->total_energy_mj();
  EXPECT_NEAR(static_cast<double>(after_mj - before_mj), 1000000.0, 1.0);  // 250 W x 4 s
}

TEST(AmdGpuTest, PlausibleCounterPasses) {
  FakeRocmSmiState state(2);
  state.patch_device(1, R"({"energy_scale": 1.3})");  // within the tolerance
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake(clock, 0.5);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_TRUE(gpus[0]->has_energy_counter());
  EXPECT_TRUE(gpus[1]->has_energy_counter());
  EXPECT_EQ(clock.now_s(), 0.5);  // one window for all GPUs
}

TEST(AmdGpuTest, ImplausibleCounterFallsBackToPowerSampling) {
  for (const char* patch :
       {R"({"energy_scale": 3.0})", R"({"energy_scale": 0.2})", R"({"energy_frozen": true})"}) {
    FakeRocmSmiState state(2);
    state.patch_device(1, patch);
    FakeRocmSmiClock clock(state);
    std::vector<std::string> warnings;
    set_log_sink([&](LogLevel level, std::string_view message) {
      if (level == LogLevel::kWarning) warnings.emplace_back(message);
    });
    LogLevel previous_level = log_level();
    set_log_level(LogLevel::kWarning);
    auto gpus = open_fake(clock, 0.5);
    set_log_sink(nullptr);
    set_log_level(previous_level);
    ASSERT_EQ(gpus.size(), 2u) << patch;
    EXPECT_TRUE(gpus[0]->has_energy_counter()) << patch;
    EXPECT_FALSE(gpus[1]->has_energy_counter()) << patch;
    auto energy = gpus[1]->total_energy_mj();
    ASSERT_FALSE(energy.has_value());
    EXPECT_EQ(energy.error().code, ErrorCode::kNotSupported);
    ASSERT_EQ(warnings.size(), 1u) << patch;
    EXPECT_TRUE(contains(warnings[0], "AMD GPU 1")) << warnings[0];
    EXPECT_TRUE(contains(warnings[0], "sampling power")) << warnings[0];
  }
}

TEST(AmdGpuTest, MissingFunctionIsNotSupportedNotACrash) {
  FakeRocmSmiState state(1);
  state.set_power_w(0, 300.0, 280.0);
  FakeRocmSmiClock clock(state);
  // The old library lacks rsmi_dev_energy_count_get and rsmi_dev_current_socket_power_get.
  auto checked = open_fake(clock, 0.5, ZEUS_FAKE_ROCM_SMI_OLD_PATH);
  ASSERT_EQ(checked.size(), 1u);
  EXPECT_FALSE(checked[0]->has_energy_counter());
  EXPECT_EQ(*checked[0]->instant_power_mw(), 280000u);  // falls back to the average

  auto trusted = open_fake(clock, 0, ZEUS_FAKE_ROCM_SMI_OLD_PATH);
  ASSERT_EQ(trusted.size(), 1u);
  auto energy = trusted[0]->total_energy_mj();
  ASSERT_FALSE(energy.has_value());
  EXPECT_EQ(energy.error().code, ErrorCode::kNotSupported);
  EXPECT_TRUE(contains(energy.error().message, "function not found")) << energy.error().message;
  EXPECT_TRUE(contains(energy.error().message, "rsmi_dev_energy_count_get"));
}

TEST(AmdGpuTest, ClockControlGoesThroughRangeAndPerfLevel) {
  FakeRocmSmiState state(1);
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake(clock, 0);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(*gpus[0]->supported_sm_clocks_mhz(), (std::vector<uint32_t>{1700, 1000, 500}));
  EXPECT_EQ(*gpus[0]->supported_memory_clocks_mhz(), (std::vector<uint32_t>{1600, 400}));

  ASSERT_TRUE(gpus[0]->lock_sm_clocks_mhz(500, 1000).has_value());
  ASSERT_TRUE(gpus[0]->lock_memory_clocks_mhz(400, 400).has_value());
  std::string device = state.device_json(0);
  EXPECT_TRUE(contains(device, R"("sclk_range_mhz":[500,1000])")) << device;
  EXPECT_TRUE(contains(device, R"("mclk_range_mhz":[400,400])")) << device;
  EXPECT_EQ(state.device_number(0, "perf_level"), 3.0);  // manual

  ASSERT_TRUE(gpus[0]->reset_sm_clocks().has_value());
  EXPECT_EQ(state.device_number(0, "perf_level"), 0.0);  // auto
  EXPECT_TRUE(contains(state.device_json(0), R"("sclk_range_mhz":[])"));

  auto inverted = gpus[0]->lock_sm_clocks_mhz(1000, 500);
  ASSERT_FALSE(inverted.has_value());
  EXPECT_EQ(inverted.error().code, ErrorCode::kInvalidArgument);
}

TEST(AmdGpuTest, PersistenceModeIsNotSupported) {
  FakeRocmSmiState state(1);
  FakeRocmSmiClock clock(state);
  auto gpus = open_fake(clock, 0);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]->persistence_mode().error().code, ErrorCode::kNotSupported);
  EXPECT_EQ(gpus[0]->set_persistence_mode(true).error().code, ErrorCode::kNotSupported);
}

TEST(AmdGpuTest, OpenFailuresAreUnavailable) {
  {
    FakeRocmSmiState state(1);
    state.set_error("rsmi_init", rsmi::kStatusInitError);
    FakeRocmSmiClock clock(state);
    auto gpus = open_amd_gpus(ZEUS_FAKE_ROCM_SMI_PATH, clock, 0);
    ASSERT_FALSE(gpus.has_value());
    EXPECT_EQ(gpus.error().code, ErrorCode::kUnavailable);
    EXPECT_TRUE(contains(gpus.error().message, "rsmi_init failed")) << gpus.error().message;
  }
  {
    FakeRocmSmiState state(0);
    FakeRocmSmiClock clock(state);
    auto gpus = open_amd_gpus(ZEUS_FAKE_ROCM_SMI_PATH, clock, 0);
    ASSERT_FALSE(gpus.has_value());
    EXPECT_EQ(gpus.error().code, ErrorCode::kUnavailable);
    EXPECT_TRUE(contains(gpus.error().message, "no AMD GPU found")) << gpus.error().message;
  }
  FakeClock clock;
  auto missing = open_amd_gpus("/nonexistent/librocm_smi64.so", clock, 0);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kUnavailable);
  auto not_rocm = open_amd_gpus("libm.so.6", clock, 0);
  ASSERT_FALSE(not_rocm.has_value());
  EXPECT_EQ(not_rocm.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(contains(not_rocm.error().message, "not a rocm_smi library"));
}

TEST(AmdGpuTest, DefaultStateWithoutAFileHasOneGpu) {
  unsetenv("ZEUS_FAKE_ROCM_SMI_STATE");
  FakeClock clock;
  auto gpus = open_fake(clock, 0);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]->name(), "AMD Instinct MI250X");
  EXPECT_EQ(*gpus[0]->power_limit_mw(), 500000u);
}

// The real Debian librocm_smi64.so, on a machine that may have no AMD GPU: either it finds real
// GPUs, or it reports Unavailable; it never crashes.
TEST(AmdGpuTest, RealLibraryDoesNotCrash) {
  SystemClock clock;
  auto gpus = open_amd_gpus("/usr/lib/librocm_smi64.so", clock, 0.05);
  if (gpus) {
    EXPECT_FALSE(gpus->empty());
    for (const auto& gpu : *gpus) EXPECT_EQ(gpu->vendor(), GpuVendor::kAmd);
  } else {
    EXPECT_EQ(gpus.error().code, ErrorCode::kUnavailable) << gpus.error().to_string();
  }
}

}  // namespace
}  // namespace zeus
