#include "device_control/exit_restorer.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <thread>

#include "zeus/common/log.h"

namespace zeus {
namespace {

// Every signal whose default action ends the process and that a user, a terminal, a supervisor
// or the kernel sends to a process in the normal course of things (SIGHUP: the terminal or SSH
// session closed; SIGUSR1/2, SIGALRM: scripts, timers; SIGXCPU/SIGXFSZ: rlimits; SIGPIPE: a
// closed pipe on stdout). SIGINT and SIGTERM come first: a handler installed before ours (e.g.
// Python's KeyboardInterrupt) is chained to after the restore. The others are taken only while
// their disposition is the default, i.e. while they would kill the process: a program with its
// own handler (a checkpoint on SIGUSR1) goes on running, and its GPUs stay as they are.
constexpr int kSignals[] = {SIGINT,  SIGTERM, SIGHUP,    SIGQUIT, SIGUSR1, SIGUSR2,
                            SIGALRM, SIGXCPU, SIGVTALRM, SIGPROF, SIGXFSZ, SIGPIPE};
constexpr int kSignalCount = sizeof(kSignals) / sizeof(kSignals[0]);
constexpr int kChainedSignals = 2;  // SIGINT, SIGTERM

// State the signal handler touches: lock-free atomics only.
std::atomic<int> g_pipe_write_fd{-1};
// The disposition before ours, per entry of kSignals; valid where g_installed[i].
struct sigaction g_previous[kSignalCount];
std::atomic<bool> g_installed[kSignalCount];
// The process that owns the current pipe and watcher (a forked child must make its own).
pid_t g_owner_pid = 0;

int signal_slot(int signo) {
  for (int i = 0; i < kSignalCount; ++i) {
    if (kSignals[i] == signo) return i;
  }
  return 0;  // not reached: only kSignals are handled
}

void on_signal(int signo) {
  const int saved_errno = errno;
  const int fd = g_pipe_write_fd.load();
  const unsigned char byte = static_cast<unsigned char>(signo);
  if (fd < 0 || ::write(fd, &byte, 1) != 1) {
    // No watcher: fall back to the previous disposition at once.
    ::sigaction(signo, &g_previous[signal_slot(signo)], nullptr);
    ::raise(signo);
  }
  errno = saved_errno;
}

void watch(int read_fd) {
  while (true) {
    unsigned char byte = 0;
    const ssize_t n = ::read(read_fd, &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n != 1) return;  // pipe closed
    const int signo = byte;
    ExitRestorer::instance().run_all();
    // Hand the signal to whatever was there before us: the default action terminates the
    // process by this signal; a previous handler runs as it would have without us.
    const int slot = signal_slot(signo);
    ::sigaction(signo, &g_previous[slot], nullptr);
    g_installed[slot].store(false);
    ::kill(::getpid(), signo);
  }
}

}  // namespace

ExitRestorer& ExitRestorer::instance() {
  static ExitRestorer* restorer = [] {
    auto* created = new ExitRestorer();  // never destroyed (used at exit)
    // Restores belong to the process that registered them: a forked child
    // (multiprocessing, DataLoader workers) must neither run the parent's actions at its exit
    // nor send its signals into the parent's pipe. The mutex is held across fork() so that the
    // child's copy of the registry is consistent.
    ::pthread_atfork([] { ExitRestorer::instance().mutex_.lock(); },
                     [] { ExitRestorer::instance().mutex_.unlock(); },
                     [] { ExitRestorer::instance().disarm_in_child(); });
    return created;
  }();
  return *restorer;
}

void ExitRestorer::disarm_in_child() {
  // Runs in the child right after fork(), single-threaded, with mutex_ held by the prepare hook.
  actions_.clear();
  g_pipe_write_fd.store(-1);
  for (int signo : kSignals) {
    const int slot = signal_slot(signo);
    if (g_installed[slot].load()) {
      ::sigaction(signo, &g_previous[slot], nullptr);  // the child behaves as without Zeus
      g_installed[slot].store(false);
    }
  }
  g_owner_pid = 0;  // a registration in the child makes its own pipe and watcher
  mutex_.unlock();
}

void ExitRestorer::ensure_handlers_locked() {
  if (g_owner_pid == ::getpid()) return;
  g_owner_pid = ::getpid();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    log_warning(
        "cannot create the pipe for signal handling; GPU settings are restored "
        "only on normal exit");
    g_pipe_write_fd.store(-1);
    return;
  }
  g_pipe_write_fd.store(fds[1]);
  // The watcher runs with every signal blocked, so signals are handled by the other threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  std::thread(watch, fds[0]).detach();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);

  for (int signo : kSignals) {
    const int slot = signal_slot(signo);
    struct sigaction current {};
    ::sigaction(signo, nullptr, &current);
    if (current.sa_handler == &on_signal) continue;  // inherited over fork; keep the previous
    if (current.sa_handler == SIG_IGN) continue;     // the process ignores it: leave it so
    // Beyond SIGINT/SIGTERM, only a signal that would kill the process (see kSignals).
    if (slot >= kChainedSignals &&
        ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL)) {
      continue;
    }
    struct sigaction ours {};
    ours.sa_handler = &on_signal;
    sigemptyset(&ours.sa_mask);
    ours.sa_flags = SA_RESTART;
    g_previous[slot] = current;
    ::sigaction(signo, &ours, nullptr);
    g_installed[slot].store(true);
  }
}

uint64_t ExitRestorer::add(Action action, bool install_handlers) {
  std::lock_guard<std::mutex> lock(mutex_);
  // One hook per registration: exit runs hooks and static destructors in reverse order of
  // registration, so a hook registered now runs before the statics of the device libraries that
  // were loaded before this action (a hook from an earlier registration might run after them).
  std::atexit([] { ExitRestorer::instance().run_all(); });
  if (install_handlers) ensure_handlers_locked();
  const uint64_t id = next_id_++;
  actions_.emplace(id, std::move(action));
  return id;
}

void ExitRestorer::remove(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  actions_.erase(id);
}

void ExitRestorer::run_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<uint64_t, Action> actions;
  actions.swap(actions_);
  for (auto& [id, action] : actions) action();
}

}  // namespace zeus
