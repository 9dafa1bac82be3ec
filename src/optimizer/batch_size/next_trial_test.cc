#include "optimizer/batch_size/next_trial.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "optimizer/batch_size/pruning_explorer.h"

namespace zeus::bso {
namespace {

JobSpec spec() {
  JobSpec s;
  s.job_id = "j";
  s.batch_sizes = {16, 32};
  s.default_batch_size = 32;
  s.max_power_w = 100;
  s.num_pruning_rounds = 1;
  s.mab_num_explorations = 0;
  return s;
}

Trial t(int number, int bs, TrialKind kind, TrialStatus status, double cost) {
  Trial x;
  x.job_id = "j";
  x.trial_number = number;
  x.batch_size = bs;
  x.kind = kind;
  x.status = status;
  x.cost = cost;
  return x;
}

constexpr TrialKind P = TrialKind::kPruning;
constexpr TrialKind M = TrialKind::kMab;

TEST(NextTrialTest, PruningStepsComeFirst) {
  Rng rng(1);
  const Rng untouched = rng;
  std::vector<Trial> h = {t(1, 32, P, TrialStatus::kConverged, 100)};
  Result<NextTrialDecision> d = decide_next_trial(spec(), h, rng);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->batch_size, 16);
  EXPECT_EQ(d->kind, TrialKind::kPruning);
  EXPECT_EQ(d->pruning_round, 1);
  EXPECT_EQ(rng, untouched);  // pruning draws nothing
  h.push_back(t(2, 16, P, TrialStatus::kDispatched, 0));
  d = decide_next_trial(spec(), h, rng);
  EXPECT_EQ(d->kind, TrialKind::kConcurrent);
  EXPECT_EQ(d->batch_size, 32);
}

TEST(NextTrialTest, ArmsSeeEndedCostsOnlyWithinTheWindow) {
  // Pruning: 32 (100), 16 (90). Then MAB history of 16: a not-converged 300 (its penalty), a
  // failed trial (no cost), and 95. Exact beliefs (all equal costs) make the choice certain.
  std::vector<Trial> h = {
      t(1, 32, P, TrialStatus::kConverged, 100), t(2, 16, P, TrialStatus::kConverged, 90),
      t(3, 16, M, TrialStatus::kNotConverged, 300), t(4, 16, M, TrialStatus::kFailed, 1),
      t(5, 16, M, TrialStatus::kDispatched, 1)};
  Rng rng(1);
  JobSpec s = spec();
  s.window_size = 1;  // 16 sees only 300; 32 sees 100: pick 32
  EXPECT_EQ(decide_next_trial(s, h, rng)->batch_size, 32);
  h.push_back(t(6, 16, M, TrialStatus::kConverged, 95));
  EXPECT_EQ(decide_next_trial(s, h, rng)->batch_size, 16);  // window: 95 < 100
  // All history: 16 has {90, 300, 95}, mean 161.7 with a wide spread; over many draws 32 (exactly
  // 100) wins most of the time.
  s.window_size = 0;
  int picks_32 = 0;
  for (int i = 0; i < 200; ++i) picks_32 += decide_next_trial(s, h, rng)->batch_size == 32;
  EXPECT_GT(picks_32, 120);
}

TEST(NextTrialTest, MinConvergedCost) {
  std::vector<Trial> h = {
      t(1, 32, P, TrialStatus::kNotConverged, 10), t(2, 16, P, TrialStatus::kConverged, 90),
      t(3, 16, M, TrialStatus::kConverged, 80), t(4, 16, M, TrialStatus::kFailed, 1)};
  EXPECT_EQ(min_converged_cost(h), 80.0);
  EXPECT_FALSE(min_converged_cost(std::span<const Trial>()).has_value());
}

}  // namespace
}  // namespace zeus::bso

namespace zeus::bso {
namespace {

JobSpec six_sizes() {
  JobSpec s;
  s.job_id = "j";
  s.batch_sizes = {32, 64, 128, 256, 512, 1024};
  s.default_batch_size = 256;
  s.max_power_w = 100;
  s.num_pruning_rounds = 2;
  s.mab_num_explorations = 0;
  return s;
}

Trial trial(int number, int bs, TrialStatus status, double cost) {
  Trial x;
  x.job_id = "j";
  x.trial_number = number;
  x.batch_size = bs;
  x.kind = TrialKind::kPruning;
  x.status = status;
  x.cost = cost;
  return x;
}

// The sequence a new user hit: 256 converged, 128 interrupted (PATCH /trials with no result),
// then the optimizer must offer 128 again, not jump to 512.
TEST(NextTrialTest, AnInterruptedPruningTrialIsOfferedAgain) {
  Rng rng(3);
  std::vector<Trial> h = {trial(1, 256, TrialStatus::kConverged, 100),
                          trial(2, 128, TrialStatus::kFailed, 0)};
  Result<NextTrialDecision> d = decide_next_trial(six_sizes(), h, rng);
  ASSERT_TRUE(d.has_value()) << d.error().to_string();
  EXPECT_EQ(d->batch_size, 128);
  EXPECT_EQ(d->kind, TrialKind::kPruning);
  EXPECT_EQ(d->pruning_round, 1);
  // Not converged is a real result: the direction below stops there.
  h[1].status = TrialStatus::kNotConverged;
  d = decide_next_trial(six_sizes(), h, rng);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->batch_size, 512);
}

// Property: interruptions never change what pruning concludes. Random outcomes per batch size;
// the same history with failed trials inserted before random steps reaches the same arms.
TEST(NextTrialTest, NoSequenceOfInterruptionsRemovesABatchSize) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    Rng outcome_rng(seed);
    const JobSpec spec = six_sizes();
    std::map<int, bool> converges;
    std::map<int, double> cost;
    for (int bs : spec.batch_sizes) {
      converges[bs] = outcome_rng.uniform() < 0.7;
      cost[bs] = 50.0 + 100.0 * outcome_rng.uniform();
    }
    converges[spec.default_batch_size] = true;
    auto arms_after = [&](double interrupt_probability) {
      Rng rng(seed);
      Rng coin(seed * 7919);
      std::vector<Trial> h;
      for (int step = 0; step < 40; ++step) {
        Result<NextTrialDecision> d = decide_next_trial(spec, h, rng);
        EXPECT_TRUE(d.has_value());
        if (!d || d->kind != TrialKind::kPruning) break;
        const bool interrupted = coin.uniform() < interrupt_probability;
        const TrialStatus status = interrupted                ? TrialStatus::kFailed
                                   : converges[d->batch_size] ? TrialStatus::kConverged
                                                              : TrialStatus::kNotConverged;
        h.push_back(
            trial(static_cast<int>(h.size()) + 1, d->batch_size, status, cost[d->batch_size]));
      }
      std::vector<PruningObservation> done;
      for (const Trial& t : h) {
        if (t.status != TrialStatus::kFailed) done.push_back({t.batch_size, t.status, t.cost});
      }
      Result<PruningDecision> end =
          next_pruning_step(spec.batch_sizes, spec.default_batch_size, 2, done, spec.prune_factor,
                            spec.pruning_stop_after_rises);
      EXPECT_TRUE(end.has_value());
      EXPECT_EQ(end->action, PruningAction::kDone) << "seed " << seed;
      return end->arms;
    };
    EXPECT_EQ(arms_after(0.4), arms_after(0.0)) << "seed " << seed;
  }
}

}  // namespace
}  // namespace zeus::bso
