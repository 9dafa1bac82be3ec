// The job state machine: registration, the schedule barrier, rounds, failures and timeouts.
#include "perseus/server/job.h"

#include <gtest/gtest.h>

namespace zeus::pfo {
namespace {

const RankSchedules kTwoRanks = {{{"forward", 1980}, {"backward", 1980}},
                                 {{"forward", 1200}, {"backward", 0}}};

SchedulerFactory fixed(RankSchedules s) {
  return [s](const JobInfo& job, const std::vector<RankInfo>&) {
    return make_point_solution(job, s);
  };
}

RankInfo rank(int r, int pp, std::vector<int> clocks = {1980, 1200}) {
  return {r, 0, pp, 0, std::move(clocks)};
}

JobInfo pipeline(int pp) { return {"job", pp, 1, 1, pp, std::nullopt}; }

std::vector<int> delivered_ranks(const Progress& p) {
  std::vector<int> out;
  for (const Delivery& d : p.deliveries) out.push_back(d.rank);
  return out;
}

TEST(JobTest, BarrierHandsEveryRankItsScheduleOnceAllAsked) {
  Job job(pipeline(2), fixed(kTwoRanks), 0);
  ASSERT_TRUE(job.register_rank(rank(1, 1), 0));
  // A rank may ask before the others registered; it waits.
  auto early = job.ask_schedule(1, 1);
  ASSERT_TRUE(early);
  EXPECT_TRUE(early->deliveries.empty());
  auto last = job.register_rank(rank(0, 0), 2);
  ASSERT_TRUE(last);
  ASSERT_TRUE(last->ranks_complete);
  EXPECT_EQ((*last->ranks_complete)[0].rank, 0);
  EXPECT_TRUE(last->deliveries.empty());
  auto done = job.ask_schedule(0, 3);
  ASSERT_TRUE(done);
  ASSERT_EQ(delivered_ranks(*done), (std::vector<int>{0, 1}));
  EXPECT_EQ(done->deliveries[1].schedule->frequencies, kTwoRanks[1]);
  EXPECT_EQ(job.state(), "running");

  // Results end the round; the schedule repeats in round 1.
  ASSERT_TRUE(job.ask_schedule(0, 4));  // asks for round 1 before reporting: waits
  ASSERT_TRUE(job.report_result({0, {1.0}, {100}, {}, {}}, 5));
  auto r1 = job.report_result({1, {1.1}, {90}, {}, {}}, 5);
  ASSERT_TRUE(r1);
  ASSERT_TRUE(r1->round_done);
  EXPECT_EQ(r1->round_done->round, 0);
  EXPECT_EQ(r1->round_done->results[1].iter_energy[0], 90);
  EXPECT_EQ(r1->round_done->schedules[0].frequencies, kTwoRanks[0]);
  EXPECT_TRUE(r1->deliveries.empty());
  EXPECT_EQ(job.round(), 1);
  auto again = job.ask_schedule(1, 6);
  ASSERT_TRUE(again);
  EXPECT_EQ(delivered_ranks(*again), (std::vector<int>{0, 1}));
  EXPECT_EQ(again->deliveries[0].schedule->frequencies, kTwoRanks[0]);
}

TEST(JobTest, RefusesBadRequestsWithStatuses) {
  Job job(pipeline(2), fixed(kTwoRanks), 0);
  EXPECT_EQ(job.register_rank(rank(2, 1), 0).error().status, 400);   // out of range
  EXPECT_EQ(job.register_rank(rank(1, 2), 0).error().status, 400);   // pp_rank >= pp
  ASSERT_TRUE(job.register_rank(rank(1, 1), 0));
  auto dup = job.register_rank(rank(1, 1), 0);
  EXPECT_EQ(dup.error().status, 409);
  EXPECT_NE(dup.error().detail.find("registered already"), std::string::npos);
  EXPECT_EQ(job.register_rank(rank(0, 1), 0).error().status, 409);   // stage 1 taken by rank 1
  EXPECT_EQ(job.ask_schedule(0, 0).error().status, 400);             // not registered
  EXPECT_EQ(job.ask_schedule(-1, 0).error().status, 400);
  ASSERT_TRUE(job.ask_schedule(1, 0));
  EXPECT_EQ(job.ask_schedule(1, 0).error().status, 409);             // waits already
  job.forget_waiter(1);                                              // its client left
  EXPECT_TRUE(job.ask_schedule(1, 0));
  EXPECT_EQ(job.report_result({1, {}, {}, {}, {}}, 0).error().status, 409);  // nothing runs
}

TEST(JobTest, ScheduleThatDoesNotFitFailsEveryWaitingRank) {
  // Wrong number of ranks: reported at /schedule, never by refusing registration.
  Job wrong(pipeline(3), fixed(kTwoRanks), 0);
  ASSERT_TRUE(wrong.register_rank(rank(0, 0), 0));
  ASSERT_TRUE(wrong.ask_schedule(0, 0));
  ASSERT_TRUE(wrong.register_rank(rank(1, 1), 0));
  auto failed = wrong.register_rank(rank(2, 2), 0);
  ASSERT_TRUE(failed);
  ASSERT_EQ(delivered_ranks(*failed), (std::vector<int>{0}));
  EXPECT_EQ(failed->deliveries[0].error.status, 400);
  EXPECT_NE(failed->deliveries[0].error.detail.find("holds 2 ranks' clocks but the job has 3"),
            std::string::npos);
  EXPECT_EQ(wrong.ask_schedule(1, 0).error().detail, failed->deliveries[0].error.detail);

  // A clock rank 1's GPU does not support: nobody gets a schedule.
  Job clocks(pipeline(2), fixed(kTwoRanks), 0);
  ASSERT_TRUE(clocks.register_rank(rank(0, 0), 0));
  ASSERT_TRUE(clocks.ask_schedule(0, 0));
  auto p = clocks.register_rank(rank(1, 1, {1980, 1965}), 0);
  ASSERT_TRUE(p);
  ASSERT_EQ(delivered_ranks(*p), (std::vector<int>{0}));
  EXPECT_FALSE(p->deliveries[0].schedule);
  const std::string detail = p->deliveries[0].error.detail;
  EXPECT_NE(detail.find("rank 1 (pp_rank 1) instruction 0 ('forward') asks for 1200 MHz"),
            std::string::npos)
      << detail;
  EXPECT_EQ(clocks.ask_schedule(1, 0).error().detail, detail);
}

TEST(JobTest, RankThatNeverComesTimesOutEveryWaitingRank) {
  Job job(pipeline(4), fixed({{}, {}, {}, {}}), 0);
  for (int r = 0; r < 3; ++r) ASSERT_TRUE(job.register_rank(rank(r, r), 0));
  ASSERT_TRUE(job.ask_schedule(0, 10));
  ASSERT_TRUE(job.ask_schedule(2, 20));
  EXPECT_TRUE(job.expire(69, 60).deliveries.empty());   // 59 s after the first waiter
  Progress p = job.expire(71, 60);
  ASSERT_EQ(delivered_ranks(p), (std::vector<int>{0, 2}));
  EXPECT_EQ(p.deliveries[0].error.status, 504);
  EXPECT_NE(p.deliveries[0].error.detail.find(
                "rank 3 never registered; rank 1 did not ask for a schedule"),
            std::string::npos)
      << p.deliveries[0].error.detail;
  EXPECT_TRUE(job.failed());
  EXPECT_EQ(job.ask_schedule(1, 72).error().status, 504);  // late ranks learn it too
  EXPECT_TRUE(job.expire(1000, 0).deliveries.empty());
}

TEST(JobTest, MissingResultIsNamedInTheTimeout) {
  Job job(pipeline(2), fixed(kTwoRanks), 0);
  ASSERT_TRUE(job.register_rank(rank(0, 0), 0));
  ASSERT_TRUE(job.register_rank(rank(1, 1), 0));
  ASSERT_TRUE(job.ask_schedule(0, 0));
  ASSERT_TRUE(job.ask_schedule(1, 0));
  ASSERT_TRUE(job.report_result({0, {1}, {1}, {}, {}}, 1));
  EXPECT_EQ(job.report_result({0, {1}, {1}, {}, {}}, 1).error().status, 409);
  ASSERT_TRUE(job.ask_schedule(0, 2));
  Progress p = job.expire(100, 10);
  ASSERT_EQ(delivered_ranks(p), (std::vector<int>{0}));
  EXPECT_NE(p.deliveries[0].error.detail.find("rank 1 did not report the result of round 0"),
            std::string::npos)
      << p.deliveries[0].error.detail;
}

TEST(JobTest, FailAnswersWaitersOnce) {
  Job job(pipeline(2), fixed(kTwoRanks), 0);
  ASSERT_TRUE(job.register_rank(rank(0, 0), 0));
  ASSERT_TRUE(job.ask_schedule(0, 0));
  Progress p = job.fail({410, "evicted"});
  ASSERT_EQ(delivered_ranks(p), (std::vector<int>{0}));
  EXPECT_EQ(p.deliveries[0].error.status, 410);
  EXPECT_TRUE(job.fail({410, "again"}).deliveries.empty());
  EXPECT_EQ(job.state(), "failed: evicted");
}

}  // namespace
}  // namespace zeus::pfo
