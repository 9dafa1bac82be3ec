// Runs a child process to one of the exit paths that must restore GPU settings without a
// destructor: SIGTERM, SIGINT (with a handler the process installed before Zeus), or exit().
// The restore tests of the power-limit optimizer and the clock controller share it.
// Thread-safety: forks; call from a test's main thread.
//
//   std::string problem = run_child_to_exit(ExitPath::kSigterm,
//       [] { /* child: change the GPU, leak the owner */ return 0; },
//       [&] { EXPECT_EQ(fake.read().devices[0].limit_mw, 500'000u); });
//   ASSERT_EQ(problem, "");   // then check that the fake's state is restored
#pragma once

#include <functional>
#include <string>

namespace zeus::testing {

enum class ExitPath { kSigterm, kSigintWithPreviousHandler, kExitWithoutDestructor };

// The exit code of the SIGINT handler installed before `setup` for kSigintWithPreviousHandler.
inline constexpr int kPreviousHandlerExitCode = 42;

// Forks a child that runs `setup` (0: ready; anything else ends the child with that exit code),
// then waits to be ended. Once it is ready, the parent runs `while_ready`, ends it by `path`
// (SIGTERM, SIGINT, or a byte on a pipe after which the child calls exit(0)), reaps it and checks
// its status: killed by SIGTERM (the default action after the restore), exit code
// kPreviousHandlerExitCode (the previous SIGINT handler ran), or 0. Returns "" or what went wrong.
std::string run_child_to_exit(ExitPath path, const std::function<int()>& setup,
                              const std::function<void()>& while_ready);

}  // namespace zeus::testing
