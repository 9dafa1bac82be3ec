#include <gtest/gtest.h>

#include <cmath>

#include "sim/policy.h"
#include "sim/replay.h"
#include "sim/sim_test_util.h"
#include "zeus/sim/simulator.h"

namespace zeus::sim {
namespace {

using testing::toy_trace;

TEST(Simulator, DefaultRunsB0AtMaxPowerEveryRecurrence) {
  WorkloadTrace trace = toy_trace();
  auto history = simulate(trace, PolicyKind::kDefault, SimOptions{});
  ASSERT_TRUE(history.has_value()) << history.error().to_string();
  ASSERT_EQ(history->recurrences.size(), 12u);  // 2 x |B| x |P| = 2 x 3 x 2
  for (const RecurrenceRecord& r : history->recurrences) {
    EXPECT_EQ(r.b, 1);
    EXPECT_EQ(r.p, 1);
    EXPECT_EQ(r.tries, 1);
    EXPECT_TRUE(r.reached);
    EXPECT_DOUBLE_EQ(r.time_s, 40.0);     // 4 epochs x 10 s
    EXPECT_DOUBLE_EQ(r.energy_j, 6000.0);  // x 150 W
    EXPECT_DOUBLE_EQ(r.cost_j, 9000.0);    // 0.5 x 6000 + 0.5 x 300 W x 40 s
  }
  EXPECT_DOUBLE_EQ(history->total_energy_j(), 72000.0);
}

TEST(Simulator, OracleMinimisesExpectedCostWithFailingPathsAsRetries) {
  // b=32 reaches in 2 epochs on 3 paths of 4 and never on the 4th (which runs 10 epochs and
  // retries): expected epochs per recurrence = (2 + 2 + 2 + 10) / 3 = 16/3.
  WorkloadTrace trace = toy_trace("2,2,2,nan");
  Expectation e = expected_recurrence(trace, 2, 0, 0.5);
  EXPECT_DOUBLE_EQ(e.reach_probability, 0.75);
  EXPECT_NEAR(e.cost_j, 1200.0 * 16.0 / 3.0, 1e-9);
  EXPECT_NEAR(e.time_s, 32.0, 1e-9);
  EXPECT_NEAR(e.energy_j, 3200.0, 1e-9);
  EXPECT_TRUE(std::isinf(expected_recurrence(trace, 0, 1, 0.5).cost_j));  // b=8 never reaches
  Expectation best = oracle_optimum(trace, 0.5);
  EXPECT_EQ(best.b, 2);
  EXPECT_EQ(best.p, 0);
  // eta = 0 (time only): 32 @ 200 W is fastest: 5 s x 16/3 epochs x 300 W.
  Expectation fastest = oracle_optimum(trace, 0.0);
  EXPECT_EQ(fastest.b, 2);
  EXPECT_EQ(fastest.p, 1);
  EXPECT_NEAR(fastest.cost_j, 300.0 * 5.0 * 16.0 / 3.0, 1e-9);

  auto history = simulate(trace, PolicyKind::kOracleExpected, SimOptions{});
  ASSERT_TRUE(history.has_value());
  for (const RunRecord& run : history->runs) {
    EXPECT_EQ(run.b, 2);
    EXPECT_EQ(run.p, 0);
    EXPECT_EQ(run.epochs, run.reached ? 2 : 10);
  }
  // The paper's Oracle only takes a (b, p) whose every path reaches: b=16 (paths {4, 4}) at
  // 200 W (2250 J per epoch), 9000 J per recurrence — above the expected optimum's 6400 J.
  Expectation paper = oracle_all_paths_optimum(trace, 0.5);
  EXPECT_EQ(paper.b, 1);
  EXPECT_EQ(paper.p, 1);
  EXPECT_DOUBLE_EQ(paper.cost_j, 9000.0);
  EXPECT_GT(paper.cost_j, best.cost_j);
  auto paper_history = simulate(trace, PolicyKind::kOracle, SimOptions{});
  ASSERT_TRUE(paper_history.has_value());
  for (const RunRecord& run : paper_history->runs) {
    EXPECT_EQ(run.b, 1);
    EXPECT_TRUE(run.reached);
  }
  EXPECT_EQ(policy_name(PolicyKind::kOracleExpected), "Oracle (expected)");
  EXPECT_EQ(*parse_policy("Oracle (expected)"), PolicyKind::kOracleExpected);
}

TEST(Simulator, GridSearchVisitsDownThenUpHighToLowAndPrunes) {
  WorkloadTrace trace = toy_trace("2,2");
  auto history = simulate(trace, PolicyKind::kGridSearch, SimOptions{});
  ASSERT_TRUE(history.has_value());
  // (b, p) of each run: b0 = 16 at 200 then 100 W; down to 8 (fails: pruned, the down direction
  // ends); up to 32 at 200 then 100 W; then the cheapest observed, 32 @ 100 W, forever.
  std::vector<std::pair<int, int>> expected = {{1, 1}, {1, 0}, {0, 1}, {2, 1}, {2, 0}};
  ASSERT_GE(history->runs.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(history->runs[i].b, expected[i].first) << "run " << i;
    EXPECT_EQ(history->runs[i].p, expected[i].second) << "run " << i;
  }
  for (std::size_t i = expected.size(); i < history->runs.size(); ++i) {
    EXPECT_EQ(history->runs[i].b, 2);
    EXPECT_EQ(history->runs[i].p, 0);
    EXPECT_TRUE(history->runs[i].reached);
  }
  // The failed run of b=8 and the retry with b=32 share recurrence 2.
  EXPECT_EQ(history->recurrences[2].tries, 2);
  EXPECT_EQ(history->runs[3].recurrence, 2);
  EXPECT_EQ(history->recurrences.size(), 12u);
}

TEST(Simulator, EarlyStopTruncatesTheRunAtBetaTimesMinCost) {
  WorkloadTrace trace = toy_trace("2,2");
  auto history = simulate(trace, PolicyKind::kGridSearch, SimOptions{});
  ASSERT_TRUE(history.has_value());
  // Min cost after run 0 is 9000 J, so the bound is 18000 J; b=8 @ 200 W costs 3360 J per epoch
  // and crosses it in epoch 6 (20160 J), before its max_epochs of 10.
  const RunRecord& cut = history->runs[2];
  EXPECT_EQ(cut.b, 0);
  EXPECT_FALSE(cut.reached);
  EXPECT_TRUE(cut.early_stopped);
  EXPECT_EQ(cut.epochs, 6);
  EXPECT_DOUBLE_EQ(cut.cost_j, 20160.0);
  EXPECT_DOUBLE_EQ(cut.time_s, 96.0);
  EXPECT_DOUBLE_EQ(history->recurrences[2].cost_j, 20160.0 + 2500.0);

  SimOptions no_stop;
  no_stop.beta = 0.0;
  auto full = simulate(trace, PolicyKind::kGridSearch, no_stop);
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->runs[2].epochs, 10);  // runs to max_epochs and fails
  EXPECT_FALSE(full->runs[2].early_stopped);
}

TEST(Simulator, EarlyStopModesEndTheRunAtTheirEpoch) {
  // b=8 @ 200 W costs 3360 J per epoch and never reaches the target; bound 2 x 9000 = 18000 J.
  WorkloadTrace trace = toy_trace("2,2");
  RunPlan plan;
  plan.b = 0;
  plan.p = 1;
  plan.beta = 2.0;
  plan.min_cost_j = 9000.0;
  plan.early_stop = EarlyStopMode::kAfterCrossing;
  RunRecord after = replay_run_epochs(trace, plan, 12, 0.5);
  EXPECT_EQ(after.epochs, 6);  // 20160 J: the crossing epoch is paid
  // Predictive and the original's known epoch cost stop before it: 5 epochs, 16800 J.
  for (EarlyStopMode mode : {EarlyStopMode::kPredictive, EarlyStopMode::kKnownEpochCost}) {
    plan.early_stop = mode;
    RunRecord run = replay_run_epochs(trace, plan, 12, 0.5);
    EXPECT_EQ(run.epochs, 5);
    EXPECT_DOUBLE_EQ(run.cost_j, 16800.0);
    EXPECT_TRUE(run.early_stopped);
    EXPECT_FALSE(run.reached);
  }
  // With the first epoch profiling (3630 J, the mean over the limits) both still stop after 5.
  plan.profile_power = true;
  for (EarlyStopMode mode : {EarlyStopMode::kPredictive, EarlyStopMode::kKnownEpochCost}) {
    plan.early_stop = mode;
    RunRecord run = replay_run_epochs(trace, plan, 12, 0.5);
    EXPECT_EQ(run.epochs, 5);
    EXPECT_DOUBLE_EQ(run.cost_j, 3630.0 + 4 * 3360.0);
  }
  // The original does not start a run whose first epoch alone would cross the bound.
  plan.min_cost_j = 1000.0;
  plan.early_stop = EarlyStopMode::kKnownEpochCost;
  RunRecord skipped = replay_run_epochs(trace, plan, 12, 0.5);
  EXPECT_EQ(skipped.epochs, 0);
  EXPECT_EQ(skipped.cost_j, 0.0);
  EXPECT_TRUE(skipped.early_stopped);
  plan.early_stop = EarlyStopMode::kPredictive;  // ours runs the first epoch, then stops
  EXPECT_EQ(replay_run_epochs(trace, plan, 12, 0.5).epochs, 1);
}

TEST(Simulator, ProfilingFirstEpochIsTheMeanOverPowerLimits) {
  WorkloadTrace trace = toy_trace();
  RunPlan plan;
  plan.b = 2;
  plan.p = 0;
  plan.profile_power = true;
  RunRecord run = replay_run_epochs(trace, plan, 2, 0.5);
  EXPECT_TRUE(run.reached);
  EXPECT_DOUBLE_EQ(run.time_s, 5.5 + 6.0);                  // mean(6, 5) + 6
  EXPECT_DOUBLE_EQ(run.energy_j, (600.0 + 1000.0) / 2 + 600.0);
}

TEST(Simulator, SameSeedGivesIdenticalHistoryAndSeedsDiffer) {
  WorkloadTrace trace = toy_trace("1,2,3,4,5,nan,7");
  SimOptions options;
  options.seed = 42;
  options.recurrences = 50;
  auto a = simulate(trace, PolicyKind::kOracleExpected, options);
  auto b = simulate(trace, PolicyKind::kOracleExpected, options);
  options.seed = 43;
  auto c = simulate(trace, PolicyKind::kOracleExpected, options);
  ASSERT_TRUE(a && b && c);
  ASSERT_EQ(a->runs.size(), b->runs.size());
  bool differs = a->runs.size() != c->runs.size();
  for (std::size_t i = 0; i < a->runs.size(); ++i) {
    EXPECT_EQ(a->runs[i].epochs, b->runs[i].epochs);
    EXPECT_EQ(a->runs[i].cost_j, b->runs[i].cost_j);
    if (i < c->runs.size() && a->runs[i].epochs != c->runs[i].epochs) differs = true;
  }
  EXPECT_TRUE(differs);
}

TEST(Simulator, OptionsOutOfRangeAreRejected) {
  WorkloadTrace trace = toy_trace();
  SimOptions options;
  options.eta = 1.5;
  auto bad_eta = simulate(trace, PolicyKind::kDefault, options);
  ASSERT_FALSE(bad_eta.has_value());
  EXPECT_NE(bad_eta.error().message.find("eta must be in [0, 1]"), std::string::npos);
  options.eta = 0.5;
  options.beta = 0.5;
  auto bad_beta = simulate(trace, PolicyKind::kDefault, options);
  ASSERT_FALSE(bad_beta.has_value());
  EXPECT_NE(bad_beta.error().message.find("beta must be >= 1"), std::string::npos);
  EXPECT_FALSE(parse_policy("Random").has_value());
  EXPECT_EQ(*parse_policy("GridSearch"), PolicyKind::kGridSearch);
}

}  // namespace
}  // namespace zeus::sim

