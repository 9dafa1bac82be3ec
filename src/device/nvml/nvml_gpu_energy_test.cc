// NvmlGpu's energy counter and power readings through the fake libnvidia-ml.so.1.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "device/nvml/fake_nvml_handle_for_test.h"
#include "device/nvml/nvml_gpu.h"
#include "testing/fake_nvml_state.h"

namespace zeus {
namespace {

using nvml::FakeNvmlHandle;
using nvml::open_fake_gpus;
using ::zeus::testing::FakeNvmlDevice;
using ::zeus::testing::FakeNvmlEnvironment;

TEST(NvmlGpuEnergyTest, CounterOnlyFromVoltaOn) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::p100(), FakeNvmlDevice::v100(), FakeNvmlDevice::a100(),
                            FakeNvmlDevice::h100()});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_FALSE(gpus[0]->has_energy_counter());
  auto energy = gpus[0]->total_energy_mj();
  ASSERT_FALSE(energy.has_value());
  EXPECT_EQ(energy.error().code, ErrorCode::kNotSupported);
  EXPECT_NE(energy.error().message.find("Pascal"), std::string::npos) << energy.error().message;
  EXPECT_NE(energy.error().message.find("Volta"), std::string::npos);
  for (size_t i = 1; i < gpus.size(); ++i) {
    EXPECT_TRUE(gpus[i]->has_energy_counter()) << gpus[i]->name();
    EXPECT_TRUE(gpus[i]->total_energy_mj().has_value()) << gpus[i]->name();
  }
}

TEST(NvmlGpuEnergyTest, EnergyGrowsAtTheCurrentPower) {
  FakeNvmlDevice device = FakeNvmlDevice::h100();  // draws 350 W
  device.energy_mj = 1.0e6;
  FakeNvmlEnvironment fake({device});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  Gpu& gpu = *gpus[0];
  ASSERT_TRUE(gpu.set_power_limit_mw(250000).has_value());  // now draws 250 W

  const auto before = std::chrono::steady_clock::now();
  const uint64_t start_mj = gpu.total_energy_mj().value();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const uint64_t end_mj = gpu.total_energy_mj().value();
  const double outer_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();

  EXPECT_GE(start_mj, 1000000u);
  const double grown_mj = static_cast<double>(end_mj - start_mj);
  // 250 W x at least the 0.1 s slept, and at most the time measured around both reads.
  EXPECT_GE(grown_mj, 250.0 * 0.1 * 1000 - 1);
  EXPECT_LE(grown_mj, 250.0 * outer_s * 1000 + 1);
}

TEST(NvmlGpuEnergyTest, AnotherProcessSeesTheSameCounter) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  const uint64_t ours_mj = gpus[0]->total_energy_mj().value();
  // The builder computes the counter from the same file the fake wrote.
  const double theirs_mj = fake.read().devices[0].energy_mj;
  EXPECT_GE(theirs_mj + 1, static_cast<double>(ours_mj));
  EXPECT_LE(theirs_mj, static_cast<double>(ours_mj) + 350.0 * 10 * 1000);  // within 10 s
}

TEST(NvmlGpuEnergyTest, OldDriverHasNoCounterEvenOnHopper) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});
  auto gpus = open_fake_gpus(ZEUS_FAKE_NVML_OLD_PATH);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]->architecture(), GpuArchitecture::kHopper);
  EXPECT_FALSE(gpus[0]->has_energy_counter());
  auto energy = gpus[0]->total_energy_mj();
  ASSERT_FALSE(energy.has_value());
  EXPECT_EQ(energy.error().code, ErrorCode::kNotSupported);
  // Power comes from nvmlDeviceGetPowerUsage, and limits work with the plain symbols.
  EXPECT_EQ(gpus[0]->instant_power_mw().value(), 350000u);
  ASSERT_TRUE(gpus[0]->set_power_limit_mw(300000).has_value());
  EXPECT_EQ(gpus[0]->average_power_mw().value(), 300000u);
}

TEST(NvmlGpuEnergyTest, PowerPrefersFieldValuesAndFallsBackWhenUnsupported) {
  FakeNvmlDevice with_fields = FakeNvmlDevice::h100();
  FakeNvmlDevice without_fields = FakeNvmlDevice::a100();  // draws 250 W
  without_fields.power_fields = false;
  FakeNvmlEnvironment fake({with_fields, without_fields});
  FakeNvmlHandle handle(ZEUS_FAKE_NVML_PATH);
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 2u);

  EXPECT_EQ(gpus[0]->instant_power_mw().value(), 350000u);
  EXPECT_EQ(gpus[0]->average_power_mw().value(), 350000u);
  EXPECT_EQ(handle.calls("nvmlDeviceGetFieldValues"), 2);
  EXPECT_EQ(handle.calls("nvmlDeviceGetPowerUsage"), 0);

  handle.reset();
  EXPECT_EQ(gpus[1]->instant_power_mw().value(), 250000u);
  EXPECT_EQ(gpus[1]->instant_power_mw().value(), 250000u);
  // The first read learns that the fields are unsupported in both the GPU and the module
  // scope; later ones go straight to the fallback.
  EXPECT_EQ(handle.calls("nvmlDeviceGetFieldValues"), 2);
  EXPECT_EQ(handle.calls("nvmlDeviceGetPowerUsage"), 2);
}

TEST(NvmlGpuEnergyTest, ConcurrentReadsAndSetsAreSafe) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::h100()});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  Gpu& gpu = *gpus[0];
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      uint64_t last_mj = 0;
      for (int i = 0; i < 50; ++i) {
        auto energy = gpu.total_energy_mj();
        if (!energy || *energy < last_mj) ++failures;
        if (energy) last_mj = *energy;
        auto power = gpu.instant_power_mw();
        if (!power || *power < 200000 || *power > 350000) ++failures;
        if (t == 0 && !gpu.set_power_limit_mw(200000 + 10000 * (i % 10))) ++failures;
        if (!gpu.power_limit_range_mw()) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(fake.read().set_power_limit_log.size(), 50u);
}

}  // namespace
}  // namespace zeus

namespace zeus {
namespace {

// A Hopper whose counter answers NOT_SUPPORTED (vGPU, some boards) has no counter:
// the probe at open says so, and its power is sampled instead of every read failing.
TEST(NvmlGpuEnergyTest, CounterAnsweringNotSupportedOnVoltaPlusIsProbedAtOpen) {
  FakeNvmlDevice device = FakeNvmlDevice::h100();
  device.errors["nvmlDeviceGetTotalEnergyConsumption"] = 3;  // NVML_ERROR_NOT_SUPPORTED
  FakeNvmlEnvironment fake({device, FakeNvmlDevice::h100()});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0]->architecture(), GpuArchitecture::kHopper);
  EXPECT_FALSE(gpus[0]->has_energy_counter());
  auto energy = gpus[0]->total_energy_mj();
  ASSERT_FALSE(energy.has_value());
  EXPECT_EQ(energy.error().code, ErrorCode::kNotSupported);
  EXPECT_NE(energy.error().message.find("NVML_ERROR_NOT_SUPPORTED"), std::string::npos)
      << energy.error().message;
  EXPECT_NE(energy.error().message.find("sampling power"), std::string::npos);
  EXPECT_TRUE(gpus[0]->instant_power_mw().has_value());
  EXPECT_TRUE(gpus[1]->has_energy_counter());
}

}  // namespace
}  // namespace zeus
