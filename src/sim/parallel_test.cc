#include "sim/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace zeus::sim {
namespace {

TEST(ParallelFor, EveryTaskRunsOnceAndTheLastReportIsTheTotal) {
  for (int threads : {1, 2, 3}) {
    std::vector<std::atomic<int>> runs(37);
    std::vector<int> reports;
    parallel_for(37, threads, [&](int i) { ++runs[i]; },
                 [&](int done, int total) { reports.push_back(done * 1000 + total); }, 10, 100);
    for (auto& r : runs) EXPECT_EQ(r.load(), 1) << threads << " threads";
    ASSERT_FALSE(reports.empty());
    EXPECT_EQ(reports.back(), 47 * 1000 + 100) << threads << " threads";
  }
}

// With a progress callback, `threads` workers compute (the caller's thread only reports): two
// tasks that each wait for the other finish only when two run at once.
TEST(ParallelFor, WithProgressEveryRequestedThreadComputes) {
  std::mutex mutex;
  std::condition_variable cv;
  int arrived = 0;
  std::atomic<int> met{0};
  parallel_for(
      2, 2,
      [&](int) {
        std::unique_lock<std::mutex> lock(mutex);
        ++arrived;
        cv.notify_all();
        if (cv.wait_for(lock, std::chrono::seconds(10), [&] { return arrived == 2; })) ++met;
      },
      [](int, int) {}, 0, 2);
  EXPECT_EQ(met.load(), 2) << "the two tasks did not run at the same time";
}

}  // namespace
}  // namespace zeus::sim
