#include "exit_path_child.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

namespace zeus::testing {
namespace {

void previous_handler(int) { _exit(kPreviousHandlerExitCode); }

[[noreturn]] void child_main(ExitPath path, const std::function<int()>& setup, int ready_fd,
                             int go_fd) {
  if (path == ExitPath::kSigintWithPreviousHandler) signal(SIGINT, previous_handler);
  if (const int code = setup(); code != 0) _exit(code);
  const char byte = 'r';
  if (write(ready_fd, &byte, 1) != 1) _exit(120);
  if (path == ExitPath::kExitWithoutDestructor) {
    char go = 0;
    if (read(go_fd, &go, 1) != 1) _exit(121);
    exit(0);
  }
  for (;;) pause();  // until the signal arrives
}

std::string status_text(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

}  // namespace

std::string run_child_to_exit(ExitPath path, const std::function<int()>& setup,
                              const std::function<void()>& while_ready) {
  int ready[2], go[2];
  if (pipe(ready) != 0 || pipe(go) != 0) return "pipe failed";
  const pid_t child = fork();
  if (child < 0) return "fork failed";
  if (child == 0) {
    close(ready[0]);
    close(go[1]);
    child_main(path, setup, ready[1], go[0]);
  }
  close(ready[1]);
  close(go[0]);
  char byte = 0;
  const ssize_t n = read(ready[0], &byte, 1);
  close(ready[0]);
  int status = 0;
  if (n != 1) {
    close(go[1]);
    waitpid(child, &status, 0);
    return "the child failed before it was ready: " + status_text(status);
  }
  while_ready();
  if (path == ExitPath::kExitWithoutDestructor && write(go[1], "g", 1) != 1) {
    kill(child, SIGKILL);
  }
  close(go[1]);
  if (path == ExitPath::kSigterm) kill(child, SIGTERM);
  if (path == ExitPath::kSigintWithPreviousHandler) kill(child, SIGINT);
  if (waitpid(child, &status, 0) != child) return "waitpid failed";
  const bool expected = path == ExitPath::kSigterm
                            ? WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM
                        : path == ExitPath::kSigintWithPreviousHandler
                            ? WIFEXITED(status) && WEXITSTATUS(status) == kPreviousHandlerExitCode
                            : WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return expected ? "" : "the child ended unexpectedly: " + status_text(status);
}

}  // namespace zeus::testing
