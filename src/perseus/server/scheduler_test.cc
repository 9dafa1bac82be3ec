// PointSolution, the 3D wrapper and its merge of results (max of times, sum of energies).
#include "perseus/server/scheduler.h"

#include <gtest/gtest.h>

#include "perseus/server/scheduler_3d.h"

namespace zeus::pfo {
namespace {

JobInfo job_info(int pp, int dp, int tp) { return {"j", pp, dp, tp, pp * dp * tp, std::nullopt}; }

// Ranks in Megatron's order: tp fastest, then dp, then pp.
std::vector<RankInfo> ranks_of(const JobInfo& j) {
  std::vector<RankInfo> out;
  for (int pp = 0; pp < j.pp_degree; ++pp)
    for (int dp = 0; dp < j.dp_degree; ++dp)
      for (int tp = 0; tp < j.tp_degree; ++tp)
        out.push_back({static_cast<int>(out.size()), dp, pp, tp, {1980, 1200}});
  return out;
}

TEST(SchedulerTest, PointSolutionRepeatsItsScheduleAndChecksTheRankCount) {
  RankSchedules s = {{{"forward", 1980}}, {{"forward", 1200}}};
  auto point = make_point_solution(job_info(2, 1, 1), s);
  ASSERT_TRUE(point) << point.error().message;
  for (int round = 0; round < 3; ++round) {
    auto next = (*point)->next_schedule();
    ASSERT_TRUE(next);
    ASSERT_EQ(next->size(), 2u);
    EXPECT_EQ((*next)[1].rank, 1);
    EXPECT_EQ((*next)[1].frequencies, s[1]);
    EXPECT_TRUE((*point)->observe({}));
  }
  auto wrong = make_point_solution(job_info(2, 2, 1), s);
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("holds 2 ranks' clocks but the job has 4 ranks"),
            std::string::npos);
  EXPECT_NE(wrong.error().message.find("PointSolution3D"), std::string::npos);
}

TEST(SchedulerTest, FactoryNamesAndArguments) {
  EXPECT_EQ(canonical_scheduler_name("point-solution-3d").value_or(""), "PointSolution3D");
  EXPECT_EQ(canonical_scheduler_name("PointSolution").value_or(""), "PointSolution");
  EXPECT_EQ(canonical_scheduler_name("profiler").value_or(""), "InstructionProfiler");
  EXPECT_FALSE(canonical_scheduler_name("AllMaxFrequency"));
  EXPECT_FALSE(scheduler_factory({"Nope", "x.py"}));
  EXPECT_FALSE(scheduler_factory({"PointSolution", ""}));
  auto missing = scheduler_factory({"PointSolution", "/nonexistent/freqs.py"});
  ASSERT_TRUE(missing);  // the file is read when a job starts
  auto made = (*missing)(job_info(1, 1, 1), ranks_of(job_info(1, 1, 1)));
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().code, ErrorCode::kNotFound);
}

TEST(SchedulerTest, ThreeDCopiesEachStageScheduleToItsRanks) {
  const JobInfo j = job_info(2, 2, 2);
  const auto ranks = ranks_of(j);
  JobInfo seen_job;
  std::vector<RankInfo> seen_ranks;
  SchedulerFactory stages = [&](const JobInfo& pj, const std::vector<RankInfo>& pr) {
    seen_job = pj;
    seen_ranks = pr;
    return make_point_solution(pj, {{{"forward", 1980}}, {{"forward", 1200}}});
  };
  auto s = make_3d_parallel(j, ranks, stages);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(seen_job.world_size, 2);
  EXPECT_EQ(seen_job.dp_degree, 1);
  ASSERT_EQ(seen_ranks.size(), 2u);
  EXPECT_EQ(seen_ranks[1].rank, 1);  // renumbered: rank = pp_rank (upstream passes the originals)
  EXPECT_EQ(seen_ranks[1].pp_rank, 1);
  auto next = (*s)->next_schedule();
  ASSERT_TRUE(next);
  ASSERT_EQ(next->size(), 8u);
  for (const FrequencySchedule& f : *next) {
    EXPECT_EQ(f.frequencies[0].second, ranks[f.rank].pp_rank == 0 ? 1980 : 1200) << f.rank;
  }
  auto wrong_length = make_3d_parallel(j, ranks, [](const JobInfo& pj, const auto&) {
    return make_point_solution(pj, {{}, {}, {}, {}});
  });
  ASSERT_FALSE(wrong_length);
  EXPECT_NE(wrong_length.error().message.find("one list per pipeline stage"), std::string::npos);
}

TEST(SchedulerTest, MergeTakesMaxOfTimesAndSumOfEnergiesElementWise) {
  const JobInfo j = job_info(2, 2, 1);  // ranks 0,1: stage 0; ranks 2,3: stage 1
  const auto ranks = ranks_of(j);
  std::vector<ProfilingResult> results = {
      {0, {1.0, 2.0, 9.0}, {10, 20}, {{"forward", {{0.1, 0.3}, {0.2}}}}, {{"forward", {{1, 2}}}}},
      {1, {1.5, 1.0}, {11, 21}, {{"forward", {{0.2, 0.1}, {0.1}}}}, {{"forward", {{3, 4}}}}},
      {2, {3.0}, {5}, {}, {}},
      {3, {2.0}, {6}, {}, {}},
  };
  auto merged = merge_stage_results(j, ranks, results);
  ASSERT_TRUE(merged) << merged.error().message;
  ASSERT_EQ(merged->size(), 2u);
  const ProfilingResult& s0 = (*merged)[0];
  EXPECT_EQ(s0.rank, 0);
  EXPECT_EQ(s0.iter_time, (std::vector<double>{1.5, 2.0}));  // zip: the common length
  EXPECT_EQ(s0.iter_energy, (std::vector<double>{21, 41}));
  EXPECT_EQ(s0.time_breakdown.at("forward"),
            (std::vector<std::vector<double>>{{0.2, 0.3}, {0.2}}));
  EXPECT_EQ(s0.energy_breakdown.at("forward"), (std::vector<std::vector<double>>{{4, 6}}));
  EXPECT_EQ((*merged)[1].iter_time, (std::vector<double>{3.0}));
  EXPECT_EQ((*merged)[1].iter_energy, (std::vector<double>{11}));

  results[1].time_breakdown.clear();
  auto missing = merge_stage_results(j, ranks, results);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("rank 1 (stage 0) reported no 'forward'"),
            std::string::npos);
}

}  // namespace
}  // namespace zeus::pfo
