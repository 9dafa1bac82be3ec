// ProcessWatcher: tells zeusd when a client process exits, however it exits (return, exception,
// SIGKILL), so that its leases can be restored at once.
//
// PidfdWatcher opens a pidfd per watched process (pidfd_open, Linux 5.3+: immune to pid reuse)
// and polls them on one thread; the pidfd becomes readable the moment the process exits. On a
// kernel without pidfd_open it falls back to checking /proc/<pid> every 100 ms.
// Thread-safety: watch() may be called from any thread; the exit callback runs on the watcher's
// thread, never while the watcher holds its own lock (so it may call watch()).
// Failure: watch() answers NotFound when the process has already exited.
//
//   zeus::zeusd::PidfdWatcher watcher;
//   watcher.start([&](int pid) { service.on_process_exit(pid); });
//   watcher.watch(peer.pid);
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "zeus/common/result.h"
#include "zeusd/process_identity.h"

namespace zeus::zeusd {

class ProcessWatcher {
 public:
  virtual ~ProcessWatcher() = default;
  // Starts watching `pid` (again: no effect). NotFound when it has already exited.
  virtual Result<void> watch(int pid) = 0;
  // The start time of the live process `pid` (process_identity.h), nullopt when none runs: with
  // the pid it names the process across a zeusd restart (a seam for tests).
  virtual std::optional<uint64_t> start_ticks(int pid) { return process_start_ticks(pid); }
};

// A watcher that never reports an exit (for tests and the fuzzer, which have no clients to lose).
class NullProcessWatcher final : public ProcessWatcher {
 public:
  Result<void> watch(int) override { return ok(); }
};

class PidfdWatcher final : public ProcessWatcher {
 public:
  using ExitCallback = std::function<void(int pid)>;

  PidfdWatcher();
  ~PidfdWatcher() override;  // stops the thread and closes the pidfds
  PidfdWatcher(const PidfdWatcher&) = delete;
  PidfdWatcher& operator=(const PidfdWatcher&) = delete;

  // Starts the thread that calls `on_exit(pid)` once per watched process that exits.
  Result<void> start(ExitCallback on_exit);
  // Stops that thread (waits for a callback under way; none after it returns). Call it before
  // whatever the callback uses goes away; idempotent, and the destructor calls it.
  void stop();
  Result<void> watch(int pid) override;
  // Processes watched now.
  size_t watched_count() const;

 private:
  void run();
  ExitCallback on_exit_;
  int wake_fd_ = -1;  // eventfd: wakes the poll when the set changes or at stop
  mutable std::mutex mutex_;
  std::map<int, int> pidfds_;  // pid -> pidfd (-1: /proc polling fallback); guarded by mutex_
  bool stopping_ = false;      // guarded by mutex_
  std::thread thread_;
};

}  // namespace zeus::zeusd
