// `zeus pfo serve --scheduler frontier` over HTTP on 127.0.0.1: eight ranks get the fastest plan
// of a real plan store, an operator reports a straggler through POST /straggler/{job_id}, and the
// next round every rank runs what the combined straggler policy picks; the route's errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "http/client.h"
#include "perseus/server/frontier_test_plans.h"
#include "perseus/server/job.h"
#include "zeus/perseus/pfo_server.h"

namespace zeus {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
constexpr int kRanks = pfo::testing::kTestStages;

class FrontierServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pfo_frontier_server_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    store_ = std::make_unique<pfo::PlanStore>(pfo::testing::write_test_plans(dir_ / "plans"));
    PfoServerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.scheduler = "frontier";
    o.plans_dir = (dir_ / "plans").string();
    auto s = PfoServer::start(o);
    ASSERT_TRUE(s) << s.error().message;
    server_ = std::move(*s);
  }
  void TearDown() override {
    if (server_) server_->stop();
    fs::remove_all(dir_);
  }

  std::unique_ptr<http::HttpClient> client() {
    http::ClientOptions o;
    o.timeout_s = 20;
    return std::move(*http::HttpClient::tcp("127.0.0.1", server_->port(), o));
  }

  http::HttpResponse request(const std::string& method, const std::string& path,
                             const std::string& body = "") {
    auto r = client()->request(method, path, body);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : http::HttpResponse{};
  }

  std::string register_job() {
    const http::HttpResponse r = request("POST", "/register_job",
                                         json{{"job_id", ""},
                                              {"pp_degree", kRanks},
                                              {"dp_degree", 1},
                                              {"tp_degree", 1},
                                              {"world_size", kRanks}}
                                             .dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body).get<std::string>();
  }

  // Every rank asks for the round's schedule at once (the barrier); the clocks per stage.
  std::vector<std::vector<int>> round(const std::string& id) {
    std::vector<std::vector<int>> clocks(kRanks);
    std::vector<std::thread> ranks;
    for (int r = 0; r < kRanks; ++r) {
      ranks.emplace_back([&, r] {
        auto c = client();
        auto s = c->request("GET", "/schedule/" + id + "?rank=" + std::to_string(r));
        ASSERT_TRUE(s && s->status == 200) << (s ? s->body : s.error().message);
        const json body = json::parse(s->body);
        EXPECT_EQ(body["rank"], r);
        for (const auto& pair : body["frequencies"]) clocks[r].push_back(pair[1].get<int>());
      });
    }
    for (auto& t : ranks) t.join();
    return clocks;
  }

  void report(const std::string& id, double iter_time_s) {
    for (int r = 0; r < kRanks; ++r) {
      const http::HttpResponse res =
          request("POST", "/result/" + id,
                  json{{"rank", r}, {"iter_time", {iter_time_s}}, {"iter_energy", {100.0}}}.dump());
      ASSERT_EQ(res.status, 200) << res.body;
    }
  }

  fs::path dir_;
  std::unique_ptr<pfo::PlanStore> store_;
  std::unique_ptr<PfoServer> server_;
};

