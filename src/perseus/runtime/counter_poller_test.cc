#include "perseus/runtime/counter_poller.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

namespace zeus::pfo {
namespace {

// A 300 W GPU whose counter is published every 20 ms, on real time.
Result<double> stepped_300w(Clock& clock) {
  return 300.0 * 0.02 * std::floor(clock.now_s() / 0.02);
}

// The edges come every 50 ms, sparser than the 20 ms publishes: alone they could place a publish
// anywhere in 50 ms; with the thread reading every 2 ms, a 50 ms window gets ~15 J.
TEST(CounterPollerTest, TheThreadPlacesPublishesBetweenSparseEdges) {
  SystemClock clock;
  CounterPoller poller(clock, [&clock] { return stepped_300w(clock); }, 0.002);
  poller.set_active(true);
  std::vector<double> edges;
  for (int i = 0; i < 8; ++i) {
    edges.push_back(poller.read());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  edges.push_back(poller.read());
  while (poller.last_change_s().value_or(-1) < edges.back()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  double sum = 0;
  for (size_t i = 2; i + 1 < edges.size(); ++i) {  // the first windows may precede two publishes
    const std::optional<double> a = poller.at(edges[i]), b = poller.at(edges[i + 1]);
    ASSERT_TRUE(a && b) << i;
    const double expected = 300.0 * (edges[i + 1] - edges[i]);
    EXPECT_NEAR(*b - *a, expected, 0.35 * expected) << "window " << i;
    sum += *b - *a;
  }
  EXPECT_NEAR(sum, 300.0 * (edges.back() - edges[2]), 0.15 * 300.0 * (edges.back() - edges[2]));
  EXPECT_FALSE(poller.failed());
}

TEST(CounterPollerTest, AFailedReadStopsReadingAndSaysSo) {
  FakeClock clock;
  int calls = 0;
  CounterPoller poller(clock, [&calls]() -> Result<double> {
    ++calls;
    return fail(ErrorCode::kUnavailable, "GPU lost");
  }, 0);
  poller.read();
  poller.read();
  EXPECT_TRUE(poller.failed());
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(poller.estimate(0).has_value());
}

}  // namespace
}  // namespace zeus::pfo