namespace zeus::sim {
namespace {

TEST(ZeusPolicy, ProfilesEachNewBatchSizeOnceAndConvergesToTheCheapest) {
  WorkloadTrace trace = testing::toy_trace("2,2");
  auto history = simulate(trace, PolicyKind::kZeus, SimOptions{});
  ASSERT_TRUE(history.has_value()) << history.error().to_string();
  std::vector<bool> seen(3, false);
  for (const RunRecord& run : history->runs) {
    EXPECT_EQ(run.profiled, !seen[static_cast<std::size_t>(run.b)]) << "b " << run.b;
    seen[static_cast<std::size_t>(run.b)] = true;
    // ZeusCost selector per batch size: b=16 -> 200 W (2250 < 2370), b=32 -> 100 W (1200 < 1250).
    if (run.b == 1) {
      EXPECT_EQ(run.p, 1);
    }
    if (run.b == 2) {
      EXPECT_EQ(run.p, 0);
    }
  }
  EXPECT_EQ(history->runs.front().b, 1);  // pruning starts at b0
  EXPECT_TRUE(history->runs.front().profiled);
  for (std::size_t i = history->recurrences.size() - 3; i < history->recurrences.size(); ++i) {
    EXPECT_EQ(history->recurrences[i].b, 2);
  }
  auto again = simulate(trace, PolicyKind::kZeus, SimOptions{});
  ASSERT_TRUE(again.has_value());
  ASSERT_EQ(again->runs.size(), history->runs.size());
  for (std::size_t i = 0; i < history->runs.size(); ++i) EXPECT_EQ(again->runs[i].b, history->runs[i].b);
}

}  // namespace
}  // namespace zeus::sim

