#include "common/run_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>

extern char** environ;

namespace zeus {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Closes its descriptors at scope exit.
struct Pipe {
  int fds[2] = {-1, -1};
  ~Pipe() {
    for (int& fd : fds) {
      if (fd >= 0) close(fd);
    }
  }
};

// Reads what `fd` has now into `text` (up to `cap` bytes kept); false once it is closed.
bool drain(int fd, std::string& text, size_t cap) {
  std::array<char, 4096> buffer{};
  const ssize_t n = read(fd, buffer.data(), buffer.size());
  if (n > 0) {
    const size_t keep = std::min(static_cast<size_t>(n), cap - std::min(cap, text.size()));
    text.append(buffer.data(), keep);
    return true;
  }
  return n < 0 && (errno == EINTR || errno == EAGAIN);
}

}  // namespace

std::string CommandOutcome::describe(std::chrono::milliseconds limit) const {
  if (!started) return "could not be started: " + spawn_error;
  if (timed_out) {
    return "timed out after " + std::to_string(limit.count() / 1000.0).substr(0, 5) +
           " s and was killed";
  }
  if (signal != 0) return "was ended by signal " + std::to_string(signal);
  if (exit_code != 0) return "exited with code " + std::to_string(exit_code);
  return "succeeded";
}

Result<CommandOutcome> run_command(const std::vector<std::string>& argv,
                                   const RunCommandOptions& options) {
  if (argv.empty() || argv.front().empty()) {
    return fail(ErrorCode::kInvalidArgument, "run_command: no program given");
  }
  CommandOutcome outcome;
  for (const std::string& word : argv) {
    outcome.command_line += (outcome.command_line.empty() ? "" : " ") + word;
  }
  Pipe out, err;
  if (pipe2(out.fds, O_CLOEXEC) != 0 || pipe2(err.fds, O_CLOEXEC) != 0) {
    return fail(ErrorCode::kInternal, std::string("run_command: pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.fds[1], STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);   // the caller's threads may block signals
  posix_spawnattr_setsigdefault(&attributes, &all);  // and ignore some
  posix_spawnattr_setpgroup(&attributes, 0);         // its own group, killed as a whole
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::vector<char*> args;
  for (const std::string& word : argv) args.push_back(const_cast<char*>(word.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) {
    outcome.spawn_error = std::strerror(spawned);
    return outcome;
  }
  outcome.started = true;
  close(out.fds[1]);
  close(err.fds[1]);
  out.fds[1] = err.fds[1] = -1;

  const auto deadline = SteadyClock::now() + options.timeout;
  std::optional<SteadyClock::time_point> ended;
  bool out_open = true, err_open = true;
  int status = 0;
  while (true) {
    if (!ended) {
      const pid_t waited = waitpid(pid, &status, WNOHANG);
      if (waited == pid) {
        ended = SteadyClock::now();
      } else if (SteadyClock::now() >= deadline) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        outcome.timed_out = true;
        ended = SteadyClock::now();
      }
    }
    if (!out_open && !err_open) {
      if (ended) break;
      usleep(10000);  // its output closed, it still runs: wait for its end or the deadline
      continue;
    }
    if (ended && SteadyClock::now() >= *ended + options.output_grace) {
      outcome.output_complete = false;
      break;
    }
    std::array<pollfd, 2> fds{{{out_open ? out.fds[0] : -1, POLLIN, 0},
                               {err_open ? err.fds[0] : -1, POLLIN, 0}}};
    if (poll(fds.data(), fds.size(), 10) < 0 && errno != EINTR) break;
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      out_open = drain(out.fds[0], outcome.stdout_text, options.max_output_bytes);
    }
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      err_open = drain(err.fds[0], outcome.stderr_text, options.max_output_bytes);
    }
  }
  if (!outcome.timed_out) {
    if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  }
  return outcome;
}

}  // namespace zeus
