#include "zeusd/process_watcher.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "zeus/common/log.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

namespace zeus::zeusd {
namespace {

constexpr int kFallbackPollMs = 100;

bool process_exists(int pid) {
  struct stat info {};
  return stat(("/proc/" + std::to_string(pid)).c_str(), &info) == 0;
}

}  // namespace

PidfdWatcher::PidfdWatcher() : wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  ZEUS_CHECK(wake_fd_ >= 0, std::string("eventfd failed: ") + std::strerror(errno));
}

void PidfdWatcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t written = write(wake_fd_, &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
}

PidfdWatcher::~PidfdWatcher() {
  stop();
  for (const auto& [pid, fd] : pidfds_) {
    if (fd >= 0) close(fd);
  }
  close(wake_fd_);
}

Result<void> PidfdWatcher::start(ExitCallback on_exit) {
  ZEUS_CHECK(!thread_.joinable(), "PidfdWatcher::start called twice");
  on_exit_ = std::move(on_exit);
  thread_ = std::thread([this] { run(); });
  return ok();
}

Result<void> PidfdWatcher::watch(int pid) {
  if (pid <= 0) return fail(ErrorCode::kInvalidArgument, "cannot watch pid " + std::to_string(pid));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pidfds_.count(pid)) return ok();
  }
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) {
    if (errno == ESRCH)
      return fail(ErrorCode::kNotFound, "process " + std::to_string(pid) + " has exited");
    if (errno != ENOSYS && errno != EPERM) {
      return fail(ErrorCode::kInternal,
                  "pidfd_open(" + std::to_string(pid) + "): " + std::strerror(errno));
    }
    if (!process_exists(pid))
      return fail(ErrorCode::kNotFound, "process " + std::to_string(pid) + " has exited");
    fd = -1;  // fallback: poll /proc/<pid>
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, inserted] = pidfds_.emplace(pid, fd);
    if (!inserted && fd >= 0) close(fd);
  }
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t written = write(wake_fd_, &one, sizeof(one));
  return ok();
}

size_t PidfdWatcher::watched_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pidfds_.size();
}

void PidfdWatcher::run() {
  std::vector<pollfd> fds;
  std::vector<int> pids;  // pids[i] belongs to fds[i + 1]
  while (true) {
    fds.assign(1, pollfd{wake_fd_, POLLIN, 0});
    pids.clear();
    std::vector<int> fallback_pids;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      for (const auto& [pid, fd] : pidfds_) {
        if (fd >= 0) {
          fds.push_back(pollfd{fd, POLLIN, 0});
          pids.push_back(pid);
        } else {
          fallback_pids.push_back(pid);
        }
      }
    }
    const int timeout_ms = fallback_pids.empty() ? -1 : kFallbackPollMs;
    const int ready = poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) {
      log_error(std::string("zeusd: poll on pidfds failed: ") + std::strerror(errno));
      return;
    }
    if (fds[0].revents & POLLIN) {
      uint64_t count = 0;
      [[maybe_unused]] ssize_t got = read(wake_fd_, &count, sizeof(count));
    }
    std::vector<int> exited;
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents != 0) exited.push_back(pids[i - 1]);
    }
    for (int pid : fallback_pids) {
      if (!process_exists(pid)) exited.push_back(pid);
    }
    for (int pid : exited) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = pidfds_.find(pid);
        if (it == pidfds_.end()) continue;
        if (it->second >= 0) close(it->second);
        pidfds_.erase(it);
      }
      if (on_exit_) on_exit_(pid);
    }
  }
}

}  // namespace zeus::zeusd
