// EnergyLedger: idle energy is never spread, shares follow the tokens in each interval (twice the
// tokens in one batch: twice the energy), prefill by prompt tokens, usage's counts, the equal
// split when nothing is known, and attributed + idle = measured whatever happens.
#include "proxy/attribution.h"

#include <gtest/gtest.h>

#include <map>

namespace zeus::proxy {
namespace {

std::map<RequestId, RequestEnergy> by_id(EnergyLedger& ledger) {
  std::map<RequestId, RequestEnergy> out;
  for (auto& r : ledger.take_finished()) out[r.id] = r;
  return out;
}

TEST(EnergyLedgerTest, EnergyWithNoRequestInFlightIsIdle) {
  EnergyLedger ledger;
  ledger.sample(0, 100);
  ledger.start(1, 0.5, true);
  ledger.tokens(1, 0.8, 1);
  ledger.end(1, 1.0);
  ledger.sample(1, 150);  // 50 J over 1 s, half of it with the request in flight
  ledger.sample(2, 200);  // nobody: idle
  auto done = by_id(ledger);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_DOUBLE_EQ(done[1].energy_j, 25);
  EXPECT_EQ(done[1].method, "tokens");
  EXPECT_EQ(done[1].output_tokens, 1);
  EXPECT_DOUBLE_EQ(ledger.idle_j(), 75);
  EXPECT_DOUBLE_EQ(ledger.measured_j(), 100);
  EXPECT_DOUBLE_EQ(ledger.pending_j(), 0);
}

TEST(EnergyLedgerTest, TwiceTheTokensInTheSameBatchIsTwiceTheEnergy) {
  EnergyLedger ledger;
  ledger.sample(0, 0);
  ledger.start(1, 0, true);
  ledger.start(2, 0, true);
  for (int step = 0; step < 10; ++step) {  // 0.2 s steps; request 1 two tokens, request 2 one
    const double t = 0.2 * step + 0.1;
    ledger.tokens(1, t, 2);
    ledger.tokens(2, t, 1);
    if (step % 5 == 4) ledger.sample(0.2 * (step + 1), 30.0 * (step + 1) / 5);
  }
  ledger.end(1, 2);
  ledger.end(2, 2);
  ledger.sample(2, 60);
  auto done = by_id(ledger);
  EXPECT_DOUBLE_EQ(done[1].energy_j, 40);
  EXPECT_DOUBLE_EQ(done[2].energy_j, 20);
  EXPECT_EQ(done[1].output_tokens, 20);
  EXPECT_DOUBLE_EQ(ledger.idle_j(), 0);
}

TEST(EnergyLedgerTest, PrefillWeighsThePromptTokensInTheIntervalOfTheFirstToken) {
  EnergyLedger ledger;
  ledger.sample(0, 0);
  ledger.start(1, 0, true);
  ledger.start(2, 0, true);
  ledger.prompt_tokens(1, 8);
  ledger.prompt_tokens(2, 2);
  ledger.tokens(1, 0.5, 1);
  ledger.tokens(2, 0.5, 1);
  ledger.sample(1, 100);  // weights 8 + 1 and 2 + 1
  ledger.tokens(1, 1.5, 1);
  ledger.tokens(2, 1.5, 1);
  ledger.end(1, 2);
  ledger.end(2, 2);
  ledger.sample(2, 140);  // weights 1 and 1
  auto done = by_id(ledger);
  EXPECT_DOUBLE_EQ(done[1].energy_j, 75 + 20);
  EXPECT_DOUBLE_EQ(done[2].energy_j, 25 + 20);
  EXPECT_EQ(done[1].prompt_tokens, 8);
}

TEST(EnergyLedgerTest, UsageCountsScaleTheChunksCounted) {
  EnergyLedger ledger;
  ledger.sample(0, 0);
  ledger.start(1, 0, true);
  ledger.start(2, 0, true);
  ledger.tokens(1, 0.5, 5);  // 5 chunks of 2 tokens each, says usage
  ledger.tokens(2, 0.5, 10);
  ledger.output_tokens(1, 10);
  ledger.end(1, 1);
  ledger.end(2, 1);
  ledger.sample(1, 100);
  auto done = by_id(ledger);
  EXPECT_DOUBLE_EQ(done[1].energy_j, 50);
  EXPECT_DOUBLE_EQ(done[2].energy_j, 50);
  EXPECT_EQ(done[1].output_tokens, 10);
}

TEST(EnergyLedgerTest, NothingKnownSplitsByTimeInFlight) {
  EnergyLedger ledger;
  ledger.sample(0, 0);
  ledger.start(1, 0, false);
  ledger.start(2, 0.5, false);
  ledger.end(1, 1);
  ledger.end(2, 1);
  ledger.sample(1, 90);  // 1 s and 0.5 s in flight, no token counts
  auto done = by_id(ledger);
  EXPECT_DOUBLE_EQ(done[1].energy_j, 60);
  EXPECT_DOUBLE_EQ(done[2].energy_j, 30);
  EXPECT_EQ(done[1].method, "equal");
}

TEST(EnergyLedgerTest, ANonStreamedRequestIsSpreadOverItsLifeOnceItsCountIsKnown) {
  EnergyLedger ledger;
  ledger.sample(0, 0);
  ledger.start(1, 0, false);  // not streamed: 20 tokens, known at its end
  ledger.start(2, 0, true);   // streamed: 1 token per 0.1 s
  for (int i = 1; i <= 10; ++i) ledger.tokens(2, 0.1 * i - 0.05, 1);
  ledger.sample(1, 50);
  for (int i = 11; i <= 20; ++i) ledger.tokens(2, 0.1 * i - 0.05, 1);
  ledger.output_tokens(1, 20);
  ledger.end(1, 2);
  ledger.end(2, 2);
  ledger.sample(2, 100);
  auto done = by_id(ledger);
  // Both weigh 10 tokens per interval: an even split, settled with every weight known.
  EXPECT_NEAR(done[1].energy_j, 50, 1e-9);
  EXPECT_NEAR(done[2].energy_j, 50, 1e-9);
  EXPECT_EQ(done[1].method, "tokens");
}

TEST(EnergyLedgerTest, EstimatesChangeSharesNeverTheSum) {
  EnergyLedger ledger;
  ledger.sample(0, 1000);
  double energy = 1000;
  RequestId next = 1;
  std::vector<RequestId> open;
  for (int step = 1; step <= 200; ++step) {
    const double t = 0.05 * step;
    if (step % 3 == 0) {
      ledger.start(next, t - 0.01, step % 2 == 0);
      open.push_back(next++);
    }
    for (RequestId id : open) ledger.tokens(id, t - 0.005, static_cast<int64_t>(id % 3));
    if (step % 7 == 0 && !open.empty()) {
      const RequestId id = open.front();
      open.erase(open.begin());
      ledger.output_tokens(id, static_cast<int64_t>(id * 5));
      ledger.prompt_tokens(id, static_cast<int64_t>(id));
      ledger.end(id, t - 0.002);
    }
    energy += step % 11 == 0 ? -3000 : 10 + step % 5;  // a counter reset now and then
    if (step % 4 == 0) ledger.sample(t, energy);
  }
  for (RequestId id : open) ledger.end(id, 10.5);
  ledger.sample(11, energy + 20);
  double sum = 0;
  size_t settled = 0;
  for (const auto& r : ledger.take_finished()) {
    EXPECT_GE(r.energy_j, 0);
    sum += r.energy_j;
    ++settled;
  }
  EXPECT_EQ(settled, next - 1);
  EXPECT_NEAR(sum, ledger.attributed_j(), 1e-9);
  EXPECT_NEAR(ledger.attributed_j() + ledger.idle_j(), ledger.measured_j(), 1e-9);
  EXPECT_NEAR(ledger.pending_j(), 0, 1e-9);
  EXPECT_EQ(ledger.in_flight(), 0u);
}

TEST(EnergyLedgerTest, ARequestBeforeTheFirstReadingIsChargedNothing) {
  EnergyLedger ledger;
  ledger.start(1, 0, true);
  ledger.end(1, 0.5);
  ledger.sample(1, 100);
  auto done = by_id(ledger);
  EXPECT_EQ(done[1].method, "none");
  EXPECT_DOUBLE_EQ(done[1].energy_j, 0);
}

}  // namespace
}  // namespace zeus::proxy

