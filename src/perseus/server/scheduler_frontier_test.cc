// The Frontier scheduler over a real plan store: the fastest plan, the combined policy's pick for
// an operator's straggler (a frontier plan, or one global clock), stragglers measured from the
// results, and the errors.
#include "perseus/server/scheduler_frontier.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "perseus/server/frontier_test_plans.h"

namespace zeus::pfo {
namespace {

namespace fs = std::filesystem;

class FrontierSchedulerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("frontier_scheduler_test_" + std::to_string(getpid())));
    store_ = std::make_shared<const PlanStore>(testing::write_test_plans(*dir_));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    store_.reset();
  }

  // A job of 8 stages x `dp` replicas: ranks stage-major within each replica.
  static std::pair<JobInfo, std::vector<RankInfo>> job(int dp) {
    JobInfo info{"job", testing::kTestStages, dp, 1, testing::kTestStages * dp, std::nullopt};
    std::vector<RankInfo> ranks;
    for (int d = 0; d < dp; ++d)
      for (int s = 0; s < testing::kTestStages; ++s)
        ranks.push_back({d * testing::kTestStages + s, d, s, 0, testing::a100_clocks_mhz()});
    return {info, ranks};
  }

  static std::unique_ptr<FrequencyScheduler> make(int dp = 1) {
    auto [info, ranks] = job(dp);
    auto s = make_frontier_scheduler(info, ranks, store_);
    EXPECT_TRUE(s) << s.error().to_string();
    return std::move(*s);
  }

  // The stage clocks every rank was served; they must agree within a stage.
  static std::vector<std::vector<int>> stage_clocks(const std::vector<FrequencySchedule>& round,
                                                    int dp = 1) {
    std::vector<std::vector<int>> out(testing::kTestStages);
    EXPECT_EQ(round.size(), static_cast<std::size_t>(testing::kTestStages * dp));
    for (const FrequencySchedule& s : round) {
      const int stage = s.rank % testing::kTestStages;
      std::vector<int> clocks;
      for (std::size_t k = 0; k < s.frequencies.size(); ++k) {
        const InstructionKind kind = store_->kinds()[stage][k];
        EXPECT_EQ(s.frequencies[k].first,
                  kind == InstructionKind::kForward ? "forward" : "backward");
        clocks.push_back(s.frequencies[k].second);
      }
      if (s.rank < testing::kTestStages)
        out[stage] = clocks;
      else
        EXPECT_EQ(out[stage], clocks) << "rank " << s.rank;
    }
    return out;
  }

  // The stage clocks pipeline (dp rank) `p` was served.
  static std::vector<std::vector<int>> pipeline_clocks(const std::vector<FrequencySchedule>& round,
                                                       int p) {
    std::vector<std::vector<int>> out(testing::kTestStages);
    for (const FrequencySchedule& s : round) {
      if (s.rank / testing::kTestStages != p) continue;
      for (const auto& [name, mhz] : s.frequencies) out[s.rank % testing::kTestStages].push_back(mhz);
    }
    return out;
  }

  static std::vector<std::vector<int>> plan(std::size_t index) {
    return *store_->clocks_mhz(index);
  }
  static std::size_t fastest() { return store_->points().size() - 1; }
  static double t_min() { return store_->points().back().time_s; }

  static ProfilingResult result(int rank, double iter_time_s) {
    return {rank, {iter_time_s, iter_time_s}, {100.0, 100.0}, {}, {}};
  }
  static std::vector<ProfilingResult> results(double iter_time_s, int dp = 1) {
    std::vector<ProfilingResult> out;
    for (int r = 0; r < testing::kTestStages * dp; ++r) out.push_back(result(r, iter_time_s));
    return out;
  }

  static fs::path* dir_;
  static std::shared_ptr<const PlanStore> store_;
};
fs::path* FrontierSchedulerTest::dir_ = nullptr;
std::shared_ptr<const PlanStore> FrontierSchedulerTest::store_;

