// run_command: runs a program directly (no shell) with a time limit and collects what it printed
// on stdout and stderr, for callers that hand work to an operator's command (zeusd's GPU command
// overrides). The program gets /dev/null as stdin and its own process group, which is killed
// (SIGKILL) when the limit passes; output is read until both pipes close, at most a grace period
// after the program ended (a leftover grandchild may hold a pipe open), and capped in size.
// Thread-safety: reentrant (posix_spawn; no global state). Failure: kInvalidArgument for an
// empty argv; a program that cannot be started is an outcome (started = false), not an error.
//
//   auto outcome = zeus::run_command({"/usr/local/bin/set_cap.sh", "300"},
//                                    std::chrono::seconds(60));
//   if (!outcome->succeeded()) log_error(outcome->describe());
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "zeus/common/result.h"

namespace zeus {

struct CommandOutcome {
  std::string command_line;   // argv joined with spaces, for messages
  bool started = false;       // false: spawn failed (spawn_error says why)
  std::string spawn_error;
  bool timed_out = false;     // killed when the limit passed
  int exit_code = -1;         // the exit status, -1 when it did not exit normally
  int signal = 0;             // the signal that ended it, 0 when none
  std::string stdout_text;
  std::string stderr_text;
  bool output_complete = true;  // false: a pipe was still open after the grace period

  // Started, not timed out, exit status 0.
  bool succeeded() const { return started && !timed_out && exit_code == 0; }
  // "exited with code 3", "timed out after 2 s", "could not be started: ...", "succeeded".
  std::string describe(std::chrono::milliseconds limit) const;
};

struct RunCommandOptions {
  std::chrono::milliseconds timeout{60000};
  std::chrono::milliseconds output_grace{1000};  // after the program ended
  size_t max_output_bytes = 64 * 1024;           // per stream; the rest is dropped
};

Result<CommandOutcome> run_command(const std::vector<std::string>& argv,
                                   const RunCommandOptions& options = {});

}  // namespace zeus
