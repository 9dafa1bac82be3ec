// Runs a command as a child process the way `perf stat` does: the child inherits the terminal,
// signals sent to zeus by another process are forwarded to it, and Ctrl-C (which the terminal
// sends to both) only stops the child, so zeus can still print what it measured.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

#include "zeus/common/result.h"

namespace zeus::cli {

class ChildProcess {
 public:
  // Starts argv[0] (searched on PATH). NotFound when there is no such command; PermissionDenied
  // (not executable, a directory) or Internal (not a program) when it cannot be executed.
  static Result<ChildProcess> start(const std::vector<std::string>& argv);

  // Waits for the child; its exit code, or 128 + signal number when a signal ended it.
  int wait();

  // Makes zeus ignore SIGPIPE (its writes then fail with EPIPE, which it reports) while the
  // commands it starts get back the disposition zeus started with. Call once, first in main().
  static void ignore_sigpipe();

  // True when SIGINT/SIGTERM/SIGHUP reached zeus while the child ran.
  static bool interrupted();

  pid_t pid() const { return pid_; }

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_;
};

// As a shell: 127 when the command does not exist, 126 when it exists but cannot be executed.
inline constexpr int kCommandNotFoundExit = 127;
inline constexpr int kCannotExecuteExit = 126;

// Starts `argv` and waits for it: its exit code (as ChildProcess::wait). When it cannot be
// started, die()s with the reason and kCommandNotFoundExit or kCannotExecuteExit.
int run_command_or_die(const std::vector<std::string>& argv);

}  // namespace zeus::cli
