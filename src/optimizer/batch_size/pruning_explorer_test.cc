#include "optimizer/batch_size/pruning_explorer.h"

#include <gtest/gtest.h>

#include <vector>

namespace zeus::bso {
namespace {

constexpr TrialStatus C = TrialStatus::kConverged;
constexpr TrialStatus N = TrialStatus::kNotConverged;
constexpr TrialStatus F = TrialStatus::kFailed;
constexpr TrialStatus D = TrialStatus::kDispatched;

const std::vector<int> kSizes = {8, 16, 32, 64, 128};

PruningDecision step(const std::vector<PruningObservation>& history,
                     const std::vector<int>& sizes = kSizes, int default_bs = 32, int rounds = 2) {
  Result<PruningDecision> d = next_pruning_step(sizes, default_bs, rounds, history);
  EXPECT_TRUE(d.has_value()) << d.error().to_string();
  return d.value_or(PruningDecision{});
}

void expect_explore(const PruningDecision& d, int bs, int round) {
  EXPECT_EQ(d.action, PruningAction::kExplore);
  EXPECT_EQ(d.batch_size, bs);
  EXPECT_EQ(d.round, round);
}

TEST(PruningExplorerTest, StartsAtTheDefaultThenGoesDownThenUp) {
  expect_explore(step({}), 32, 1);
  expect_explore(step({{32, C, 100}}), 16, 1);
  expect_explore(step({{32, C, 100}, {16, C, 80}}), 8, 1);
  expect_explore(step({{32, C, 100}, {16, C, 80}, {8, C, 90}}), 64, 1);
  expect_explore(step({{32, C, 100}, {16, C, 80}, {8, C, 90}, {64, C, 120}}), 128, 1);
}

TEST(PruningExplorerTest, EverythingConvergesTwoRoundsThenAllAreArms) {
  std::vector<PruningObservation> h = {
      {32, C, 100}, {16, C, 80}, {8, C, 90}, {64, C, 120}, {128, C, 150}};
  // Round 2 starts from the cheapest survivor, 16: down 16, 8; up 32, 64, 128.
  expect_explore(step(h), 16, 2);
  h.push_back({16, C, 82});
  expect_explore(step(h), 8, 2);
  h.push_back({8, C, 91});
  expect_explore(step(h), 32, 2);
  h.push_back({32, C, 99});
  h.push_back({64, C, 121});
  expect_explore(step(h), 128, 2);
  h.push_back({128, C, 149});
  PruningDecision d = step(h);
  EXPECT_EQ(d.action, PruningAction::kDone);
  EXPECT_EQ(d.arms, kSizes);
}

TEST(PruningExplorerTest, DefaultIsTheSmallest) {
  const std::vector<int> sizes = {32, 64, 128};
  expect_explore(step({}, sizes), 32, 1);
  // Nothing below 32: the upward direction follows at once.
  expect_explore(step({{32, C, 100}}, sizes), 64, 1);
  expect_explore(step({{32, C, 100}, {64, C, 90}}, sizes), 128, 1);
  // 128 fails: survivors {32, 64}; round 2 from 64 (cheapest): down 64, 32; up: nothing left.
  std::vector<PruningObservation> h = {{32, C, 100}, {64, C, 90}, {128, N, 300}};
  expect_explore(step(h, sizes), 64, 2);
  h.push_back({64, C, 95});
  expect_explore(step(h, sizes), 32, 2);
  h.push_back({32, C, 101});
  PruningDecision d = step(h, sizes);
  EXPECT_EQ(d.action, PruningAction::kDone);
  EXPECT_EQ(d.arms, (std::vector<int>{32, 64}));
}

TEST(PruningExplorerTest, DefaultIsTheLargest) {
  const std::vector<int> sizes = {8, 16, 32};
  // Down 32, 16, 8; nothing above.
  expect_explore(step({{32, C, 100}}, sizes), 16, 1);
  expect_explore(step({{32, C, 100}, {16, C, 70}}, sizes), 8, 1);
  // Round 2 from 16 (cheapest of round 1): down 16, 8; up 32.
  std::vector<PruningObservation> h = {{32, C, 100}, {16, C, 70}, {8, C, 75}};
  expect_explore(step(h, sizes), 16, 2);
  h.push_back({16, C, 72});
  expect_explore(step(h, sizes), 8, 2);
  h.push_back({8, N, 200});  // 8 fails in round 2: it is pruned
  expect_explore(step(h, sizes), 32, 2);
  h.push_back({32, C, 101});
  PruningDecision d = step(h, sizes);
  EXPECT_EQ(d.action, PruningAction::kDone);
  EXPECT_EQ(d.arms, (std::vector<int>{16, 32}));
}

TEST(PruningExplorerTest, DirectionThatFailsAtOnceIsNotWalked) {
  // 16 fails: 8 is never tried downward; go up from 64.
  expect_explore(step({{32, C, 100}, {16, N, 500}}), 64, 1);
  // 64 fails (e.g. out of memory, marked failed): 128 is never tried; round 2 has only {32}.
  std::vector<PruningObservation> h = {{32, C, 100}, {16, N, 500}, {64, F, 0}};
  expect_explore(step(h), 32, 2);
  h.push_back({32, C, 98});
  PruningDecision d = step(h);
  EXPECT_EQ(d.action, PruningAction::kDone);
  EXPECT_EQ(d.arms, (std::vector<int>{32}));
}

TEST(PruningExplorerTest, DefaultFailsAtOnceThenUpward) {
  expect_explore(step({{32, N, 300}}), 64, 1);
  std::vector<PruningObservation> h = {{32, N, 300}, {64, C, 120}, {128, C, 110}};
  // Round 2 space {64, 128} from 128: down 128, 64.
  expect_explore(step(h), 128, 2);
}

TEST(PruningExplorerTest, NothingConvergesFallsBackToTheDefault) {
  PruningDecision d = step({{32, N, 300}, {64, N, 400}});
  EXPECT_EQ(d.action, PruningAction::kDone);
  EXPECT_EQ(d.arms, (std::vector<int>{32}));
  // A second round without survivors keeps the first round's survivors.
  d = step({{32, C, 100}, {16, N, 1}, {64, C, 90}, {128, N, 1}, {64, N, 500}, {32, N, 500}});
  EXPECT_EQ(d.action, PruningAction::kDone);
  EXPECT_EQ(d.arms, (std::vector<int>{32, 64}));
}

TEST(PruningExplorerTest, ConcurrentRequestsGetTheBestKnownWhileAStepRuns) {
  // Before anything converged: the default.
  PruningDecision d = step({{32, D, 0}});
  EXPECT_EQ(d.action, PruningAction::kUseBestKnown);
  EXPECT_EQ(d.batch_size, 32);
  EXPECT_EQ(d.round, 1);
  // 16 is cheapest so far while 8 runs.
  d = step({{32, C, 50}, {16, C, 40}, {8, D, 0}});
  EXPECT_EQ(d.action, PruningAction::kUseBestKnown);
  EXPECT_EQ(d.batch_size, 16);
  // In round 2 the cheapest over both rounds counts.
  d = step({{32, C, 50}, {16, N, 1}, {64, C, 45}, {128, N, 1}, {64, D, 0}});
  EXPECT_EQ(d.action, PruningAction::kUseBestKnown);
  EXPECT_EQ(d.batch_size, 64);
  EXPECT_EQ(d.round, 2);
}

TEST(PruningExplorerTest, ZeroRoundsMakesEverySizeAnArm) {
  PruningDecision d = step({}, kSizes, 32, 0);
  EXPECT_EQ(d.action, PruningAction::kDone);
  EXPECT_EQ(d.arms, kSizes);
}

TEST(PruningExplorerTest, OneRound) {
  PruningDecision d = step({{32, C, 50}, {16, N, 1}, {64, C, 45}, {128, C, 60}}, kSizes, 32, 1);
  EXPECT_EQ(d.action, PruningAction::kDone);
  EXPECT_EQ(d.arms, (std::vector<int>{32, 64, 128}));
}

TEST(PruningExplorerTest, InconsistentHistoryIsAnError) {
  std::vector<PruningObservation> h = {{32, C, 100}, {64, C, 90}};  // 16 was due
  Result<PruningDecision> d = next_pruning_step(kSizes, 32, 2, h);
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().code, ErrorCode::kInternal);
  EXPECT_NE(d.error().message.find("16"), std::string::npos);
}

TEST(PruningExplorerTest, PruneFactorSkipsSurvivorsObservedWellAboveTheBest) {
  // Round 1: everything converges; 8 (cost 160) and 128 (151) are over 1.5 × 100.
  const std::vector<PruningObservation> round1 = {
      {32, C, 100}, {16, C, 120}, {8, C, 160}, {64, C, 140}, {128, C, 151}};
  auto with_factor = [](const std::vector<PruningObservation>& h, std::optional<double> factor) {
    Result<PruningDecision> d = next_pruning_step(kSizes, 32, 2, h, factor);
    EXPECT_TRUE(d.has_value());
    return d.value_or(PruningDecision{});
  };
  // Round 2 starts at the cheapest (32), goes down to 16, then (8 skipped) up to 64, then done.
  std::vector<PruningObservation> h = round1;
  expect_explore(with_factor(h, 1.5), 32, 2);
  h.push_back({32, C, 100});
  expect_explore(with_factor(h, 1.5), 16, 2);
  h.push_back({16, C, 110});
  expect_explore(with_factor(h, 1.5), 64, 2);
  h.push_back({64, C, 130});
  PruningDecision d = with_factor(h, 1.5);
  EXPECT_EQ(d.action, PruningAction::kDone);
  EXPECT_EQ(d.arms, (std::vector<int>{16, 32, 64}));
  // Without the factor (upstream) round 2 re-runs 8 after 16.
  expect_explore(with_factor({round1.begin(), round1.end()}, std::nullopt), 32, 2);
  std::vector<PruningObservation> up = round1;
  up.push_back({32, C, 100});
  up.push_back({16, C, 110});
  expect_explore(with_factor(up, std::nullopt), 8, 2);
}

TEST(PruningExplorerTest, StopAfterRisesEndsADirectionPastTheMinimum) {
  const std::vector<int> sizes = {8, 16, 32, 64, 128, 256};
  auto next = [&](const std::vector<PruningObservation>& h, int rises) {
    Result<PruningDecision> d = next_pruning_step(sizes, 128, 1, h, std::nullopt, rises);
    EXPECT_TRUE(d.has_value());
    return d.value_or(PruningDecision{});
  };
  // Down from 128: 100, 64: 90, 32: 95 (rise 1), 16: 120 (rise 2) -> with 2 rises 8 is skipped.
  const std::vector<PruningObservation> down = {{128, C, 100}, {64, C, 90}, {32, C, 95}, {16, C, 120}};
  expect_explore(next(down, 0), 8, 1);
  expect_explore(next(down, 2), 256, 1);
  // Up, the first step is compared with the round's default: 128 (100), 64 (110) ends the way
  // down after one rise; 256 (105) is a rise over 128, so 512 is skipped.
  const std::vector<int> four = {64, 128, 256, 512};
  const std::vector<PruningObservation> both = {{128, C, 100}, {64, C, 110}, {256, C, 105}};
  Result<PruningDecision> done = next_pruning_step(four, 128, 1, both, std::nullopt, 1);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->action, PruningAction::kDone);
  EXPECT_EQ(done->arms, (std::vector<int>{64, 128, 256}));
  expect_explore(*next_pruning_step(four, 128, 1, both, std::nullopt, 0), 512, 1);
  // A fall resets the count: 64 (90) after 128 (100), then 32 (95) is one rise only.
  expect_explore(next({{128, C, 100}, {64, C, 90}, {32, C, 95}}, 2), 16, 1);
}

}  // namespace
}  // namespace zeus::bso
