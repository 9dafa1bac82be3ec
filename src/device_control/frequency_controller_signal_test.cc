// The controller's restore across process exits, end to end through the real NVML backend and
// the fake libnvidia-ml.so.1: a child process locks the SM clock at 900 MHz through a
// FrequencyController and is then stopped by SIGTERM, by SIGINT (with a handler of its own
// installed before), or calls exit() without destroying the controller; the parent reads the
// fake's state file: clocks unlocked, and the SM clock log ends with the reset.
#include <gtest/gtest.h>

#include "device/nvml/nvml_gpu.h"
#include "testing/exit_path_child.h"
#include "testing/fake_nvml_state.h"
#include "zeus/device_control/frequency_controller.h"

namespace zeus {

// The child's objects, never destroyed; external linkage keeps them reachable for leak checkers.
std::vector<std::unique_ptr<Gpu>>* g_controller_signal_test_gpus = nullptr;
FrequencyController* g_controller_signal_test_controller = nullptr;

namespace {

using testing::ExitPath;

// In the child: locks 900 MHz and leaks the controller (the exit paths must not need it).
int lock_900_mhz() {
  auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  if (!gpus || gpus->size() != 1) return 10;
  g_controller_signal_test_gpus = new std::vector<std::unique_ptr<Gpu>>(std::move(*gpus));
  auto controller = FrequencyController::start(*(*g_controller_signal_test_gpus)[0], {});
  if (!controller) return 11;
  (*controller)->request(900);
  (*controller)->flush();
  if ((*controller)->applied_mhz() != 900u) return 12;
  g_controller_signal_test_controller = controller->release();
  return 0;
}

class ControllerSignalRestoreTest : public ::testing::TestWithParam<ExitPath> {};

TEST_P(ControllerSignalRestoreTest, ClocksAreUnlocked) {
  testing::FakeNvmlState initial;
  initial.devices = {testing::FakeNvmlDevice::h100()};
  initial.sm_clock_log.emplace();
  testing::FakeNvmlEnvironment fake(initial);
  const std::string problem = testing::run_child_to_exit(GetParam(), lock_900_mhz, [&] {
    const auto locked = fake.read();
    EXPECT_EQ(locked.devices[0].locked_sm_clocks_mhz, std::make_pair(900u, 900u));
    EXPECT_EQ(locked.devices[0].locked_memory_clocks_mhz, std::make_pair(2619u, 2619u));
  });
  ASSERT_EQ(problem, "");
  const auto state = fake.read();
  EXPECT_FALSE(state.devices[0].locked_sm_clocks_mhz.has_value());
  EXPECT_FALSE(state.devices[0].locked_memory_clocks_mhz.has_value());
  EXPECT_EQ(state.sm_clock_sequence_mhz(0), (std::vector<uint32_t>{1980, 900, 0}));
}

INSTANTIATE_TEST_SUITE_P(Endings, ControllerSignalRestoreTest,
                         ::testing::Values(ExitPath::kSigterm, ExitPath::kSigintWithPreviousHandler,
                                           ExitPath::kExitWithoutDestructor));

}  // namespace
}  // namespace zeus
