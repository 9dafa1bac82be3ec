// What the governor observes, built from request events: waiting and running requests, their
// context, the prompt rate, latencies once each, the bytes-to-tokens ratio and the attainment.
#include "serving/governor/serving_load.h"

#include <gtest/gtest.h>

namespace zeus {
namespace {

TEST(ServingLoadTest, WaitingUntilTheFirstTokenThenRunningWithItsContext) {
  ServingLoad load;
  load.observe(0);
  load.started(1, 0.0, true, 400);   // ~100 prompt tokens
  load.started(2, 0.5, true, 4000);  // ~1000
  ServingObservation o = load.observe(1.0);
  EXPECT_EQ(o.waiting, 2);
  EXPECT_EQ(o.running, 0);
  EXPECT_DOUBLE_EQ(o.prompt_tokens_per_s, 1100);  // arrived in the last second
  EXPECT_DOUBLE_EQ(o.mean_prompt_tokens, 550);
  load.tokens(1, 1.2, 1);
  load.tokens(1, 1.3, 4);
  o = load.observe(2.0);
  EXPECT_EQ(o.waiting, 1);
  EXPECT_EQ(o.running, 1);
  EXPECT_DOUBLE_EQ(o.mean_context_tokens, 105);  // prompt + 5 output
  EXPECT_DOUBLE_EQ(o.prompt_tokens_per_s, 0);    // nothing arrived since
  EXPECT_DOUBLE_EQ(o.mean_prompt_tokens, 0);
  ASSERT_EQ(o.ttft_s.size(), 1u);
  EXPECT_NEAR(o.ttft_s[0], 1.2, 1e-12);
  EXPECT_TRUE(load.observe(2.5).ttft_s.empty());  // each latency is observed once
}

TEST(ServingLoadTest, TpotOverTheTokensAfterTheFirstAndAttainmentAgainstTheSlos) {
  ServingLoad load;
  load.set_slos(0.5, 0.05);
  load.started(1, 0.0, true, 100);
  load.tokens(1, 0.2, 1);
  load.tokens(1, 1.2, 10);  // 11 tokens, the last at 1.2 s
  load.finished(1, 1.2);    // TPOT (1.2 - 0.2) / 10 = 0.1 s: over
  load.started(2, 2.0, true, 100);
  load.tokens(2, 2.1, 3);
  load.finished(2, 2.18);  // TPOT 0.04: within
  load.started(3, 3.0, true, 100);
  load.tokens(3, 4.0, 1);
  load.finished(3, 4.0);  // one token: TTFT 1 s over, no TPOT
  const ServingObservation o = load.observe(5);
  ASSERT_EQ(o.tpot_s.size(), 2u);
  EXPECT_NEAR(o.tpot_s[0], 0.1, 1e-12);
  EXPECT_NEAR(o.tpot_s[1], 0.04, 1e-12);
  const SloAttainment a = load.attainment();
  EXPECT_EQ(a.finished, 3);
  EXPECT_EQ(a.within_both, 1);
  EXPECT_EQ(a.ttft_over, 1);
  EXPECT_EQ(a.tpot_over, 1);
  EXPECT_NEAR(a.rate(), 1.0 / 3, 1e-12);
  EXPECT_EQ(o.running + o.waiting, 0);  // finished requests leave the load
  EXPECT_NEAR(o.mean_output_tokens, (11 + 3 + 1) / 3.0, 1e-12);  // the answers' mean length
  EXPECT_EQ(load.observe(6).mean_output_tokens, 0);  // none finished since: unknown
}

TEST(ServingLoadTest, WholeAnswersCountInTheLoadButGiveNoLatencies) {
  ServingLoad load;
  load.started(1, 0.0, false, 100);
  EXPECT_EQ(load.observe(0.5).waiting, 1);
  load.tokens(1, 2.0, 50);  // the whole answer at once
  load.finished(1, 2.0);
  const ServingObservation o = load.observe(3);
  EXPECT_TRUE(o.ttft_s.empty());
  EXPECT_TRUE(o.tpot_s.empty());
  EXPECT_EQ(load.attainment().finished, 0);
  EXPECT_EQ(o.mean_output_tokens, 50);  // its length still counts
}

TEST(ServingLoadTest, UsageCorrectsTheBytesToTokensRatioWithinBounds) {
  ServingLoad load;
  EXPECT_DOUBLE_EQ(load.tokens_per_byte(), 0.25);
  for (uint64_t id = 1; id <= 60; ++id) {  // a tokenizer at 1 token per 2 bytes
    load.started(id, 0, true, 1000);
    load.prompt_tokens(id, 500);
    load.finished(id, 1);
  }
  EXPECT_NEAR(load.tokens_per_byte(), 0.5, 0.001);
  load.started(100, 2, true, 1000);
  load.prompt_tokens(100, 1 << 30);  // an absurd usage moves the ratio to its bound at most
  EXPECT_LE(load.tokens_per_byte(), 4.0);
  load.prompt_tokens(999, 10);  // an unknown request: ignored
  load.tokens(999, 3, 10);
  load.finished(999, 3);
}

TEST(ServingLoadTest, LatenciesKeptPerObservationAreBounded) {
  ServingLoad load(8);
  for (uint64_t id = 1; id <= 100; ++id) {
    load.started(id, 0, true, 10);
    load.tokens(id, 0.1, 2);
    load.finished(id, 0.2);
  }
  const ServingObservation o = load.observe(1);
  EXPECT_EQ(o.ttft_s.size(), 8u);
  EXPECT_EQ(o.tpot_s.size(), 8u);
  EXPECT_EQ(load.attainment().finished, 100);  // every one counted all the same
}

}  // namespace
}  // namespace zeus