TEST_F(FrontierSchedulerTest, ServesTheFastestPlanToEveryReplicaOfEachStage) {
  auto s = make(/*dp=*/2);
  auto round = s->next_schedule();
  ASSERT_TRUE(round) << round.error().to_string();
  EXPECT_EQ(stage_clocks(*round, 2), plan(fastest()));
  EXPECT_EQ((*round)[3].frequencies.size(), 2u * testing::kTestMicrobatches);
}

TEST_F(FrontierSchedulerTest, AnOperatorsStragglerGetsTheCombinedPolicysPlan) {
  auto s = make();
  auto& target = dynamic_cast<StragglerAware&>(*s);
  // A short straggler: a frontier plan slower than T_min, at most T'.
  ASSERT_TRUE(target.set_straggler_time(1.05 * t_min()));
  auto expected =
      combined_straggler_plan(store_->candidates(), store_->global_clocks(),
                              {store_->num_stages(), store_->p2p_power_w()}, 1.05 * t_min());
  ASSERT_TRUE(expected && expected->frontier.plan && !expected->global_clock_mhz);
  EXPECT_LT(*expected->frontier.plan, fastest());
  EXPECT_LE(expected->time_s, 1.05 * t_min() + 1e-9);
  EXPECT_EQ(stage_clocks(*s->next_schedule()), plan(*expected->frontier.plan));
  // A long straggler: every instruction at one lower global clock.
  const double long_straggler = testing::straggler_time_for_global_clock(*store_);
  ASSERT_GT(long_straggler, 0.0) << "no straggler time where a global clock wins";
  ASSERT_TRUE(target.set_straggler_time(long_straggler));
  auto global =
      combined_straggler_plan(store_->candidates(), store_->global_clocks(),
                              {store_->num_stages(), store_->p2p_power_w()}, long_straggler);
  ASSERT_TRUE(global && global->global_clock_mhz);
  for (const auto& stage : stage_clocks(*s->next_schedule()))
    for (int mhz : stage) EXPECT_EQ(mhz, *global->global_clock_mhz);
  EXPECT_LT(*global->global_clock_mhz, 1410);
  // Cleared: the fastest plan again.
  ASSERT_TRUE(target.set_straggler_time(std::nullopt));
  EXPECT_EQ(stage_clocks(*s->next_schedule()), plan(fastest()));
}

