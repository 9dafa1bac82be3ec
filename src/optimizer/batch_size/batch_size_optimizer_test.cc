#include "zeus/optimizer/batch_size_optimizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace zeus {
namespace {

JobSpec spec3() {
  JobSpec s;
  s.job_id = "job-a";
  s.job_id_prefix = "job-";
  s.batch_sizes = {16, 32, 64};
  s.default_batch_size = 32;
  s.eta_knob = 1.0;  // cost = energy_j: easy to hand-compute
  s.max_power_w = 300;
  s.target_metric = 0.9;
  s.max_epochs = 10;
  s.mab_seed = 7;
  // Zeus 0.16's rules, which these tests pin; ours are tested below (PredictiveEarlyStop...).
  s.early_stop = EarlyStopMode::kAfterCrossing;
  s.prune_factor.reset();
  s.pruning_stop_after_rises = 0;
  return s;
}

class BatchSizeOptimizerTest : public ::testing::Test {
 protected:
  std::unique_ptr<Store> store_ = make_memory_store();
  BatchSizeOptimizer bso_{*store_, [] { return uint64_t{42}; }};

  // Dispatches a trial and reports it converged at the given cost (η = 1: energy = cost).
  TrialId run(const std::string& job, double cost, bool converge = true) {
    Result<TrialId> t = bso_.next_batch_size(job);
    EXPECT_TRUE(t.has_value()) << t.error().to_string();
    Result<ReportDecision> d =
        bso_.report({job, t->batch_size, t->trial_number, 1.0, cost, converge ? 0.95 : 0.1,
                     converge ? 3 : 10});
    EXPECT_TRUE(d.has_value()) << d.error().to_string();
    EXPECT_TRUE(d->stop_train);
    return *t;
  }

  JobSnapshot snapshot(const std::string& job) {
    Result<JobSnapshot> s = bso_.get_job(job);
    EXPECT_TRUE(s.has_value());
    return s.value_or(JobSnapshot{});
  }
};

TEST_F(BatchSizeOptimizerTest, RegisterIsIdempotentAndConflictsOnADifferentSpec) {
  Result<Registration> r = bso_.register_job(spec3());
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_TRUE(r->created);
  r = bso_.register_job(spec3());
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->created);
  JobSpec other = spec3();
  other.eta_knob = 0.5;
  r = bso_.register_job(other);
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(is_job_conflict(r.error()));
  EXPECT_NE(r.error().message.find("eta_knob: 1 vs 0.5"), std::string::npos) << r.error().message;
  EXPECT_EQ(snapshot("job-a").spec.eta_knob, 1.0);  // unchanged
  EXPECT_FALSE(is_job_conflict(Error{ErrorCode::kInvalidArgument, "eta_knob"}));
}

TEST_F(BatchSizeOptimizerTest, NullJobIdIsGeneratedFromThePrefix) {
  JobSpec s = spec3();
  s.job_id.reset();
  Result<Registration> r = bso_.register_job(s);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->job.job_id, "job-000000000000002a");
  EXPECT_TRUE(bso_.get_job("job-000000000000002a").has_value());
}

TEST_F(BatchSizeOptimizerTest, BadSpecIsRejectedAndNothingIsStored) {
  JobSpec s = spec3();
  s.batch_sizes.clear();
  EXPECT_EQ(bso_.register_job(s).error().code, ErrorCode::kInvalidArgument);
  s = spec3();
  s.default_batch_size = 48;
  EXPECT_NE(bso_.register_job(s).error().message.find("default_batch_size 48"), std::string::npos);
  s = spec3();
  s.eta_knob = 1.01;
  EXPECT_NE(bso_.register_job(s).error().message.find("eta_knob"), std::string::npos);
  s = spec3();
  s.beta_knob = 0.0;
  EXPECT_NE(bso_.register_job(s).error().message.find("beta_knob"), std::string::npos);
  EXPECT_EQ(bso_.get_job("job-a").error().code, ErrorCode::kNotFound);
}

