#include "server/job_view.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace zeus::server {
namespace {

JobSpec spec() {
  JobSpec s;
  s.job_id = "j";
  s.job_id_prefix = "j";
  s.batch_sizes = {16, 32, 64};
  s.default_batch_size = 32;
  s.max_power_w = 300;
  s.num_pruning_rounds = 1;
  return s;
}

Trial ended(int number, int batch_size, double cost, bool converged = true) {
  Trial t;
  t.job_id = "j";
  t.trial_number = number;
  t.batch_size = batch_size;
  t.kind = TrialKind::kMab;
  t.status = converged ? TrialStatus::kConverged : TrialStatus::kNotConverged;
  t.cost = cost;
  return t;
}

Trial pruning(int number, int batch_size, double cost, bool converged) {
  Trial t = ended(number, batch_size, cost, converged);
  t.kind = TrialKind::kPruning;
  t.pruning_round = 1;
  return t;
}

TEST(JobViewTest, PruningPhaseShowsTheRoundAndNoArms) {
  Result<JobView> v = make_job_view(spec(), {pruning(1, 32, 100, true)});
  ASSERT_TRUE(v.has_value()) << v.error().to_string();
  EXPECT_TRUE(v->pruning);
  EXPECT_EQ(v->pruning_round, 1);
  for (const ArmView& a : v->arms) EXPECT_FALSE(a.is_arm);
  EXPECT_EQ(v->arms[1].mean_cost, 100.0);   // one observation: exactly its cost
  EXPECT_EQ(v->arms[1].stddev_cost, 0.0);
  EXPECT_FALSE(v->arms[0].mean_cost.has_value());  // flat prior, nothing observed
  EXPECT_EQ(v->min_converged_cost, 100.0);
}

TEST(JobViewTest, BanditBeliefsFollowGaussianThompsonSampling) {
  // Round 1: 32 converges, 16 does not (stop downward), 64 converges: arms {32, 64}.
  std::vector<Trial> trials = {pruning(1, 32, 100, true), pruning(2, 16, 500, false),
                               pruning(3, 64, 80, true), ended(4, 64, 120), ended(5, 64, 100)};
  JobSpec s = spec();
  s.window_size = 2;  // 64 keeps only its newest two costs: 120 and 100
  Result<JobView> v = make_job_view(s, trials);
  ASSERT_TRUE(v.has_value()) << v.error().to_string();
  EXPECT_FALSE(v->pruning);
  EXPECT_FALSE(v->arms[0].is_arm);
  EXPECT_TRUE(v->arms[1].is_arm);
  EXPECT_TRUE(v->arms[2].is_arm);
  const ArmView& a = v->arms[2];
  EXPECT_EQ(a.num_observations, 2);
  // Population variance of {120, 100} is 100; flat prior: precision n/v = 0.02, mean 110.
  EXPECT_DOUBLE_EQ(*a.mean_cost, 110.0);
  EXPECT_DOUBLE_EQ(*a.stddev_cost, 1.0 / std::sqrt(0.02));
  EXPECT_EQ(v->arms[0].num_observations, 1);  // the not-converged cost is the arm's penalty

  const nlohmann::json j = nlohmann::json::parse(job_view_to_json(*v));
  EXPECT_EQ(j["phase"], "bandit");
  EXPECT_EQ(j["arms"][2]["mean_cost"], 110.0);
  EXPECT_EQ(j["trials"].size(), 5u);
  EXPECT_TRUE(j["trials"][0]["dispatched_at"].is_null());
  EXPECT_EQ(j["job"]["window_size"], 2);
}

TEST(JobViewTest, ListAndTotalsCoverEveryJob) {
  std::unique_ptr<Store> store = make_memory_store();
  ASSERT_TRUE(store->transact([](StoreTransaction& tx) -> Result<void> {
    for (const char* id : {"b", "a"}) {
      JobSpec s = spec();
      s.job_id = id;
      s.job_id_prefix = "";
      ZEUS_TRY(tx.put_job({s, "x"}));
    }
    Trial t = ended(1, 32, 10);
    t.job_id = "a";
    t.energy_j = 7;
    t.time_s = 3;
    ZEUS_TRY(tx.put_trial(t));
    t.trial_number = 2;
    t.status = TrialStatus::kDispatched;
    return tx.put_trial(t);
  }));
  StoreTotals totals;
  Result<std::string> list = job_list_json(*store, &totals);
  ASSERT_TRUE(list.has_value());
  const nlohmann::json j = nlohmann::json::parse(*list);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["job_id"], "a");
  EXPECT_EQ(j[0]["num_trials"], 2);
  EXPECT_EQ(j[0]["dispatched"], 1);
  EXPECT_EQ(j[0]["min_cost"], 10.0);
  EXPECT_TRUE(j[1]["min_cost"].is_null());
  EXPECT_EQ(totals.jobs, 2);
  EXPECT_EQ(totals.energy_j, 14.0);
  EXPECT_EQ(totals.trials_by_status[static_cast<size_t>(TrialStatus::kConverged)], 1);
  EXPECT_EQ(store_totals(*store)->time_s, 6.0);
}

}  // namespace
}  // namespace zeus::server
