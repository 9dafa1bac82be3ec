// The controller's restore across process exits, end to end through the real NVML backend and
// the fake libnvidia-ml.so.1: a child process locks the SM clock at 900 MHz through a
// FrequencyController and is then stopped by SIGTERM, by SIGINT (with a handler of its own
// installed before), or calls exit() without destroying the controller; the parent reads the
// fake's state file: clocks unlocked, and the SM clock log ends with the reset.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device/nvml/nvml_gpu.h"
#include "testing/fake_nvml_state.h"
#include "zeus/frequency_controller.h"

namespace zeus {

// The child's objects, never destroyed; external linkage keeps them reachable for leak checkers.
std::vector<std::unique_ptr<Gpu>>* g_controller_signal_test_gpus = nullptr;
FrequencyController* g_controller_signal_test_controller = nullptr;

namespace {

enum class Ending { kSigterm, kSigintWithPreviousHandler, kExitWithoutDestructor };

constexpr int kPreviousHandlerExitCode = 42;

void previous_handler(int) { _exit(kPreviousHandlerExitCode); }

// Runs in the child: locks 900 MHz, tells the parent through `ready_fd`, then ends as `ending`
// says (exit() once a byte arrives on `go_fd`). Never returns.
[[noreturn]] void child_main(int ready_fd, int go_fd, Ending ending) {
  if (ending == Ending::kSigintWithPreviousHandler) signal(SIGINT, previous_handler);
  auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  if (!gpus || gpus->size() != 1) _exit(10);
  g_controller_signal_test_gpus = new std::vector<std::unique_ptr<Gpu>>(std::move(*gpus));
  auto controller = FrequencyController::start(*(*g_controller_signal_test_gpus)[0], {});
  if (!controller) _exit(11);
  (*controller)->request(900);
  (*controller)->flush();
  if ((*controller)->applied_mhz() != 900u) _exit(12);
  g_controller_signal_test_controller = controller->release();  // exit paths without destructor
  const char byte = 'r';
  if (write(ready_fd, &byte, 1) != 1) _exit(14);
  if (ending == Ending::kExitWithoutDestructor) {
    char go = 0;
    if (read(go_fd, &go, 1) != 1) _exit(15);
    exit(0);
  }
  for (;;) pause();
}

class ControllerSignalRestoreTest : public ::testing::TestWithParam<Ending> {};

TEST_P(ControllerSignalRestoreTest, ClocksAreUnlocked) {
  testing::FakeNvmlState initial;
  initial.devices = {testing::FakeNvmlDevice::h100()};
  initial.sm_clock_log.emplace();
  testing::FakeNvmlEnvironment fake(initial);
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
    FAIL() << "child failed before locking, exit status " << WEXITSTATUS(status);
  }
  auto locked = fake.read();
  EXPECT_EQ(locked.devices[0].locked_sm_clocks_mhz, std::make_pair(900u, 900u));
  EXPECT_EQ(locked.devices[0].locked_memory_clocks_mhz, std::make_pair(2619u, 2619u));

  if (GetParam() == Ending::kExitWithoutDestructor) {
    ASSERT_EQ(write(go[1], "g", 1), 1);
  }
  close(go[1]);
  if (GetParam() == Ending::kSigterm) kill(child, SIGTERM);
  if (GetParam() == Ending::kSigintWithPreviousHandler) kill(child, SIGINT);
  ASSERT_EQ(waitpid(child, &status, 0), child);
  switch (GetParam()) {
    case Ending::kSigterm:
      ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
      EXPECT_EQ(WTERMSIG(status), SIGTERM);
      break;
    case Ending::kSigintWithPreviousHandler:
      ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
      EXPECT_EQ(WEXITSTATUS(status), kPreviousHandlerExitCode);
      break;
    case Ending::kExitWithoutDestructor:
      ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
      EXPECT_EQ(WEXITSTATUS(status), 0);
      break;
  }
  const auto state = fake.read();
  EXPECT_FALSE(state.devices[0].locked_sm_clocks_mhz.has_value());
  EXPECT_FALSE(state.devices[0].locked_memory_clocks_mhz.has_value());
  EXPECT_EQ(state.sm_clock_sequence_mhz(0), (std::vector<uint32_t>{1980, 900, 0}));
}

INSTANTIATE_TEST_SUITE_P(Endings, ControllerSignalRestoreTest,
                         ::testing::Values(Ending::kSigterm, Ending::kSigintWithPreviousHandler,
                                           Ending::kExitWithoutDestructor));

}  // namespace
}  // namespace zeus
