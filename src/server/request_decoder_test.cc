#include "server/request_decoder.h"

#include <gtest/gtest.h>

#include <string>

namespace zeus::server {
namespace {

const std::string kDecoderSpec =
    R"({"job_id":null,"job_id_prefix":"mnist","batch_sizes":[64,32,128],)"
    R"("default_batch_size":64,"max_power":300,"number_of_gpus":1,"gpu_model":"A40"})";

std::string report_with(const std::string& time, const std::string& energy) {
  return R"({"job_id":"mnist-1","batch_size":64,"trial_number":1,"time":)" + time +
         R"(,"energy":)" + energy + R"(,"metric":0.5,"current_epoch":1})";
}

void expect_400(const Error& e, const std::string& mentions) {
  EXPECT_EQ(e.code, ErrorCode::kInvalidArgument);
  EXPECT_NE(e.message.find(mentions), std::string::npos) << e.message;
}

TEST(RequestDecoderTest, AcceptsAPythonClientJobSpecAndSortsBatchSizes) {
  Result<JobSpec> s = decode_job_spec(kDecoderSpec);
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  EXPECT_EQ(s->batch_sizes, (std::vector<int>{32, 64, 128}));
  EXPECT_FALSE(s->job_id.has_value());
  EXPECT_EQ(s->gpu_model, "A40");
}

// A Zeus 0.16 spec names no rule field: it gets the defaults given (`--job-rules upstream`);
// a spec that names one keeps it.
TEST(RequestDecoderTest, RuleFieldsLeftOutTakeTheServersDefaults) {
  const JobSpec upstream = upstream_rules(JobSpec{});
  Result<JobSpec> ours = decode_job_spec(kDecoderSpec);
  Result<JobSpec> theirs = decode_job_spec(kDecoderSpec, upstream);
  ASSERT_TRUE(ours.has_value() && theirs.has_value());
  EXPECT_EQ(ours->early_stop, EarlyStopMode::kPredictive);
  EXPECT_EQ(ours->prune_factor, 1.5);
  EXPECT_EQ(theirs->early_stop, EarlyStopMode::kAfterCrossing);
  EXPECT_FALSE(theirs->prune_factor.has_value());
  EXPECT_EQ(theirs->pruning_stop_after_rises, 0);
  std::string named = kDecoderSpec;
  named.insert(1, R"("early_stop":"predictive","pruning_stop_after_rises":2,)");
  Result<JobSpec> kept = decode_job_spec(named, upstream);
  ASSERT_TRUE(kept.has_value()) << kept.error().to_string();
  EXPECT_EQ(kept->early_stop, EarlyStopMode::kPredictive);
  EXPECT_EQ(kept->pruning_stop_after_rises, 2);
  EXPECT_FALSE(kept->prune_factor.has_value());
}

TEST(RequestDecoderTest, RejectsUnknownFieldsNamingThem) {
  std::string body = kDecoderSpec;
  body.insert(1, R"("eta_knb":0.9,)");
  Result<JobSpec> s = decode_job_spec(body);
  ASSERT_FALSE(s.has_value());
  expect_400(s.error(), "unknown field 'eta_knb'");
  Result<TrialId> t =
      decode_trial_id(R"({"job_id":"a","batch_size":8,"trial_number":1,"extra":[]})");
  ASSERT_FALSE(t.has_value());
  expect_400(t.error(), "'extra'");
}

// A key given twice would mean "last one wins"; it is refused by name, at
// any depth, in every body the service decodes.
TEST(RequestDecoderTest, RejectsDuplicateKeysNamingThem) {
  std::string spec = kDecoderSpec;
  spec.insert(1, R"("max_power":250,)");
  Result<JobSpec> s = decode_job_spec(spec);
  ASSERT_FALSE(s.has_value());
  expect_400(s.error(), "job spec: duplicate field 'max_power'");
  Result<TrialId> t =
      decode_trial_id(R"({"job_id":"a","batch_size":8,"trial_number":1,"trial_number":2})");
  ASSERT_FALSE(t.has_value());
  expect_400(t.error(), "trial: duplicate field 'trial_number'");
  Result<TrialReport> r = decode_report(report_with("1", R"(2,"energy":3)"));
  ASSERT_FALSE(r.has_value());
  expect_400(r.error(), "report: duplicate field 'energy'");
}

TEST(RequestDecoderTest, MalformedJsonAndWrongTypesAre400) {
  for (const std::string& body : {std::string(""), std::string("{"), std::string("[1,2]"),
                                  std::string("null"), std::string("\"x\""),
                                  std::string(R"({"job_id":"a","batch_size":8})")}) {
    Result<TrialId> t = decode_trial_id(body);
    ASSERT_FALSE(t.has_value()) << body;
    EXPECT_EQ(t.error().code, ErrorCode::kInvalidArgument) << body;
  }
  Result<TrialReport> r = decode_report(report_with("\"1\"", "2"));
  ASSERT_FALSE(r.has_value());
  expect_400(r.error(), "'time'");
  std::string bad_sizes = kDecoderSpec;
  bad_sizes.replace(bad_sizes.find("[64,32,128]"), 11, "[64,\"32\"]");
  ASSERT_FALSE(decode_job_spec(bad_sizes).has_value());
}

TEST(RequestDecoderTest, NegativeOrInfiniteTimeAndEnergyAre400) {
  expect_400(decode_report(report_with("-1", "2")).error(), "'time'");
  expect_400(decode_report(report_with("1", "-0.5")).error(), "'energy'");
  // Overflowing numbers and NaN are not JSON (nlohmann refuses them): still a clean 400.
  expect_400(decode_report(report_with("1e999", "2")).error(), "report");
  expect_400(decode_report(report_with("1", "-1e999")).error(), "report");
  expect_400(decode_report(report_with("NaN", "2")).error(), "report");
  Result<TrialReport> r = decode_report(report_with("12.5", "300"));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(r->time_s, 12.5);
  EXPECT_EQ(r->energy_j, 300);
}

TEST(RequestDecoderTest, TrialIdentityMustBePositive) {
  expect_400(decode_trial_id(R"({"job_id":"a","batch_size":0,"trial_number":1})").error(),
             "batch_size");
  expect_400(decode_trial_id(R"({"job_id":"a","batch_size":8,"trial_number":-3})").error(),
             "trial_number");
  expect_400(decode_trial_id(R"({"job_id":"","batch_size":8,"trial_number":1})").error(),
             "empty");
}

TEST(RequestDecoderTest, LimitsStringsAndBatchSizeLists) {
  std::string long_prefix = kDecoderSpec;
  long_prefix.replace(long_prefix.find("\"mnist\""), 7, "\"" + std::string(300, 'p') + "\"");
  expect_400(decode_job_spec(long_prefix).error(), "job_id_prefix");
  std::string control = kDecoderSpec;
  control.replace(control.find("\"A40\""), 5, R"("A\u000140")");
  expect_400(decode_job_spec(control).error(), "control character");
  std::string many = R"({"job_id_prefix":"p","default_batch_size":1,"max_power":1,"batch_sizes":[)";
  for (int i = 1; i <= 2000; ++i) many += (i > 1 ? "," : "") + std::to_string(i);
  expect_400(decode_job_spec(many + "]}").error(), "limit is 1024");
}

TEST(RequestDecoderTest, JobIdsFromQueriesMustBeCleanUtf8) {
  EXPECT_EQ(*decode_job_id("mnist-1a2b", "q"), "mnist-1a2b");
  EXPECT_EQ(*decode_job_id("résumé-ジョブ", "q"), "résumé-ジョブ");
  expect_400(decode_job_id("", "query parameter job_id").error(), "query parameter job_id");
  expect_400(decode_job_id("a\xff", "q").error(), "UTF-8");
  expect_400(decode_job_id("a\xc0\xaf", "q").error(), "UTF-8");  // overlong '/'
  expect_400(decode_job_id("a\xed\xa0\x80", "q").error(), "UTF-8");  // surrogate
  expect_400(decode_job_id("a\nb", "q").error(), "control");
  expect_400(decode_job_id(std::string(257, 'x'), "q").error(), "256");
}

}  // namespace
}  // namespace zeus::server