namespace zeus::sim {
namespace {

TEST(ZeusPolicy, UpstreamBookkeepingTakesTheLeastRecurrenceCost) {
  // A recurrence whose first run fails (1000 J) and second converges (3000 J): the original's
  // simulator bounds later runs by its total, 4000 J; ours by the converged run, 3000 J.
  WorkloadTrace trace = testing::toy_trace("2,2");
  for (const char* rules : {"upstream", "zeus"}) {
    SimOptions options;
    options.zeus = *parse_zeus_rules(rules);
    auto policy = make_policy(PolicyKind::kZeus, trace, options);
    ASSERT_TRUE(policy.has_value());
    Rng rng(1);
    RunRecord failed;
    failed.recurrence = 0;
    failed.epochs = 3;
    failed.cost_j = 1000.0;
    RunPlan first = (*policy)->plan(rng);
    EXPECT_FALSE(first.min_cost_j.has_value());
    (*policy)->observe(first, failed);
    RunRecord converged = failed;
    converged.reached = true;
    converged.cost_j = 3000.0;
    RunPlan second = (*policy)->plan(rng);
    (*policy)->observe(second, converged);
    RunPlan third = (*policy)->plan(rng);
    ASSERT_TRUE(third.min_cost_j.has_value());
    EXPECT_EQ(*third.min_cost_j, std::string(rules) == "upstream" ? 4000.0 : 3000.0) << rules;
    EXPECT_EQ(third.early_stop, std::string(rules) == "upstream" ? EarlyStopMode::kKnownEpochCost
                                                                 : EarlyStopMode::kPredictive);
  }
}

}  // namespace
}  // namespace zeus::sim
