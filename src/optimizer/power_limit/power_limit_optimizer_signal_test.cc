// The restore guarantee across process exits, end to end through the real NVML backend and the
// fake libnvidia-ml.so.1: a child process profiles on a fake H100 (200-700 W), stops mid-profiling
// at 500 W, and is then killed by SIGTERM / SIGINT or calls exit(); the parent reads the fake's
// state file and checks the device is back at its maximum limit.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>

#include "device/nvml/nvml_gpu.h"
#include "optimizer/power_limit/counter_monitor_for_test.h"
#include "testing/fake_nvml_state.h"
#include "zeus/power_limit_optimizer.h"

namespace zeus {

// The signal test child's objects, never destroyed; external linkage keeps them reachable, so
// leak checkers stay quiet.
Devices* g_signal_test_devices = nullptr;
testing_support::CounterMonitor* g_signal_test_monitor = nullptr;
PowerLimitOptimizer* g_signal_test_optimizer = nullptr;

namespace {

using testing_support::CounterMonitor;

enum class Ending { kSigterm, kSigintWithPreviousHandler, kExitWithoutDestructor };

constexpr int kPreviousHandlerExitCode = 42;

void previous_handler(int) { _exit(kPreviousHandlerExitCode); }

// Runs in the child: profiles until 500 W is being profiled, tells the parent through
// `ready_fd`, then ends as `ending` says (exit() once a byte arrives on `go_fd`). Never returns.
[[noreturn]] void child_main(int ready_fd, int go_fd, Ending ending) {
  if (ending == Ending::kSigintWithPreviousHandler) signal(SIGINT, previous_handler);
  auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  if (!gpus || gpus->size() != 1) _exit(10);
  // Leaked on purpose: the exit paths under test must not depend on destructors.
  static SystemClock clock;
  auto* devices = g_signal_test_devices = new Devices();
  devices->gpus = std::move(*gpus);
  auto* monitor = g_signal_test_monitor = new CounterMonitor(*devices, clock, {0});
  PowerLimitOptimizerOptions options;
  options.warmup_steps = 1;
  options.profile_steps = 2;
  auto plo = PowerLimitOptimizer::create(*monitor, *devices, clock, options);
  if (!plo) _exit(11);
  for (int i = 0; i < 1000; ++i) {
    if (!(*plo)->on_step_begin()) _exit(12);
    if ((*plo)->state() == PowerLimitOptimizer::State::kProfiling &&
        (*plo)->current_setting() == 500u) {
      break;
    }
  }
  if ((*plo)->current_setting() != 500u) _exit(13);
  g_signal_test_optimizer = plo->release();
  const char byte = 'r';
  if (write(ready_fd, &byte, 1) != 1) _exit(14);
  if (ending == Ending::kExitWithoutDestructor) {
    char go = 0;
    if (read(go_fd, &go, 1) != 1) _exit(15);
    exit(0);
  }
  for (;;) pause();  // mid-profiling until the signal arrives
}

class SignalRestoreTest : public ::testing::TestWithParam<Ending> {};

TEST_P(SignalRestoreTest, DeviceIsBackAtItsMaximumLimit) {
  testing::FakeNvmlEnvironment fake({testing::FakeNvmlDevice::h100()});
  int fds[2], go[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(pipe(go), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    close(go[1]);
    child_main(fds[1], go[0], GetParam());
  }
  close(fds[1]);
  close(go[0]);
  char byte = 0;
  const ssize_t n = read(fds[0], &byte, 1);
  close(fds[0]);
  int status = 0;
  if (n != 1) {
    waitpid(child, &status, 0);
    FAIL() << "child failed before mid-profiling, exit status " << WEXITSTATUS(status);
  }
  // Mid-profiling: the fake GPU is at 500 W.
  EXPECT_EQ(fake.read().devices[0].limit_mw, 500'000u);

  if (GetParam() == Ending::kExitWithoutDestructor) {
    ASSERT_EQ(write(go[1], "g", 1), 1);
  }
  close(go[1]);
  if (GetParam() == Ending::kSigterm) kill(child, SIGTERM);
  if (GetParam() == Ending::kSigintWithPreviousHandler) kill(child, SIGINT);
  ASSERT_EQ(waitpid(child, &status, 0), child);
  switch (GetParam()) {
    case Ending::kSigterm:
      // The default action ran after the restore: killed by SIGTERM.
      ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
      EXPECT_EQ(WTERMSIG(status), SIGTERM);
      break;
    case Ending::kSigintWithPreviousHandler:
      ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
      EXPECT_EQ(WEXITSTATUS(status), kPreviousHandlerExitCode);
      break;
    case Ending::kExitWithoutDestructor:
      ASSERT_TRUE(WIFEXITED(status));
      EXPECT_EQ(WEXITSTATUS(status), 0);
      break;
  }
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
                         ::testing::Values(Ending::kSigterm, Ending::kSigintWithPreviousHandler,
                                           Ending::kExitWithoutDestructor));

}  // namespace
}  // namespace zeus
