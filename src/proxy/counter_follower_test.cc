#include "proxy/counter_follower.h"

#include <gtest/gtest.h>

#include <cmath>

namespace zeus::proxy {
namespace {

// A 300 W GPU whose counter is published every 100 ms (an H200's), read every `read_s`.
double published_j(double t) { return 300.0 * 0.1 * std::floor(t / 0.1 + 1e-9); }

// What the raw counter charges a 20 ms stretch is 0 J most of the time and 30 J at a publish;
// what the follower gives charges every stretch (after the first publishes) close to 6 J, and
// over a long stretch what the counter says.
TEST(CounterFollowerTest, StretchesBetweenPublishesAreChargedAtTheCountersRate) {
  CounterFollower follower;
  double last = 0, first_at_1s = -1;
  int zero_raw = 0;
  for (int i = 0; i <= 150; ++i) {  // 3 s, a read every 20 ms
    const double t = i * 0.02;
    const double given = follower.follow(t, {published_j(t)})[0];
    if (i > 0 && published_j(t) == published_j(t - 0.02)) ++zero_raw;
    if (t >= 0.5) {
      EXPECT_GT(given - last, 0.3 * 6.0) << "at " << t;
      EXPECT_LT(given - last, 3.0 * 6.0) << "at " << t;
    }
    if (first_at_1s < 0 && t >= 1.0) first_at_1s = given;
    last = given;
  }
  EXPECT_GT(zero_raw, 100);  // the raw counter stood still at most reads
  EXPECT_NEAR(last - first_at_1s, 300.0 * 2.0, 300.0 * 0.1);
}

TEST(CounterFollowerTest, ACounterThatChangesAtEveryReadIsGivenAsItIs) {
  CounterFollower follower;
  for (int i = 0; i <= 50; ++i) {
    const double t = i * 0.013;
    const double raw = 250.0 * t + (i % 3 == 0 ? 0.5 * t : 0.0) + 7.0;
    EXPECT_NEAR(follower.follow(t, {raw, 2 * raw})[1], 2 * raw, 1e-9) << "at " << t;
  }
}

TEST(CounterFollowerTest, ARestartedCounterIsFollowedFromItsNewValue) {
  CounterFollower follower;
  for (int i = 0; i <= 20; ++i) follower.follow(i * 0.05, {1000.0 + 15.0 * i});
  EXPECT_NEAR(follower.follow(1.05, {3.0})[0], 3.0, 1e-9);  // a driver reload: back near 0
  EXPECT_NEAR(follower.follow(1.10, {18.0})[0], 18.0, 1e-9);
}

}  // namespace
}  // namespace zeus::proxy
