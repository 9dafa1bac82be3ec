// The restore guarantee across process exits, end to end through the real NVML backend and the
// fake libnvidia-ml.so.1: a child process profiles on a fake H100 (200-700 W), stops mid-profiling
// at 500 W, and is then killed by SIGTERM / SIGINT or calls exit(); the parent reads the fake's
// state file and checks the device is back at its maximum limit.
#include <gtest/gtest.h>

#include <memory>

#include "device/nvml/nvml_gpu.h"
#include "optimizer/power_limit/counter_monitor_for_test.h"
#include "testing/exit_path_child.h"
#include "testing/fake_nvml_state.h"
#include "zeus/optimizer/power_limit_optimizer.h"

namespace zeus {

// The signal test child's objects, never destroyed; external linkage keeps them reachable, so
// leak checkers stay quiet.
Devices* g_signal_test_devices = nullptr;
testing_support::CounterMonitor* g_signal_test_monitor = nullptr;
PowerLimitOptimizer* g_signal_test_optimizer = nullptr;

namespace {

using testing::ExitPath;
using testing_support::CounterMonitor;

// In the child: profiles until 500 W is being profiled, then leaks the optimizer (the exit paths
// under test must not depend on destructors).
int profile_until_500_w() {
  auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  if (!gpus || gpus->size() != 1) return 10;
  static SystemClock clock;
  auto* devices = g_signal_test_devices = new Devices();
  devices->gpus = std::move(*gpus);
  auto* monitor = g_signal_test_monitor = new CounterMonitor(*devices, clock, {0});
  PowerLimitOptimizerOptions options;
  options.warmup_steps = 1;
  options.profile_steps = 2;
  auto plo = PowerLimitOptimizer::create(*monitor, *devices, clock, options);
  if (!plo) return 11;
  for (int i = 0; i < 1000; ++i) {
    if (!(*plo)->on_step_begin()) return 12;
    if ((*plo)->state() == PowerLimitOptimizer::State::kProfiling &&
        (*plo)->current_setting() == 500u) {
      break;
    }
  }
  if ((*plo)->current_setting() != 500u) return 13;
  g_signal_test_optimizer = plo->release();
  return 0;
}

class SignalRestoreTest : public ::testing::TestWithParam<ExitPath> {};

TEST_P(SignalRestoreTest, DeviceIsBackAtItsMaximumLimit) {
  testing::FakeNvmlEnvironment fake({testing::FakeNvmlDevice::h100()});
  const std::string problem = testing::run_child_to_exit(GetParam(), profile_until_500_w, [&] {
    EXPECT_EQ(fake.read().devices[0].limit_mw, 500'000u);  // mid-profiling
  });
  ASSERT_EQ(problem, "");
  const testing::FakeNvmlState state = fake.read();
  EXPECT_EQ(state.devices[0].limit_mw, 700'000u);
  ASSERT_FALSE(state.set_power_limit_log.empty());
  EXPECT_EQ(state.set_power_limit_log.back().limit_mw, 700'000u);
  // 700 W at start, then 675 ... 500 W; the restore is the last call.
  std::vector<uint32_t> limits_w;
  for (const auto& call : state.set_power_limit_log) limits_w.push_back(call.limit_mw / 1000);
  const std::vector<uint32_t> expected = {700, 675, 650, 625, 600, 575, 550, 525, 500, 700};
  EXPECT_EQ(limits_w, expected);
}

INSTANTIATE_TEST_SUITE_P(Endings, SignalRestoreTest,
                         ::testing::Values(ExitPath::kSigterm,
                                           ExitPath::kSigintWithPreviousHandler,
                                           ExitPath::kExitWithoutDestructor));

}  // namespace
}  // namespace zeus