TEST_F(FrontierSchedulerTest, AMeasuredStragglerKeepsTheFastestPlanAndTheOthersSwitch) {
  auto s = make(/*dp=*/2);
  auto& state = dynamic_cast<StragglerAware&>(*s);
  constexpr double kScale = 10.0;  // measured seconds per planned second (the calibration)
  ASSERT_TRUE(s->next_schedule());
  ASSERT_TRUE(s->observe(results(kScale * t_min(), 2)));  // round 0 calibrates
  EXPECT_EQ(stage_clocks(*s->next_schedule(), 2), plan(fastest()));
  // The whole job runs 1.18x slower (no straggler: every pipeline alike): the fastest plan.
  ASSERT_TRUE(s->observe(results(1.18 * kScale * t_min(), 2)));
  EXPECT_EQ(stage_clocks(*s->next_schedule(), 2), plan(fastest()));
  EXPECT_EQ(state.straggler_state().rfind("no straggler: fastest plan " +
                                              std::to_string(fastest()), 0), 0u);
  // One rank of pipeline 1 runs 1.08x slower than pipeline 0: the longest mean counts.
  std::vector<ProfilingResult> slow = results(kScale * t_min(), 2);
  slow[testing::kTestStages + 5] = result(testing::kTestStages + 5, 1.08 * kScale * t_min());
  ASSERT_TRUE(s->observe(slow));
  auto expected =
      combined_straggler_plan(store_->candidates(), store_->global_clocks(),
                              {store_->num_stages(), store_->p2p_power_w()}, 1.08 * t_min());
  ASSERT_TRUE(expected && expected->frontier.plan);
  ASSERT_NE(*expected->frontier.plan, fastest());
  auto round = *s->next_schedule();
  EXPECT_EQ(pipeline_clocks(round, 0), plan(*expected->frontier.plan));
  EXPECT_EQ(pipeline_clocks(round, 1), plan(fastest()));  // the straggler keeps the fastest
  EXPECT_NE(state.straggler_state().find("(measured, pipeline 1): plan "), std::string::npos)
      << state.straggler_state();
  // Pipeline 0 now runs the slower plan, pipeline 1 still 1.08x: the same pick; pipeline 0's
  // longer time is not compared with anything.
  std::vector<ProfilingResult> next = results(kScale * 1.3 * expected->time_s, 2);
  for (int r = 0; r < testing::kTestStages; ++r)
    next[testing::kTestStages + r] = result(testing::kTestStages + r, 1.08 * kScale * t_min());
  ASSERT_TRUE(s->observe(next));
  round = *s->next_schedule();
  EXPECT_EQ(pipeline_clocks(round, 0), plan(*expected->frontier.plan));
  EXPECT_EQ(pipeline_clocks(round, 1), plan(fastest()));
  // It recovers: the straggler runs the fastest plan at T_min, and everyone gets it again.
  next = results(kScale * 1.3 * expected->time_s, 2);
  for (int r = 0; r < testing::kTestStages; ++r)
    next[testing::kTestStages + r] = result(testing::kTestStages + r, kScale * t_min());
  ASSERT_TRUE(s->observe(next));
  EXPECT_EQ(stage_clocks(*s->next_schedule(), 2), plan(fastest()));
}

TEST_F(FrontierSchedulerTest, OnePipelineDetectsNoMeasuredStraggler) {
  auto s = make();
  ASSERT_TRUE(s->next_schedule());
  ASSERT_TRUE(s->observe(results(t_min())));
  ASSERT_TRUE(s->observe(results(3.0 * t_min())));
  EXPECT_EQ(stage_clocks(*s->next_schedule()), plan(fastest()));
}

TEST_F(FrontierSchedulerTest, AnOperatorsPipelineKeepsTheFastestPlanAndWinsOverAMeasuredOne) {
  auto s = make(/*dp=*/2);
  auto& target = dynamic_cast<StragglerAware&>(*s);
  auto expected =
      combined_straggler_plan(store_->candidates(), store_->global_clocks(),
                              {store_->num_stages(), store_->p2p_power_w()}, 1.05 * t_min());
  ASSERT_TRUE(expected && expected->frontier.plan);
  ASSERT_TRUE(s->next_schedule());
  ASSERT_TRUE(s->observe(results(t_min(), 2)));
  // Measured: pipeline 1 is the straggler; the operator names pipeline 0, which wins.
  std::vector<ProfilingResult> slow = results(t_min(), 2);
  for (int r = 0; r < testing::kTestStages; ++r)
    slow[testing::kTestStages + r] = result(testing::kTestStages + r, 2.0 * t_min());
  ASSERT_TRUE(s->observe(slow));
  ASSERT_TRUE(target.set_straggler_time(1.05 * t_min(), 0));
  auto round = *s->next_schedule();
  EXPECT_EQ(pipeline_clocks(round, 0), plan(fastest()));
  EXPECT_EQ(pipeline_clocks(round, 1), plan(*expected->frontier.plan));
  EXPECT_NE(target.straggler_state().find("(operator, pipeline 0): plan"), std::string::npos)
      << target.straggler_state();
  // Without a pipeline every pipeline gets the plan.
  ASSERT_TRUE(target.set_straggler_time(1.05 * t_min()));
  EXPECT_EQ(stage_clocks(*s->next_schedule(), 2), plan(*expected->frontier.plan));
  EXPECT_NE(target.straggler_state().find("(operator): plan"), std::string::npos);
  // Out of range: refused, nothing changes.
  auto bad = target.set_straggler_time(1.05 * t_min(), 2);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("pipeline 2"), std::string::npos);
  // Cleared: the measured straggler (pipeline 1, at 2 x T_min) is served again.
  ASSERT_TRUE(target.set_straggler_time(std::nullopt));
  round = *s->next_schedule();
  EXPECT_EQ(pipeline_clocks(round, 1), plan(fastest()));
  EXPECT_NE(pipeline_clocks(round, 0), plan(fastest()));
  EXPECT_NE(target.straggler_state().find("(measured, pipeline 1)"), std::string::npos);
}