TEST_F(BatchSizeOptimizerTest, PrunesThenSamplesTheSurvivors) {
  ASSERT_TRUE(bso_.register_job(spec3()).has_value());
  // Round 1: 32, 16 (down), 64 (up). 16 is cheapest, so round 2 goes 16, then up 32, 64.
  EXPECT_EQ(run("job-a", 100).batch_size, 32);
  EXPECT_EQ(run("job-a", 80).batch_size, 16);
  EXPECT_EQ(run("job-a", 150).batch_size, 64);
  EXPECT_EQ(run("job-a", 82).batch_size, 16);
  EXPECT_EQ(run("job-a", 101).batch_size, 32);
  EXPECT_EQ(run("job-a", 149).batch_size, 64);
  JobSnapshot s = snapshot("job-a");
  ASSERT_EQ(s.trials.size(), 6u);
  EXPECT_EQ(s.trials[0].kind, TrialKind::kPruning);
  EXPECT_EQ(s.trials[0].pruning_round, 1);
  EXPECT_EQ(s.trials[5].pruning_round, 2);
  EXPECT_EQ(s.trials[5].trial_number, 6);
  // Bandit: 16 (mean 81, v = 1, precision 2) is far cheaper than 32 (100.5) and 64 (149.5).
  std::map<int, int> picks;
  for (int i = 0; i < 20; ++i) ++picks[run("job-a", 81).batch_size];
  EXPECT_EQ(picks[16], 20);
  EXPECT_EQ(snapshot("job-a").trials.back().kind, TrialKind::kMab);
}

TEST_F(BatchSizeOptimizerTest, ConcurrentRequestDuringPruningGetsTheBestKnown) {
  ASSERT_TRUE(bso_.register_job(spec3()).has_value());
  Result<TrialId> first = bso_.next_batch_size("job-a");
  Result<TrialId> second = bso_.next_batch_size("job-a");
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->batch_size, 32);
  EXPECT_EQ(second->batch_size, 32);  // nothing converged yet: the default
  EXPECT_EQ(second->trial_number, 2);
  EXPECT_EQ(snapshot("job-a").trials[1].kind, TrialKind::kConcurrent);
  // Finishing the pruning step lets pruning continue downward.
  ASSERT_TRUE(bso_.report({"job-a", 32, 1, 1.0, 100, 0.95, 2}).has_value());
  EXPECT_EQ(bso_.next_batch_size("job-a")->batch_size, 16);
}

TEST_F(BatchSizeOptimizerTest, ReportKeepsTrainingThenStopsEarlyOverBetaTimesMinCost) {
  ASSERT_TRUE(bso_.register_job(spec3()).has_value());
  run("job-a", 100);  // min cost 100, bound 200
  TrialId t = *bso_.next_batch_size("job-a");
  Result<ReportDecision> d = bso_.report({"job-a", t.batch_size, t.trial_number, 1, 150, 0.5, 1});
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(d->stop_train);
  EXPECT_EQ(snapshot("job-a").trials[1].energy_j, 150);  // progress recorded
  d = bso_.report({"job-a", t.batch_size, t.trial_number, 2, 250, 0.6, 2});
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->stop_train);
  EXPECT_FALSE(d->converged);
  EXPECT_NE(d->message.find("exceeded beta_knob"), std::string::npos) << d->message;
  EXPECT_EQ(snapshot("job-a").trials[1].status, TrialStatus::kNotConverged);
}

