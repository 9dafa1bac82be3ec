// PidfdWatcher's contract with its callback's owner: an exit is reported once, and after stop()
// no callback runs any more, even for a watched process that exits later — zeusd stops the
// watcher before its service (which the callback calls into) is destroyed; before that, a client
// exiting during zeusd's shutdown reached a destroyed service and hung it.
#include "zeusd/process_watcher.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>

namespace zeus::zeusd {
namespace {

// A child that lives `ms` milliseconds, then exits; reaped by the caller.
pid_t exiting_child_after_ms(int ms) {
  const pid_t pid = fork();
  if (pid == 0) {
    usleep(static_cast<useconds_t>(ms) * 1000);
    _exit(0);
  }
  return pid;
}

bool watcher_waits_until(const std::function<bool()>& done, double limit_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

TEST(PidfdWatcherTest, AnExitIsReportedOnce) {
  std::atomic<int> calls{0};
  std::atomic<int> reported{0};
  PidfdWatcher watcher;
  ASSERT_TRUE(watcher.start([&](int pid) { reported = pid; ++calls; }).has_value());
  const pid_t child = exiting_child_after_ms(50);
  ASSERT_GT(child, 0);
  ASSERT_TRUE(watcher.watch(child).has_value());
  EXPECT_TRUE(watcher_waits_until([&] { return calls.load() == 1; }, 10.0));
  waitpid(child, nullptr, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(reported.load(), child);
  EXPECT_EQ(watcher.watched_count(), 0u);
}

TEST(PidfdWatcherTest, AfterStopNoCallbackRunsEvenForAProcessThatExitsLater) {
  std::atomic<int> calls{0};
  auto watcher = std::make_unique<PidfdWatcher>();
  ASSERT_TRUE(watcher->start([&](int) { ++calls; }).has_value());
  const pid_t child = exiting_child_after_ms(200);
  ASSERT_GT(child, 0);
  ASSERT_TRUE(watcher->watch(child).has_value());
  watcher->stop();
  watcher->stop();  // idempotent
  waitpid(child, nullptr, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(calls.load(), 0);
  watcher.reset();  // the destructor after stop(): nothing left to join
  EXPECT_EQ(calls.load(), 0);
}

}  // namespace
}  // namespace zeus::zeusd
