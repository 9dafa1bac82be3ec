// The routes without sockets: store failures (500, 503) and the metrics' route labels.
#include "server/api.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace zeus::server {
namespace {

// A store whose every transaction fails with one error code.
class FailingStore final : public Store {
 public:
  explicit FailingStore(ErrorCode code, std::string message = "disk on fire")
      : code_(code), message_(std::move(message)) {}
  Result<void> transact(const std::function<Result<void>(StoreTransaction&)>&) override {
    return fail(code_, message_);
  }

 private:
  ErrorCode code_;
  std::string message_;
};

const std::string kSpec =
    R"({"job_id_prefix":"p","batch_sizes":[8],"default_batch_size":8,"max_power":100})";

std::string message_of(const ApiResponse& r) {
  return nlohmann::json::parse(r.body).at("message").get<std::string>();
}

TEST(ApiTest, StoreFailuresAre500AndUnavailableIs503) {
  FailingStore broken(ErrorCode::kInternal);
  BatchSizeOptimizer bso(broken);
  Api api(broken, bso, nullptr, {});
  ApiResponse r = api.handle({"POST", "/jobs", {}, "", kSpec});
  EXPECT_EQ(r.status, 500);
  EXPECT_NE(message_of(r).find("disk on fire"), std::string::npos);
  // Bad input is still 400: it never reaches the store.
  EXPECT_EQ(api.handle({"POST", "/jobs", {}, "", "{"}).status, 400);

  FailingStore busy(ErrorCode::kUnavailable);
  BatchSizeOptimizer bso2(busy);
  Api api2(busy, bso2, nullptr, {});
  EXPECT_EQ(api2.handle({"GET", "/healthz", {}, "", ""}).status, 503);
  EXPECT_EQ(api2.handle({"GET", "/jobs/batch_size", {{"job_id", "p1"}}, "", ""}).status, 503);
  EXPECT_EQ(api2.handle({"GET", "/metrics", {}, "", ""}).status, 503);
}

// A store that cannot be reached names its URL in its message (for the server's log); what any
// client gets from /healthz or a route holds no URL: neither user, host nor a password.
TEST(ApiTest, UnavailableAnswersNeverQuoteADatabaseUrl) {
  FailingStore down(ErrorCode::kUnavailable,
                    "mysql store: cannot connect to mysql://zeus:S3cr#tPw@db.internal:3306/zeus: "
                    "Can't connect to server on 'db.internal' (111)");
  BatchSizeOptimizer bso(down);
  Api api(down, bso, nullptr, {});
  for (const ApiRequest& request :
       {ApiRequest{"GET", "/healthz", {}, "", ""},
        ApiRequest{"GET", "/jobs/batch_size", {{"job_id", "p1"}}, "", ""},
        ApiRequest{"GET", "/metrics", {}, "", ""}}) {
    const ApiResponse r = api.handle(request);
    EXPECT_EQ(r.status, 503) << request.path;
    EXPECT_EQ(r.body.find("S3cr"), std::string::npos) << r.body;
    EXPECT_EQ(r.body.find("://"), std::string::npos) << r.body;
    EXPECT_EQ(r.body.find("zeus:"), std::string::npos) << r.body;
    EXPECT_NE(message_of(r).find("Can't connect to server"), std::string::npos) << r.body;
    EXPECT_NE(message_of(r).find("retry later"), std::string::npos) << r.body;
  }
}

TEST(ApiTest, RouteLabelsAreBoundedTemplates) {
  EXPECT_EQ(Api::route_of("/jobs/batch_size"), "/jobs/batch_size");
  EXPECT_EQ(Api::route_of("/jobs/anything/at/all"), "/jobs/{job_id}");
  EXPECT_EQ(Api::route_of("/jobs/"), "other");
  EXPECT_EQ(Api::route_of("/../../etc/passwd"), "other");
  EXPECT_EQ(Api::route_of("/"), "/");

  std::unique_ptr<Store> store = make_memory_store();
  BatchSizeOptimizer bso(*store);
  ServerMetrics metrics;
  Api api(*store, bso, &metrics, {});
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(api.handle({"GET", "/jobs/job-" + std::to_string(i), {}, "", ""}).status, 404);
  }
  EXPECT_EQ(api.handle({"BREW", "/x" + std::string(100, 'y'), {}, "", ""}).status, 404);
  ApiResponse m = api.handle({"GET", "/metrics", {}, "", ""});
  ASSERT_EQ(m.status, 200);
  EXPECT_NE(m.body.find(R"(method="GET",route="/jobs/{job_id}",status="404"} 3)"),
            std::string::npos)
      << m.body;
  EXPECT_NE(m.body.find(R"(method="other",route="other",status="404"} 1)"), std::string::npos);
  EXPECT_EQ(m.body.find("job-1"), std::string::npos);  // raw paths never become labels
}

TEST(ApiTest, JobIdsInPathsMayHoldSlashesAndUnicode) {
  std::unique_ptr<Store> store = make_memory_store();
  BatchSizeOptimizer bso(*store);
  Api api(*store, bso, nullptr, {});
  const std::string spec =
      R"({"job_id":"team/résumé","job_id_prefix":"team/","batch_sizes":[8],)"
      R"("default_batch_size":8,"max_power":100})";
  ASSERT_EQ(api.handle({"POST", "/jobs", {}, "", spec}).status, 201);
  ApiResponse r = api.handle({"GET", "/jobs/team/résumé", {}, "", ""});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(nlohmann::json::parse(r.body)["job"]["job_id"], "team/résumé");
}

}  // namespace
}  // namespace zeus::server
