// PeriodicTask (common/periodic_task.h): runs until stopped, and stop() does not wait an interval.
#include "common/periodic_task.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace zeus {
namespace {

TEST(PeriodicTaskTest, RunsEveryIntervalAndStopsAtOnce) {
  std::atomic<int> runs{0};
  PeriodicTask task(0.01, [&] { runs.fetch_add(1); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_GE(runs.load(), 3);
  PeriodicTask slow(1000.0, [] {});
  const auto before = std::chrono::steady_clock::now();
  slow.stop();
  slow.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(1));
}

}  // namespace
}  // namespace zeus