namespace zeus::proxy {
namespace {

// Many requests of every kind coming and going, a reading at each end (as the proxy does) and
// between: the sums an interval keeps stay right as weights become known, so nothing is lost,
// nothing is negative, and a batch in lockstep is still split by its tokens.
TEST(EnergyLedgerTest, ManyRequestsOfEveryKindKeepTheSumAndTheTokenSplit) {
  EnergyLedger ledger;
  double t = 0, energy = 0;
  ledger.sample(t, energy);
  uint64_t seed = 12345;
  const auto next = [&seed](int n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((seed >> 33) % static_cast<uint64_t>(n));
  };
  std::map<RequestId, bool> open;  // id -> streamed
  RequestId next_id = 1;
  double settled_j = 0;
  size_t settled = 0;
  for (int step = 0; step < 3000; ++step) {
    t += 0.01;
    energy += 1 + next(5);
    if (open.size() < 200 && next(3) == 0) {
      const bool streamed = next(4) != 0;
      ledger.start(next_id, t, streamed);
      open[next_id++] = streamed;
    }
    for (const auto& [id, streamed] : open) {
      if (streamed && next(2) == 0) ledger.tokens(id, t, 1 + next(3));
    }
    if (!open.empty() && next(4) == 0) {
      auto it = open.begin();
      std::advance(it, next(static_cast<int>(open.size())));
      if (next(2) == 0) ledger.prompt_tokens(it->first, next(50));
      if (next(3) != 0) ledger.output_tokens(it->first, next(100));
      ledger.end(it->first, t);
      open.erase(it);
      ledger.sample(t, energy);
    } else if (step % 10 == 0) {
      ledger.sample(t, energy);
    }
    for (const RequestEnergy& r : ledger.take_finished()) {
      EXPECT_GE(r.energy_j, 0) << r.id;
      settled_j += r.energy_j;
      ++settled;
    }
  }
  EXPECT_GT(settled, 500u);
  EXPECT_NEAR(settled_j, ledger.attributed_j(), 1e-6 * ledger.measured_j());
  EXPECT_NEAR(ledger.attributed_j() + ledger.idle_j() + ledger.pending_j(), ledger.measured_j(),
              1e-9 * ledger.measured_j());
  EXPECT_GE(ledger.pending_j(), -1e-6);
  EXPECT_EQ(ledger.in_flight(), open.size());

  // Then a batch of four in lockstep, one with three times the tokens, ending together.
  for (const auto& [id, streamed] : open) ledger.end(id, t);
  ledger.sample(t, energy);
  ledger.take_finished();
  for (RequestId id = 1000000; id < 1000004; ++id) ledger.start(id, t, true);
  for (int step = 0; step < 50; ++step) {
    t += 0.01;
    energy += 7;
    for (RequestId id = 1000000; id < 1000004; ++id) ledger.tokens(id, t, id == 1000000 ? 3 : 1);
    if (step % 7 == 0) ledger.sample(t, energy);
  }
  for (RequestId id = 1000000; id < 1000004; ++id) ledger.end(id, t);
  ledger.sample(t, energy);
  auto done = by_id(ledger);
  ASSERT_EQ(done.size(), 4u);
  EXPECT_NEAR(done[1000000].energy_j / done[1000001].energy_j, 3.0, 0.05);
  EXPECT_NEAR(done[1000002].energy_j, done[1000003].energy_j, 1e-9);
}

}  // namespace
}  // namespace zeus::proxy
