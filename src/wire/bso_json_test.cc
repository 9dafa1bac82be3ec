#include "zeus/wire/bso_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace zeus {
namespace {

constexpr const char* kMinimal =
    R"({"job_id": null, "job_id_prefix": "cifar", "batch_sizes": [128, 32, 64],
        "default_batch_size": 64, "max_power": 600, "number_of_gpus": 2, "gpu_model": "A40"})";

TEST(BsoJsonTest, JobSpecDefaultsAndRoundTrip) {
  Result<JobSpec> s = job_spec_from_json(kMinimal);
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  EXPECT_FALSE(s->job_id.has_value());
  EXPECT_EQ(s->batch_sizes, (std::vector<int>{32, 64, 128}));
  EXPECT_EQ(s->eta_knob, 0.5);
  EXPECT_EQ(s->beta_knob, 2.0);
  EXPECT_EQ(s->max_epochs, 100);
  EXPECT_EQ(s->max_power_w, 600);
  EXPECT_EQ(s->number_of_gpus, 2);
  JobSpec full = *s;
  full.job_id = "cifar-1";
  full.beta_knob.reset();
  full.mab_seed = -5;
  full.eta_knob = 0.1 + 0.2;  // a double that needs all 17 digits
  Result<JobSpec> back = job_spec_from_json(job_spec_to_json(full));
  ASSERT_TRUE(back.has_value()) << back.error().to_string();
  EXPECT_EQ(*back, full);
}

TEST(BsoJsonTest, JobSpecEchoesEveryWireField) {
  const nlohmann::json j = nlohmann::json::parse(job_spec_to_json(*job_spec_from_json(kMinimal)));
  for (const char* field :
       {"job_id", "job_id_prefix", "batch_sizes", "default_batch_size", "eta_knob", "beta_knob",
        "target_metric", "higher_is_better_metric", "max_epochs", "num_pruning_rounds",
        "window_size", "mab_prior_mean", "mab_prior_precision", "mab_num_explorations",
        "mab_seed", "max_power", "number_of_gpus", "gpu_model", "early_stop",
        "prune_factor", "pruning_beta_knob", "pruning_stop_after_rises", "mab_min_relative_sd"}) {
    EXPECT_TRUE(j.contains(field)) << field;
  }
  EXPECT_TRUE(j["job_id"].is_null());
  EXPECT_EQ(j.size(), 23u);
}

TEST(BsoJsonTest, OurFieldsAreOptionalAndRoundTrip) {
  // A Zeus 0.16 client sends none of them: the documented defaults.
  Result<JobSpec> s = job_spec_from_json(kMinimal);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->early_stop, EarlyStopMode::kPredictive);
  EXPECT_EQ(s->prune_factor, 1.5);
  EXPECT_FALSE(s->pruning_beta_knob.has_value());
  EXPECT_EQ(s->pruning_stop_after_rises, 3);
  EXPECT_EQ(s->mab_min_relative_sd, 0.0);
  JobSpec other = *s;
  other.early_stop = EarlyStopMode::kAfterCrossing;
  other.prune_factor.reset();
  other.pruning_beta_knob = 1.5;
  other.pruning_stop_after_rises = 2;
  other.mab_min_relative_sd = 0.25;
  Result<JobSpec> back = job_spec_from_json(job_spec_to_json(other));
  ASSERT_TRUE(back.has_value()) << back.error().to_string();
  EXPECT_EQ(*back, other);
  EXPECT_NE(nlohmann::json::parse(job_spec_to_json(other)).dump().find("after-crossing"),
            std::string::npos);
  const std::string bad = R"({"job_id_prefix":"a","batch_sizes":[8],"default_batch_size":8,)"
                          R"("max_power":1,"early_stop":"sometimes"})";
  Result<JobSpec> refused = job_spec_from_json(bad);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("'predictive' (default) or 'after-crossing'"),
            std::string::npos);
  const std::string sim_only = R"({"job_id_prefix":"a","batch_sizes":[8],"default_batch_size":8,)"
                               R"("max_power":1,"early_stop":"known-epoch-cost"})";
  ASSERT_FALSE(job_spec_from_json(sim_only).has_value());
}

