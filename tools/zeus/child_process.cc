#include "child_process.h"

#include "cli_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace zeus::cli {
namespace {

std::atomic<pid_t> g_child{0};
std::atomic<bool> g_interrupted{false};

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
constexpr int kNumForwarded = sizeof(kForwarded) / sizeof(kForwarded[0]);
// Signals the caller ignored when zeus started (nohup, `trap '' HUP`, background jobs): zeus
// leaves them ignored, and so does the command (a hang-up must not kill a nohup'ed job).
bool g_ignored[kNumForwarded] = {};
// SIGPIPE as zeus found it (ignore_sigpipe()): what the command gets back.
bool g_sigpipe_ignored = false;

// Signals from another process (kill) are forwarded; signals the kernel generated from the
// terminal (Ctrl-C, Ctrl-\) already reached the child, which shares zeus's process group.
void forward_signal(int signo, siginfo_t* info, void*) {
  if (signo == SIGINT || signo == SIGTERM || signo == SIGHUP) g_interrupted.store(true);
  const pid_t child = g_child.load();
  if (child <= 0) return;
  const bool from_process = info != nullptr && (info->si_code == SI_USER || info->si_code == SI_QUEUE);
  if (from_process) kill(child, signo);
}

void install_forwarding() {
  struct sigaction action{};
  action.sa_sigaction = forward_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (int k = 0; k < kNumForwarded; ++k) {
    struct sigaction previous{};
    sigaction(kForwarded[k], nullptr, &previous);
    // Our own handler from an earlier start() is not "ignored"; SIG_IGN on entry is.
    if ((previous.sa_flags & SA_SIGINFO) == 0 && previous.sa_handler == SIG_IGN) g_ignored[k] = true;
    if (!g_ignored[k]) sigaction(kForwarded[k], &action, nullptr);
  }
}

}  // namespace

Result<ChildProcess> ChildProcess::start(const std::vector<std::string>& argv) {
  if (argv.empty()) return fail(ErrorCode::kInvalidArgument, "no command given after --");
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    return fail(ErrorCode::kInternal, std::string("pipe failed: ") + std::strerror(errno));
  }
  install_forwarding();
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(error_pipe[0]);
    close(error_pipe[1]);
    return fail(ErrorCode::kInternal, std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // The dispositions zeus found on entry: ignored stays ignored, the rest default.
    for (int k = 0; k < kNumForwarded; ++k) signal(kForwarded[k], g_ignored[k] ? SIG_IGN : SIG_DFL);
    signal(SIGPIPE, g_sigpipe_ignored ? SIG_IGN : SIG_DFL);
    close(error_pipe[0]);
    execvp(args[0], args.data());
    const int err = errno;
    ssize_t ignored = write(error_pipe[1], &err, sizeof(err));
    (void)ignored;
    _exit(127);
  }
  g_child.store(pid);
  close(error_pipe[1]);
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(error_pipe[0], &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  close(error_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof(exec_errno))) {
    waitpid(pid, nullptr, 0);
    g_child.store(0);
    const ErrorCode code = exec_errno == ENOENT   ? ErrorCode::kNotFound
                           : exec_errno == EACCES ? ErrorCode::kPermissionDenied
                                                  : ErrorCode::kInternal;
    // execve says EACCES for a directory; say what a shell says ("is a directory", 126).
    struct stat st{};
    const bool directory = exec_errno == EACCES && argv[0].find('/') != std::string::npos &&
                           stat(argv[0].c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    return fail(code, "cannot run '" + argv[0] + "': " +
                          (directory ? "is a directory" : std::strerror(exec_errno)) +
                          (exec_errno == ENOENT ? " (is it installed and on PATH?)" : ""));
  }
  return ChildProcess(pid);
}

int ChildProcess::wait() {
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  g_child.store(0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

void ChildProcess::ignore_sigpipe() {
  g_sigpipe_ignored = signal(SIGPIPE, SIG_IGN) == SIG_IGN;
}

bool ChildProcess::interrupted() { return g_interrupted.load(); }

int run_command_or_die(const std::vector<std::string>& argv) {
  auto started = ChildProcess::start(argv);
  if (!started) {
    die(started.error().message, started.error().code == ErrorCode::kNotFound
                                     ? kCommandNotFoundExit
                                     : kCannotExecuteExit);
  }
  return started->wait();
}

}  // namespace zeus::cli
