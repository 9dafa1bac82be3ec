// NvmlGpu's power scope on C2C superchips through the fake libnvidia-ml.so.1: the GPU scope
// first, the module scope (with a warning) where only it answers, GetPowerUsage where neither.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "device/nvml/fake_nvml_handle_for_test.h"
#include "device/nvml/nvml_gpu.h"
#include "testing/fake_nvml_state.h"
#include "zeus/common/log.h"

namespace zeus {
namespace {

using nvml::open_fake_gpus;
using ::zeus::testing::FakeNvmlDevice;
using ::zeus::testing::FakeNvmlEnvironment;

class NvmlGpuScopeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_level_ = log_level();
    set_log_level(LogLevel::kWarning);
    set_log_sink([this](LogLevel level, std::string_view message) {
      if (level == LogLevel::kWarning) warnings_.emplace_back(message);
    });
  }
  void TearDown() override {
    set_log_sink(nullptr);
    set_log_level(saved_level_);
  }
  LogLevel saved_level_ = LogLevel::kInfo;
  std::vector<std::string> warnings_;
};

TEST_F(NvmlGpuScopeTest, OrdinaryGpuReadsTheGpuScopeWithoutWarning) {
  FakeNvmlDevice h100 = FakeNvmlDevice::h100();
  h100.power_scopes = {"gpu", "module"};
  h100.module_cpu_power_mw = 50000;  // would show if the module scope were read
  FakeNvmlEnvironment fake({h100});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]->instant_power_mw().value(), 350000u);
  EXPECT_EQ(gpus[0]->average_power_mw().value(), 350000u);
  EXPECT_EQ(gpus[0]->power_scope(), PowerScope::kGpu);
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(NvmlGpuScopeTest, GraceHopperFallsBackToTheModuleScopeAndWarnsOncePerField) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::gh200()});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]->power_scope(), PowerScope::kModule);
  // GPU 400 W plus the Grace CPU's 120 W.
  EXPECT_EQ(gpus[0]->instant_power_mw().value(), 520000u);
  EXPECT_EQ(gpus[0]->instant_power_mw().value(), 520000u);
  EXPECT_EQ(gpus[0]->average_power_mw().value(), 520000u);
  ASSERT_EQ(warnings_.size(), 2u);  // instant and average are resolved independently
  EXPECT_NE(warnings_[0].find("module"), std::string::npos) << warnings_[0];
  EXPECT_NE(warnings_[0].find("Grace Hopper"), std::string::npos) << warnings_[0];
}

TEST_F(NvmlGpuScopeTest, StateFileKeepsTheScopeKeys) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::gh200(), FakeNvmlDevice::h100()});
  auto state = fake.read();
  ASSERT_EQ(state.devices.size(), 2u);
  EXPECT_EQ(state.devices[0].power_scopes, std::vector<std::string>{"module"});
  EXPECT_EQ(state.devices[0].module_cpu_power_mw, 120000u);
  EXPECT_EQ(state.devices[1].power_scopes, std::vector<std::string>{"gpu"});
  EXPECT_EQ(state.devices[1].module_cpu_power_mw, 0u);
}

TEST_F(NvmlGpuScopeTest, Gb10IsC2cButAnswersTheGpuScope) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::gb10()});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]->instant_power_mw().value(), 40000u);
  EXPECT_EQ(gpus[0]->power_scope(), PowerScope::kGpu);
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(NvmlGpuScopeTest, NeitherScopeFallsBackToGetPowerUsage) {
  FakeNvmlDevice h100 = FakeNvmlDevice::h100();
  h100.power_scopes = {};
  FakeNvmlEnvironment fake({h100});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]->instant_power_mw().value(), 350000u);
  EXPECT_EQ(gpus[0]->power_scope(), PowerScope::kGpu);
}

TEST_F(NvmlGpuScopeTest, LostGpuWhileResolvingIsAnErrorNotAScope) {
  FakeNvmlDevice gh200 = FakeNvmlDevice::gh200();
  FakeNvmlEnvironment fake({gh200});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  gh200.lost = true;
  ::zeus::testing::FakeNvmlState state;
  state.devices = {gh200};
  fake.write(state);
  auto power = gpus[0]->instant_power_mw();
  ASSERT_FALSE(power.has_value());
  EXPECT_NE(power.error().message.find("GPU 0"), std::string::npos) << power.error().message;
  // Unresolved: the scope stays the default rather than a guess.
  EXPECT_EQ(gpus[0]->power_scope(), PowerScope::kGpu);
}

TEST_F(NvmlGpuScopeTest, ModuleOnlyEnergyCounterGrowsAtModulePower) {
  FakeNvmlEnvironment fake({FakeNvmlDevice::gh200()});
  auto gpus = open_fake_gpus();
  ASSERT_EQ(gpus.size(), 1u);
  ASSERT_TRUE(gpus[0]->has_energy_counter());
  const uint64_t before = gpus[0]->total_energy_mj().value();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const uint64_t after = gpus[0]->total_energy_mj().value();
  // 520 W for at least 0.2 s: at least 104 J, more than the GPU's own 400 W would give.
  EXPECT_GE(after - before, 104000u);
}

}  // namespace
}  // namespace zeus
