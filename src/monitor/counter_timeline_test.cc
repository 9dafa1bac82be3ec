#include "zeus/monitor/counter_timeline.h"

#include <gtest/gtest.h>

#include <cmath>

namespace zeus {
namespace {

// A counter that grows at `watts` and is published every `period_s`, read every `read_s`.
CounterTimeline stepped(double watts, double period_s, double read_s, double until_s) {
  CounterTimeline timeline;
  for (int i = 0; i * read_s <= until_s + 1e-12; ++i) {
    const double t = i * read_s;
    timeline.observe(t, watts * period_s * std::floor(t / period_s + 1e-9));
  }
  return timeline;
}

TEST(CounterTimelineTest, DocExample) {
  CounterTimeline t;
  t.observe(0.00, 10);
  t.observe(0.04, 10);
  t.observe(0.06, 12);
  t.observe(0.15, 12);
  t.observe(0.17, 14);
  ASSERT_EQ(t.changes(), 2u);
  EXPECT_NEAR(*t.at(0.10), 12 + 2 * 0.05 / 0.11, 1e-9);
  EXPECT_NEAR(*t.estimate(0.20), 14 + 2 * 0.04 / 0.11, 1e-9);
  EXPECT_DOUBLE_EQ(*t.last_change_s(), 0.16);
}

TEST(CounterTimelineTest, UnknownBeforeTheFirstChangeAndAfterTheLast) {
  CounterTimeline t;
  EXPECT_FALSE(t.estimate(0).has_value());
  t.observe(0, 5);
  t.observe(0.05, 5);
  EXPECT_FALSE(t.at(0.02).has_value());
  EXPECT_DOUBLE_EQ(*t.estimate(0.07), 5);  // no change yet: the value read
  t.observe(0.09, 7);                      // 5 held for 0.05 s >= the 0.04 s gap: at 0.07
  EXPECT_FALSE(t.at(0.06).has_value());
  EXPECT_FALSE(t.estimate(0.06).has_value());
  EXPECT_DOUBLE_EQ(*t.at(0.07), 7);
  EXPECT_FALSE(t.at(0.08).has_value());
  EXPECT_DOUBLE_EQ(*t.estimate(0.2), 7);  // one change: no rate to go on
}

// What a 20 ms window measures on a counter published every 100 ms: the raw counter says 0 J for
// most windows and a whole step for some; the timeline gives every window its share, and windows
// that tile a stretch add up to the counter's difference over it.
TEST(CounterTimelineTest, ShortWindowsOnASteppedCounterGetTheirShare) {
  const double watts = 500, period_s = 0.1, read_s = 0.002;
  CounterTimeline t = stepped(watts, period_s, read_s, 2.0);
  double sum = 0;
  for (double a = 0.3; a < 1.5 - 1e-9; a += 0.02) {
    const double e = *t.at(a + 0.02) - *t.at(a);
    EXPECT_NEAR(e, watts * 0.02, 0.02 * watts * 0.05) << "window at " << a;
    sum += e;
  }
  EXPECT_NEAR(sum, *t.at(1.5) - *t.at(0.3), 1e-6);
  EXPECT_NEAR(sum, watts * 1.2, watts * 0.01);
}

TEST(CounterTimelineTest, ExtrapolatesAtTheLastRateForAtMostTwoSteps) {
  CounterTimeline t = stepped(300, 0.1, 0.01, 0.55);  // last change published at 0.5
  const double last = *t.last_change_s();
  EXPECT_NEAR(last, 0.495, 1e-6);
  EXPECT_NEAR(*t.estimate(last + 0.05) - *t.estimate(last), 300 * 0.05, 1e-6);
  EXPECT_NEAR(*t.estimate(last + 10) - *t.estimate(last), 300 * 0.2, 1e-6);  // holds after 2 steps
}

TEST(CounterTimelineTest, ARestartedCounterStartsAfresh) {
  CounterTimeline t = stepped(300, 0.1, 0.01, 0.5);
  ASSERT_GE(t.changes(), 4u);
  t.observe(0.6, 1);  // a driver reload: the counter is back near 0
  EXPECT_EQ(t.changes(), 0u);
  EXPECT_DOUBLE_EQ(*t.estimate(0.6), 1);
  t.observe(0.7, 31);
  EXPECT_EQ(t.changes(), 2u);  // changed at the next read: the read before is a point too
  EXPECT_DOUBLE_EQ(*t.at(0.65), 16);
}

TEST(CounterTimelineTest, KeepsABoundedNumberOfChangesAndForgetsTheOldOnes) {
  CounterTimeline t(8);
  for (int i = 0; i < 100; ++i) t.observe(i * 0.01, i);
  EXPECT_EQ(t.changes(), 8u);
  EXPECT_FALSE(t.at(0.5).has_value());
  EXPECT_TRUE(t.at(0.96).has_value());
  t.forget_before(0.975);
  EXPECT_EQ(t.changes(), 3u);  // changes at every read: 0.97 (before 0.975), 0.98 and 0.99
  EXPECT_TRUE(t.at(0.975).has_value());
  EXPECT_FALSE(t.at(0.965).has_value());
}

// A counter finer than the reads (every read changes it) is taken at the reads' times: windows
// between reads get exactly the counter's difference.
TEST(CounterTimelineTest, ACounterThatChangesAtEveryReadIsTakenAtTheReads) {
  CounterTimeline t;
  t.observe(0.0, 0);
  t.observe(0.02, 4);
  t.observe(0.05, 10);
  t.observe(0.05, 10);  // two reads at one edge
  t.observe(0.07, 16);
  EXPECT_DOUBLE_EQ(*t.at(0.05) - *t.at(0.02), 6);
  EXPECT_DOUBLE_EQ(*t.at(0.07) - *t.at(0.05), 6);
}

}  // namespace
}  // namespace zeus
