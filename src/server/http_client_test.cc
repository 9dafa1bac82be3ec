// The C++ client (zeus/client/bso_http_client.h) against a real server: the BatchSizeService
// contract
// over HTTP, error mapping, tokens, and an unreachable server.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "zeus/client/bso_http_client.h"
#include "zeus/server/bso_server.h"

namespace zeus {
namespace {

JobSpec spec() {
  JobSpec s;
  s.job_id_prefix = "resnet";
  s.batch_sizes = {128, 32, 64};
  s.default_batch_size = 64;
  s.max_power_w = 250;
  s.target_metric = 0.9;
  s.mab_seed = 5;
  s.gpu_model = "V100";
  return s;
}

class HttpClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BsoServerOptions options;
    options.port = 0;
    options.token = "tok";
    server_ = std::move(*BsoServer::start(*store_, options));
    BsoHttpClientOptions client_options;
    client_options.token = "tok";
    client_options.keep_alive = true;
    client_ = std::move(*make_bso_http_client(server_->url(), client_options));
  }
  std::unique_ptr<Store> store_ = make_memory_store();
  std::unique_ptr<BsoServer> server_;
  std::unique_ptr<BsoHttpClient> client_;
};

TEST_F(HttpClientTest, FullTrialOverHttp) {
  Result<JobSpec> job = client_->register_job(spec());
  ASSERT_TRUE(job.has_value()) << job.error().to_string();
  ASSERT_TRUE(job->job_id.has_value());
  EXPECT_EQ(job->batch_sizes, (std::vector<int>{32, 64, 128}));
  EXPECT_EQ(*client_->register_job(*job), *job);  // idempotent

  Result<TrialId> t = client_->next_batch_size(*job->job_id);
  ASSERT_TRUE(t.has_value()) << t.error().to_string();
  EXPECT_EQ(t->batch_size, 64);
  EXPECT_EQ(t->trial_number, 1);
  Result<ReportDecision> d =
      client_->report({*job->job_id, t->batch_size, t->trial_number, 10, 500, 0.95, 1});
  ASSERT_TRUE(d.has_value()) << d.error().to_string();
  EXPECT_TRUE(d->stop_train);
  EXPECT_TRUE(d->converged);

  Result<TrialId> t2 = client_->next_batch_size(*job->job_id);
  ASSERT_TRUE(t2.has_value());
  ASSERT_TRUE(client_->end_trial(*t2).has_value());
  Result<std::string> shown = client_->get_job_json(*job->job_id);
  ASSERT_TRUE(shown.has_value());
  const nlohmann::json v = nlohmann::json::parse(*shown);
  EXPECT_EQ(v["trials"][1]["status"], "failed");
  EXPECT_TRUE(client_->health().has_value());
  ASSERT_TRUE(client_->delete_job(*job->job_id).has_value());
  EXPECT_EQ(client_->delete_job(*job->job_id).error().code, ErrorCode::kNotFound);
}

TEST_F(HttpClientTest, ServerErrorsMapToCodesWithTheServersMessage) {
  JobSpec s = spec();
  s.job_id = "resnet-1";
  ASSERT_TRUE(client_->register_job(s).has_value());
  s.eta_knob = 0.9;
  Result<JobSpec> conflict = client_->register_job(s);
  ASSERT_FALSE(conflict.has_value());
  EXPECT_TRUE(is_job_conflict(conflict.error())) << conflict.error().message;
  EXPECT_NE(conflict.error().message.find("eta_knob"), std::string::npos);

  Result<TrialId> unknown = client_->next_batch_size("nope");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
  EXPECT_NE(unknown.error().message.find("unknown job 'nope'"), std::string::npos);

  Result<ReportDecision> bad = client_->report({"resnet-1", 64, 1, -5, 1, 0.1, 1});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.error().message.find("HTTP 400"), std::string::npos);

  auto anonymous = std::move(*make_http_batch_size_service(server_->url()));
  Result<TrialId> denied = anonymous->next_batch_size("resnet-1");
  ASSERT_FALSE(denied.has_value());
  EXPECT_EQ(denied.error().code, ErrorCode::kPermissionDenied);
}

TEST(HttpClientStandaloneTest, UnreachableServerIsUnavailableAndBadUrlsAreRejected) {
  // Port 1 on loopback: nothing listens there (binding it needs root, and no test does).
  BsoHttpClientOptions options;
  options.timeout_s = 2;
  auto client = std::move(*make_bso_http_client("http://127.0.0.1:1", options));
  Result<TrialId> r = client->next_batch_size("x");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(r.error().message.find("zeus serve"), std::string::npos);
  EXPECT_FALSE(make_bso_http_client("ftp://host").has_value());
  EXPECT_FALSE(make_bso_http_client("http://host:99999").has_value());
  options.timeout_s = 0;
  EXPECT_FALSE(make_bso_http_client("http://host:8000", options).has_value());
  options.timeout_s = 1;
  options.token = "a\nb";
  EXPECT_FALSE(make_bso_http_client("http://host", options).has_value());
}

TEST(HttpClientStandaloneTest, PathPrefixIsKept) {
  // A server behind a prefix answers 404 for the unprefixed route: the prefix must be sent.
  std::unique_ptr<Store> store = make_memory_store();
  BsoServerOptions options;
  options.port = 0;
  auto server = std::move(*BsoServer::start(*store, options));
  auto prefixed = std::move(*make_bso_http_client(server->url() + "/zeus/"));
  Result<void> h = prefixed->health();
  ASSERT_FALSE(h.has_value());
  EXPECT_EQ(h.error().code, ErrorCode::kNotFound);
  EXPECT_NE(h.error().message.find("/zeus/healthz"), std::string::npos);
}

}  // namespace
}  // namespace zeus