TEST(BsoJsonTest, JobSpecErrorsNameTheField) {
  auto error_of = [](const std::string& text) {
    Result<JobSpec> s = job_spec_from_json(text);
    EXPECT_FALSE(s.has_value()) << text;
    return s ? std::string() : s.error().message;
  };
  EXPECT_NE(error_of("{not json").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("[1]").find("JSON object"), std::string::npos);
  EXPECT_NE(error_of(R"({"job_id_prefix":"a","default_batch_size":1,"max_power":1})")
                .find("'batch_sizes' is missing"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"job_id_prefix":"a","batch_sizes":[],"default_batch_size":1,)"
                     R"("max_power":1})")
                .find("batch_sizes is empty"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"job_id_prefix":"a","batch_sizes":[8],"default_batch_size":16,)"
                     R"("max_power":1})")
                .find("default_batch_size 16"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"job_id_prefix":"a","batch_sizes":[8],"default_batch_size":8,)"
                     R"("max_power":1,"eta_knob":2})")
                .find("eta_knob"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"job_id_prefix":"a","batch_sizes":[8],"default_batch_size":8,)"
                     R"("max_power":1,"beta_knob":-1})")
                .find("beta_knob"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"job_id_prefix":"a","batch_sizes":["8"],"default_batch_size":8,)"
                     R"("max_power":1})")
                .find("'batch_sizes' has the wrong type"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"job_id_prefix":"a","batch_sizes":[8],"default_batch_size":8.5,)"
                     R"("max_power":1})")
                .find("expected an integer"),
            std::string::npos);
}

TEST(BsoJsonTest, NullBetaAndUnknownFields) {
  Result<JobSpec> s = job_spec_from_json(
      R"({"job_id_prefix":"a","batch_sizes":[8],"default_batch_size":8.0,"max_power":1,)"
      R"("beta_knob":null,"something_new":true})");
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  EXPECT_FALSE(s->beta_knob.has_value());
  EXPECT_EQ(s->default_batch_size, 8);
}

TEST(BsoJsonTest, ReportTrialIdAndDecision) {
  Result<TrialReport> r = trial_report_from_json(
      R"({"job_id":"j","batch_size":32,"trial_number":3,"time":12.5,"energy":3000,)"
      R"("metric":0.7,"current_epoch":4})");
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(r->time_s, 12.5);
  EXPECT_EQ(r->energy_j, 3000);
  EXPECT_EQ(r->current_epoch, 4);
  Result<TrialReport> again = trial_report_from_json(trial_report_to_json(*r));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->metric, 0.7);
  EXPECT_NE(trial_report_from_json(R"({"job_id":"j","batch_size":32})")
                .error().message.find("'trial_number' is missing"),
            std::string::npos);
  Result<TrialId> id = trial_id_from_json(trial_id_to_json({"j", 32, 3}));
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(*id, (TrialId{"j", 32, 3}));
  ReportDecision d{true, false, "stop"};
  EXPECT_EQ(*report_decision_from_json(report_decision_to_json(d)), d);
  EXPECT_EQ(nlohmann::json::parse(report_decision_to_json(d))["stop_train"], true);
}

TEST(BsoJsonTest, TrialRoundTrip) {
  Trial t;
  t.job_id = "j";
  t.trial_number = 4;
  t.batch_size = 64;
  t.kind = TrialKind::kConcurrent;
  t.status = TrialStatus::kNotConverged;
  t.time_s = 1.25;
  t.energy_j = 99.5;
  t.cost = 50.25;
  t.epochs = 7;
  t.metric = 0.33;
  Result<Trial> back = trial_from_json(trial_to_json(t));
  ASSERT_TRUE(back.has_value()) << back.error().to_string();
  EXPECT_EQ(*back, t);
  EXPECT_FALSE(trial_from_json(R"({"job_id":"j","trial_number":1,"batch_size":1,)"
                               R"("kind":"x","status":"failed"})")
                   .has_value());
}

}  // namespace
}  // namespace zeus

namespace zeus {
namespace {

TEST(BsoJsonTest, IntegersOutOfRangeAreErrorsNotWrapped) {
  const std::string base = R"({"job_id_prefix":"a","default_batch_size":8,"max_power":1,)";
  EXPECT_FALSE(job_spec_from_json(base + R"("batch_sizes":[8,4294967304]})").has_value());
  EXPECT_FALSE(job_spec_from_json(base + R"("batch_sizes":[8,-4294967288]})").has_value());
  EXPECT_FALSE(job_spec_from_json(base + R"("batch_sizes":[8], "max_epochs":1e20})").has_value());
  EXPECT_FALSE(job_spec_from_json(base + R"("batch_sizes":[8], "max_epochs":2147483648})")
                   .has_value());
  EXPECT_FALSE(job_spec_from_json(base + R"("batch_sizes":[8], "mab_seed":1e19})").has_value());
  EXPECT_FALSE(job_spec_from_json(base + R"("batch_sizes":[8], "mab_seed":18446744073709551615})")
                   .has_value());
  Result<JobSpec> s =
      job_spec_from_json(base + R"("batch_sizes":[8], "max_epochs":2147483647.0, "mab_seed":-9223372036854775808})");
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  EXPECT_EQ(s->max_epochs, 2147483647);
  EXPECT_EQ(*s->mab_seed, INT64_MIN);
  Result<TrialReport> r = trial_report_from_json(
      R"({"job_id":"a","batch_size":8,"trial_number":1e300,"time":1,"energy":1,"metric":1,)"
      R"("current_epoch":1})");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("trial_number"), std::string::npos);
}

}  // namespace
}  // namespace zeus
