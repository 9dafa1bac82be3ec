#include <gtest/gtest.h>

#include <cmath>

#include "zeus/optimizer/bso_types.h"

namespace zeus {
namespace {

JobSpec good() {
  JobSpec s;
  s.job_id_prefix = "mnist";
  s.batch_sizes = {128, 32, 64};
  s.default_batch_size = 64;
  s.max_power_w = 300;
  return s;
}

void expect_invalid(const JobSpec& s, const std::string& needle) {
  Result<JobSpec> r = validate_job_spec(s);
  ASSERT_FALSE(r.has_value()) << "accepted a spec with bad " << needle;
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
}

TEST(JobSpecTest, DefaultsFollowTheReference) {
  JobSpec s;
  EXPECT_EQ(s.eta_knob, 0.5);
  EXPECT_EQ(s.beta_knob, 2.0);
  EXPECT_EQ(s.target_metric, 0.5);
  EXPECT_TRUE(s.higher_is_better_metric);
  EXPECT_EQ(s.max_epochs, 100);
  EXPECT_EQ(s.num_pruning_rounds, 2);
  EXPECT_EQ(s.window_size, 0);
  EXPECT_EQ(s.mab_prior_mean, 0.0);
  EXPECT_EQ(s.mab_prior_precision, 0.0);
  EXPECT_EQ(s.mab_num_explorations, 2);
  EXPECT_FALSE(s.mab_seed.has_value());
  EXPECT_FALSE(s.job_id.has_value());
}

TEST(JobSpecTest, ValidSpecIsSorted) {
  Result<JobSpec> r = validate_job_spec(good());
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(r->batch_sizes, (std::vector<int>{32, 64, 128}));
}

TEST(JobSpecTest, RejectsBadFieldsNamingThem) {
  JobSpec s = good();
  s.batch_sizes.clear();
  expect_invalid(s, "batch_sizes is empty");
  s = good();
  s.default_batch_size = 256;
  expect_invalid(s, "default_batch_size 256 is not in batch_sizes [32,64,128]");
  s = good();
  s.batch_sizes = {32, 64, 64};
  expect_invalid(s, "twice");
  s = good();
  s.batch_sizes = {0, 64};
  expect_invalid(s, "positive");
  for (double eta : {-0.1, 1.5, std::nan("")}) {
    s = good();
    s.eta_knob = eta;
    expect_invalid(s, "eta_knob");
  }
  for (double beta : {0.0, -1.0, static_cast<double>(INFINITY)}) {
    s = good();
    s.beta_knob = beta;
    expect_invalid(s, "beta_knob");
  }
  s = good();
  s.max_epochs = 0;
  expect_invalid(s, "max_epochs");
  s = good();
  s.window_size = -1;
  expect_invalid(s, "window_size");
  s = good();
  s.mab_prior_precision = -1;
  expect_invalid(s, "mab_prior_precision");
  s = good();
  s.mab_num_explorations = -1;
  expect_invalid(s, "mab_num_explorations");
  s = good();
  s.num_pruning_rounds = -1;
  expect_invalid(s, "num_pruning_rounds");
  s = good();
  s.max_power_w = 0;
  expect_invalid(s, "max_power");
  s = good();
  s.number_of_gpus = 0;
  expect_invalid(s, "number_of_gpus");
  s = good();
  s.job_id = "cifar-1";
  expect_invalid(s, "does not start with job_id_prefix 'mnist'");
}

TEST(JobSpecTest, NullBetaTurnsEarlyStoppingOff) {
  JobSpec s = good();
  s.beta_knob.reset();
  EXPECT_TRUE(validate_job_spec(s).has_value());
}

TEST(JobSpecTest, DifferenceNamesTheFirstDifferingField) {
  JobSpec a = good(), b = good();
  EXPECT_EQ(job_spec_difference(a, b), "");
  b.eta_knob = 0.7;
  EXPECT_EQ(job_spec_difference(a, b), "eta_knob: 0.5 vs 0.7");
  b = good();
  b.mab_seed = 3;
  EXPECT_EQ(job_spec_difference(a, b), "mab_seed: null vs 3");
}

TEST(JobSpecTest, TrialEnumNamesRoundTrip) {
  for (TrialStatus s : {TrialStatus::kDispatched, TrialStatus::kConverged,
                        TrialStatus::kNotConverged, TrialStatus::kFailed}) {
    TrialStatus parsed{};
    ASSERT_TRUE(parse_trial_status(trial_status_name(s), &parsed));
    EXPECT_EQ(parsed, s);
  }
  for (TrialKind k : {TrialKind::kPruning, TrialKind::kConcurrent, TrialKind::kMab}) {
    TrialKind parsed{};
    ASSERT_TRUE(parse_trial_kind(trial_kind_name(k), &parsed));
    EXPECT_EQ(parsed, k);
  }
  TrialKind k;
  EXPECT_FALSE(parse_trial_kind("bogus", &k));
}

}  // namespace
}  // namespace zeus