TEST_F(BatchSizeOptimizerTest, PredictiveEarlyStopStopsBeforeTheEpochThatWouldCross) {
  JobSpec s = spec3();
  s.early_stop = EarlyStopMode::kPredictive;
  ASSERT_TRUE(bso_.register_job(s).has_value());
  run("job-a", 100);  // min cost 100, bound 200
  TrialId t = *bso_.next_batch_size("job-a");
  // Epoch 1 costs 60: 60 + 60 <= 200, keep training.
  Result<ReportDecision> d = bso_.report({"job-a", t.batch_size, t.trial_number, 1, 60, 0.5, 1});
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(d->stop_train);
  // Epoch 2 costs 70 (the last interval): 130 + 70 = 200, still within.
  d = bso_.report({"job-a", t.batch_size, t.trial_number, 2, 130, 0.5, 2});
  EXPECT_FALSE(d->stop_train);
  // Epoch 3 costs 40: 170 + 40 > 200, stop now rather than after crossing.
  d = bso_.report({"job-a", t.batch_size, t.trial_number, 3, 170, 0.5, 3});
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->stop_train);
  EXPECT_FALSE(d->converged);
  EXPECT_NE(d->message.find("next epoch's expected cost"), std::string::npos) << d->message;
  EXPECT_EQ(snapshot("job-a").trials[1].status, TrialStatus::kNotConverged);
  EXPECT_EQ(snapshot("job-a").trials[1].cost, 170);
}

TEST_F(BatchSizeOptimizerTest, BadReportsAreClearErrorsAndChangeNothing) {
  ASSERT_TRUE(bso_.register_job(spec3()).has_value());
  TrialId t = *bso_.next_batch_size("job-a");
  const JobSnapshot before = snapshot("job-a");
  Result<ReportDecision> d = bso_.report({"nope", 32, 1, 1, 1, 0.5, 1});
  EXPECT_EQ(d.error().code, ErrorCode::kNotFound);
  EXPECT_NE(d.error().message.find("unknown job 'nope'"), std::string::npos);
  d = bso_.report({"job-a", 32, 99, 1, 1, 0.5, 1});
  EXPECT_EQ(d.error().code, ErrorCode::kNotFound);
  EXPECT_NE(d.error().message.find("no trial 99"), std::string::npos);
  d = bso_.report({"job-a", 64, t.trial_number, 1, 1, 0.5, 1});
  EXPECT_EQ(d.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(d.error().message.find("runs batch size 32, not 64"), std::string::npos);
  d = bso_.report({"job-a", 32, t.trial_number, -1, 1, 0.5, 1});
  EXPECT_EQ(d.error().code, ErrorCode::kInvalidArgument);
  d = bso_.report({"job-a", 32, t.trial_number, 1, std::nan(""), 0.5, 1});
  EXPECT_EQ(d.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(snapshot("job-a").trials, before.trials);
}

// Time and energy each finite, their cost not (1.5e308 s and J at eta 0.5): refused naming both,
// on every store alike, and nothing stored (SQLite kept cost inf and lost the job's min_cost).
TEST_F(BatchSizeOptimizerTest, AReportWhoseCostOverflowsIsRefusedAndChangesNothing) {
  JobSpec spec = spec3();
  spec.eta_knob = 0.5;
  ASSERT_TRUE(bso_.register_job(spec).has_value());
  TrialId t = *bso_.next_batch_size("job-a");
  const JobSnapshot before = snapshot("job-a");
  Result<ReportDecision> d = bso_.report({"job-a", 32, t.trial_number, 1.5e308, 1.5e308, 0.95, 1});
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(d.error().message.find("cost that is not finite"), std::string::npos)
      << d.error().message;
  EXPECT_EQ(snapshot("job-a").trials, before.trials);
  // The trial is still open: a real report is taken.
  EXPECT_TRUE(bso_.report({"job-a", 32, t.trial_number, 10, 100, 0.95, 1}).has_value());
}

TEST_F(BatchSizeOptimizerTest, ReportForAnEndedTrialAnswersTheStoredOutcome) {
  ASSERT_TRUE(bso_.register_job(spec3()).has_value());
  TrialId t = run("job-a", 100);
  const JobSnapshot before = snapshot("job-a");
  Result<ReportDecision> d = bso_.report({"job-a", 32, t.trial_number, 9, 999, 0.1, 9});
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->stop_train);
  EXPECT_TRUE(d->converged);
  EXPECT_NE(d->message.find("already ended (converged)"), std::string::npos) << d->message;
  EXPECT_EQ(snapshot("job-a").trials, before.trials);
}

TEST_F(BatchSizeOptimizerTest, EndTrialMarksOnlyDispatchedTrialsFailed) {
  ASSERT_TRUE(bso_.register_job(spec3()).has_value());
  TrialId done = run("job-a", 100);
  TrialId running = *bso_.next_batch_size("job-a");
  Result<Trial> t = bso_.end_trial(running);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->status, TrialStatus::kFailed);
  t = bso_.end_trial(done);  // the client's exit hook after a finished trial: no change
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->status, TrialStatus::kConverged);
  EXPECT_EQ(bso_.end_trial({"job-a", 32, 77}).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(bso_.end_trial({"zzz", 32, 1}).error().code, ErrorCode::kNotFound);
  Result<ReportDecision> d = bso_.report({"job-a", running.batch_size, running.trial_number,
                                          1, 1, 0.99, 1});
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->stop_train);
  EXPECT_FALSE(d->converged);
  EXPECT_NE(d->message.find("marked failed"), std::string::npos);
  // A failed pruning step is no exploration (upstream's rule): 16 ended without a result, so it
  // is offered again rather than giving up the direction below the default.
  Result<TrialId> again = bso_.next_batch_size("job-a");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->batch_size, 16);
  EXPECT_GT(again->trial_number, running.trial_number);
}