TEST_F(FrontierServerTest, AnOperatorsStragglerSwitchesEveryRankNextRound) {
  const std::string id = register_job();
  EXPECT_NE(id.find("+Frontier"), std::string::npos) << id;
  // Too early: the ranks have not registered.
  EXPECT_EQ(request("POST", "/straggler/" + id, R"({"iteration_time_s": 3.0})").status, 409);
  for (int r = 0; r < kRanks; ++r) {
    const http::HttpResponse reg =
        request("POST", "/register_rank/" + id,
                json{{"rank", r},
                     {"dp_rank", 0},
                     {"pp_rank", r},
                     {"tp_rank", 0},
                     {"available_frequencies", pfo::testing::a100_clocks_mhz()}}
                    .dump());
    ASSERT_EQ(reg.status, 200) << reg.body;
  }
  const auto fastest = *store_->clocks_mhz(store_->points().size() - 1);
  EXPECT_EQ(round(id), fastest);
  // While round 0 runs, an operator reports a long straggler: round 1 runs one global clock.
  const double t_prime = pfo::testing::straggler_time_for_global_clock(*store_);
  ASSERT_GT(t_prime, 0.0);
  const http::HttpResponse set =
      request("POST", "/straggler/" + id, json{{"iteration_time_s", t_prime}}.dump());
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_EQ(set.body, "null");
  report(id, store_->points().back().time_s);
  auto choice =
      pfo::combined_straggler_plan(store_->candidates(), store_->global_clocks(),
                                   {store_->num_stages(), store_->p2p_power_w()}, t_prime);
  ASSERT_TRUE(choice && choice->global_clock_mhz);
  const auto global = round(id);
  const json info = json::parse(request("GET", "/info").body);
  const std::string plan = info["jobs"][0]["plan"].get<std::string>();
  EXPECT_NE(plan.find("(operator): global clock " + std::to_string(*choice->global_clock_mhz)),
            std::string::npos)
      << plan;
  for (const auto& stage : global) {
    ASSERT_EQ(stage.size(), 2u * pfo::testing::kTestMicrobatches);
    for (int mhz : stage) EXPECT_EQ(mhz, *choice->global_clock_mhz);
  }
  // Cleared while round 1 runs (at the planned pace): round 2 is the fastest plan again.
  EXPECT_EQ(request("DELETE", "/straggler/" + id).status, 200);
  report(id, choice->time_s);
  EXPECT_EQ(round(id), fastest);
}

TEST_F(FrontierServerTest, StragglerRouteErrors) {
  const http::HttpResponse unknown =
      request("POST", "/straggler/nope", R"({"iteration_time_s": 3.0})");
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  const std::string id = register_job();
  for (const char* body : {R"({"iteration_time_s": -1})", R"({"iteration_time_s": "3"})",
                           R"({"time": 3})", R"({})", "not json"}) {
    const http::HttpResponse bad = request("POST", "/straggler/" + id, body);
    EXPECT_EQ(bad.status, 422) << body << " -> " << bad.body;
    if (std::string(body) != "not json") {
      EXPECT_NE(bad.body.find("iteration_time_s"), std::string::npos) << bad.body;
    }
  }
  EXPECT_EQ(request("GET", "/straggler/" + id).status, 405);
  // "pipeline": a dp rank of the job (dp 1: only 0).
  for (const char* body : {R"({"iteration_time_s": 3.0, "pipeline": 1})",
                           R"({"iteration_time_s": 3.0, "pipeline": -1})",
                           R"({"iteration_time_s": 3.0, "pipeline": "0"})"}) {
    const http::HttpResponse bad = request("POST", "/straggler/" + id, body);
    EXPECT_EQ(bad.status, 422) << body << " -> " << bad.body;
    EXPECT_NE(bad.body.find("pipeline"), std::string::npos) << bad.body;
  }
  // In range, before the ranks registered: the usual 409.
  EXPECT_EQ(request("POST", "/straggler/" + id, R"({"iteration_time_s": 3.0, "pipeline": 0})")
                .status,
            409);
}

TEST(FrontierJob, AStragglerForAnotherSchedulerIsRefusedNamingTheFix) {
  pfo::JobInfo info{"job", 2, 1, 1, 2, std::nullopt};
  pfo::SchedulerFactory fixed = [](const pfo::JobInfo& job, const std::vector<pfo::RankInfo>&) {
    return pfo::make_point_solution(job, {{{"forward", 1410}}, {{"forward", 1410}}});
  };
  pfo::Job job(info, fixed, 0);
  ASSERT_TRUE(job.register_rank({0, 0, 0, 0, {}}, 0));
  ASSERT_TRUE(job.register_rank({1, 0, 1, 0, {}}, 0));
  auto refused = job.set_straggler_time(3.0, 1);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().status, 400);
  EXPECT_NE(refused.error().detail.find("--scheduler frontier"), std::string::npos);
}

TEST(FrontierServerStart, MissingPlansAreAClearErrorAtStart) {
  PfoServerOptions o;
  o.port = 0;
  o.scheduler = "Frontier";
  auto none = PfoServer::start(o);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("--plans"), std::string::npos);
  o.plans_dir = "/nonexistent/plans";
  auto missing = PfoServer::start(o);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("plans.bin"), std::string::npos);
}

}  // namespace
}  // namespace zeus
