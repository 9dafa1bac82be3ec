// The benchmark's steady-state window, J/token and per-request figures on a hand-made run.
#include "proxy/steady_state.h"

#include <gtest/gtest.h>

namespace zeus::proxy {
namespace {

// Six requests, two at a time, 10 tokens each from 0.5 s after their start; 100 W throughout.
std::vector<RequestTimeline> six_in_pairs() {
  std::vector<RequestTimeline> out;
  for (int i = 0; i < 6; ++i) {
    const double start = 2.0 * (i / 2);
    out.push_back({start, start + 0.5, start + 2, 10, {}});
  }
  return out;
}

TEST(SteadyStateTest, WindowFromBFirstTokensToNMinusBMinus1Finished) {
  const std::vector<EnergyReading> readings = {{0, 0}, {6, 600}};
  const SteadyState s = steady_state(six_in_pairs(), readings);
  ASSERT_TRUE(s.found) << s.why;
  EXPECT_EQ(s.max_concurrency, 2);
  EXPECT_DOUBLE_EQ(s.start_s, 0.5);  // the second first token
  EXPECT_DOUBLE_EQ(s.end_s, 4);      // the third end (6 - 2 - 1)
  EXPECT_DOUBLE_EQ(s.energy_j, 350);
  EXPECT_DOUBLE_EQ(s.tokens, 40);  // the first four requests' tokens; the last two start at 4
  EXPECT_DOUBLE_EQ(s.j_per_token, 8.75);
  ASSERT_EQ(s.request_energy_j.size(), 6u);
  EXPECT_DOUBLE_EQ(s.request_energy_j[0], 87.5);
  ASSERT_EQ(s.request_window_tokens.size(), 6u);
  EXPECT_DOUBLE_EQ(s.request_window_tokens[0], 10);  // all inside
  EXPECT_DOUBLE_EQ(s.request_window_tokens[4], 0);   // after the window
}

TEST(SteadyStateTest, TokenTimesAreCountedInsideTheWindow) {
  std::vector<RequestTimeline> requests = six_in_pairs();
  requests[0].token_times_s = {0.1, 0.6, 1.0, 4.5};  // one before, two in, one after the window
  requests[0].output_tokens = 4;
  const SteadyState s = steady_state(requests, std::vector<EnergyReading>{{0, 0}, {6, 600}});
  ASSERT_TRUE(s.found) << s.why;
  EXPECT_DOUBLE_EQ(s.tokens, 32);
}

TEST(SteadyStateTest, TooShortARunHasNoWindowAndSaysWhy) {
  std::vector<RequestTimeline> requests = six_in_pairs();
  requests.resize(3);
  const SteadyState s = steady_state(requests, std::vector<EnergyReading>{{0, 0}, {6, 600}});
  EXPECT_FALSE(s.found);
  EXPECT_NE(s.why.find("too few requests"), std::string::npos) << s.why;
  const std::vector<EnergyReading> late = {{1, 0}, {6, 600}};  // readings start late
  EXPECT_FALSE(steady_state(six_in_pairs(), late).found);
}

TEST(SteadyStateTest, EnergyBetweenInterpolatesTheCounter) {
  const std::vector<EnergyReading> readings = {{0, 0}, {1, 100}, {3, 140}};
  EXPECT_DOUBLE_EQ(energy_between(readings, 0.5, 2), 70);
  EXPECT_DOUBLE_EQ(energy_between(readings, -1, 10), 140);
  EXPECT_DOUBLE_EQ(energy_between(readings, 2, 1), 0);
}

}  // namespace
}  // namespace zeus::proxy