TEST_F(FrontierSchedulerTest, TheToleranceComesFromTheSchedulerArguments) {
  auto parsed = parse_frontier_args(R"({"straggler_tolerance": 0.5})");
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  EXPECT_DOUBLE_EQ(parsed->straggler_tolerance, 0.5);
  EXPECT_DOUBLE_EQ(parse_frontier_args("")->straggler_tolerance, 0.05);
  for (const char* bad : {R"({"straggler_tolerance": -1})", R"({"straggler_tolerance": "0.1"})",
                          R"({"tolerance": 0.1})", "[1]", "nope"}) {
    EXPECT_FALSE(parse_frontier_args(bad)) << bad;
  }
  // With 0.5, a pipeline 1.4x slower than the other is noise.
  auto [info, ranks] = job(2);
  auto s = std::move(*make_frontier_scheduler(info, ranks, store_, *parsed));
  ASSERT_TRUE(s->next_schedule());
  ASSERT_TRUE(s->observe(results(t_min(), 2)));
  std::vector<ProfilingResult> slow = results(t_min(), 2);
  slow[testing::kTestStages] = result(testing::kTestStages, 1.4 * t_min());
  ASSERT_TRUE(s->observe(slow));
  EXPECT_EQ(stage_clocks(*s->next_schedule(), 2), plan(fastest()));
  slow[testing::kTestStages] = result(testing::kTestStages, 1.6 * t_min());
  ASSERT_TRUE(s->observe(slow));
  EXPECT_EQ(pipeline_clocks(*s->next_schedule(), 1), plan(fastest()));
  EXPECT_NE(dynamic_cast<StragglerAware&>(*s).straggler_state().find("pipeline 1"),
            std::string::npos);
}

TEST_F(FrontierSchedulerTest, BadJobsAndTimesAreClearErrors) {
  JobInfo four{"job", 4, 1, 1, 4, std::nullopt};
  std::vector<RankInfo> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back({r, 0, r, 0, {}});
  auto wrong = make_frontier_scheduler(four, ranks, store_);
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("--stages 4"), std::string::npos);
  auto s = make();
  auto bad = dynamic_cast<StragglerAware&>(*s).set_straggler_time(-2.0);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("positive"), std::string::npos);
  auto none = frontier_scheduler_factory((*dir_ / "missing").string());
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("plans.bin"), std::string::npos);
  auto empty = frontier_scheduler_factory("");
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("--plans"), std::string::npos);
  auto named = scheduler_factory({"frontier", "", "", "", dir_->string()});
  // Profiler arguments are not the Frontier's.
  auto args = scheduler_factory({"frontier", "", "{\"num_microbatches\": 4}", "", dir_->string()});
  ASSERT_FALSE(args);
  EXPECT_NE(args.error().message.find("straggler_tolerance"), std::string::npos);
  EXPECT_NE(args.error().message.find("--plans DIR"), std::string::npos);
  EXPECT_TRUE(scheduler_factory(
      {"frontier", "", "{\"straggler_tolerance\": 0.1}", "", dir_->string()}));
  EXPECT_TRUE(named) << named.error().to_string();
}

}  // namespace
}  // namespace zeus::pfo