TEST_F(BatchSizeOptimizerTest, DeleteJob) {
  ASSERT_TRUE(bso_.register_job(spec3()).has_value());
  run("job-a", 100);
  EXPECT_TRUE(bso_.delete_job("job-a").has_value());
  EXPECT_EQ(bso_.get_job("job-a").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(bso_.delete_job("job-a").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(bso_.next_batch_size("job-a").error().code, ErrorCode::kNotFound);
}

TEST_F(BatchSizeOptimizerTest, SeededJobContinuesTheSameSequenceAfterARestart) {
  JobSpec s = spec3();
  s.mab_num_explorations = 3;  // random forced-exploration order as well as sampling
  auto drive = [&](BatchSizeOptimizer& bso, int n, std::vector<int>* picks) {
    for (int i = 0; i < n; ++i) {
      TrialId t = *bso.next_batch_size("job-a");
      const double cost = 100 + t.batch_size % 7 + (t.trial_number % 5);
      ASSERT_TRUE(bso.report({"job-a", t.batch_size, t.trial_number, 1, cost, 0.95, 2}));
      picks->push_back(t.batch_size);
    }
  };
  std::vector<int> straight, restarted;
  {
    std::unique_ptr<Store> store = make_memory_store();
    BatchSizeOptimizer bso(*store);
    ASSERT_TRUE(bso.register_job(s).has_value());
    drive(bso, 30, &straight);
  }
  std::unique_ptr<Store> store = make_memory_store();
  {
    BatchSizeOptimizer bso(*store);
    ASSERT_TRUE(bso.register_job(s).has_value());
    drive(bso, 12, &restarted);
  }
  BatchSizeOptimizer again(*store);  // a new process on the same store
  drive(again, 18, &restarted);
  EXPECT_EQ(straight, restarted);
  // The bandit did not pick one arm only: the sequence really depends on the random stream.
  EXPECT_NE(std::count(straight.begin() + 6, straight.end(), straight[6]), 24);
}

TEST_F(BatchSizeOptimizerTest, MoveToAnotherGpuTranslatesCostObservations) {
  JobSpec s = spec3();
  s.eta_knob = 0.5;
  s.gpu_model = "A100";
  ASSERT_TRUE(bso_.register_job(s).has_value());
  ASSERT_TRUE(bso_.next_batch_size("job-a").has_value());               // 32
  ASSERT_TRUE(bso_.report({"job-a", 32, 1, 100, 20000, 0.95, 4}).has_value());  // 4 epochs
  ASSERT_TRUE(bso_.next_batch_size("job-a").has_value());               // 16
  ASSERT_TRUE(bso_.report({"job-a", 16, 2, 100, 20000, 0.95, 6}).has_value());  // 6 epochs
  GpuEpochProfile v100{"V100", 250.0, 1, {{16, 50.0, 200.0}}};
  const JobSnapshot before = snapshot("job-a");
  Result<JobSnapshot> moved = bso_.move_job_to_gpu("job-a", v100);  // lacks 32
  ASSERT_FALSE(moved.has_value());
  EXPECT_NE(moved.error().message.find("batch size 32"), std::string::npos);
  EXPECT_EQ(snapshot("job-a").trials, before.trials);
  v100.points.push_back({32, 30.0, 240.0});
  moved = bso_.move_job_to_gpu("job-a", v100);
  ASSERT_TRUE(moved.has_value()) << moved.error().to_string();
  // 32: 4 × 30 s = 120 s, 120 × 240 W = 28800 J; cost 0.5·28800 + 0.5·250·120 = 29400.
  // 16: 6 × 50 s = 300 s, 300 × 200 W = 60000 J; cost 0.5·60000 + 0.5·250·300 = 67500.
  const JobSnapshot after = snapshot("job-a");
  EXPECT_EQ(after.spec.gpu_model, "V100");
  EXPECT_EQ(after.spec.max_power_w, 250.0);
  EXPECT_DOUBLE_EQ(after.trials[0].time_s, 120);
  EXPECT_DOUBLE_EQ(after.trials[0].energy_j, 28800);
  EXPECT_DOUBLE_EQ(after.trials[0].cost, 29400);
  EXPECT_DOUBLE_EQ(after.trials[1].cost, 67500);
  EXPECT_EQ(after.trials[1].status, TrialStatus::kConverged);
  // The next early-stop bound uses the translated min cost: β·29400 = 58800.
  TrialId t = *bso_.next_batch_size("job-a");
  Result<ReportDecision> d = bso_.report({"job-a", t.batch_size, t.trial_number, 1, 117000, 0.1, 1});
  ASSERT_TRUE(d.has_value());  // 0.5·117000 + 0.5·250·1 = 58625 ≤ 58800: keep going
  EXPECT_FALSE(d->stop_train);
  // With a trial dispatched, moving is refused and nothing changes.
  EXPECT_EQ(bso_.move_job_to_gpu("job-a", v100).error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace zeus

namespace zeus {
namespace {

TEST(BatchSizeOptimizerExpiryTest, ExpiresOnlyDispatchedTrialsOlderThanTheTimeout) {
  std::unique_ptr<Store> store = make_memory_store();
  FakeClock clock(0.0, 1000.0);
  BatchSizeOptimizer bso(*store, [] { return uint64_t{1}; }, &clock);
  ASSERT_TRUE(bso.register_job(spec3()).has_value());
  TrialId old_trial = *bso.next_batch_size("job-a");  // dispatched at unix 1000
  clock.advance_s(50);
  TrialId ended = *bso.next_batch_size("job-a");  // concurrent request, dispatched at 1050
  ASSERT_TRUE(bso.report({"job-a", ended.batch_size, ended.trial_number, 1, 10, 0.95, 1}));
  TrialId young = *bso.next_batch_size("job-a");  // dispatched at 1050
  EXPECT_EQ(bso.get_job("job-a")->trials[0].dispatched_unix_s, 1000.0);
  EXPECT_FALSE(bso.expire_trials(0).has_value());
  EXPECT_FALSE(bso.expire_trials(std::nan("")).has_value());

  clock.advance_s(20);  // old: 70 s, young: 20 s
  Result<std::vector<Trial>> expired = bso.expire_trials(60);
  ASSERT_TRUE(expired.has_value()) << expired.error().to_string();
  ASSERT_EQ(expired->size(), 1u);
  EXPECT_EQ((*expired)[0].trial_number, old_trial.trial_number);
  JobSnapshot s = *bso.get_job("job-a");
  EXPECT_EQ(s.trials[0].status, TrialStatus::kFailed);
  EXPECT_TRUE(s.trials[1].ended());
  EXPECT_EQ(s.trials[young.trial_number - 1].status, TrialStatus::kDispatched);
  EXPECT_TRUE(bso.expire_trials(60)->empty());  // idempotent
}

}  // namespace
}  // namespace zeus
