// PfoServer over HTTP on 127.0.0.1: ranks as threads through registration, the schedule barrier,
// results and rounds; the dump; and every error a job can meet.
#include "zeus/perseus/pfo_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "http/client.h"

namespace zeus {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class PfoServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pfo_server_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (server_) server_->stop();
    fs::remove_all(dir_);
  }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

  void start(PfoServerOptions o) {
    o.host = "127.0.0.1";
    o.port = 0;
    auto s = PfoServer::start(o);
    ASSERT_TRUE(s) << s.error().message;
    server_ = std::move(*s);
  }

  std::unique_ptr<http::HttpClient> client() {
    http::ClientOptions o;
    o.timeout_s = 20;
    return std::move(*http::HttpClient::tcp("127.0.0.1", server_->port(), o));
  }

  // POST /register_job as Zeus 0.16's client sends it; the job id.
  std::string register_job(int pp, int dp, int tp, int world) {
    auto r = client()->request(
        "POST", "/register_job",
        json{{"job_id", ""}, {"pp_degree", pp}, {"dp_degree", dp}, {"tp_degree", tp},
             {"world_size", world}, {"job_metadata", "test"}}
            .dump());
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : r.error().message);
    return json::parse(r->body).get<std::string>();
  }

  static std::string rank_body(int rank, int dp, int pp, int tp,
                               std::vector<int> clocks = {1980, 1500, 1200}) {
    return json{{"rank", rank}, {"dp_rank", dp}, {"pp_rank", pp}, {"tp_rank", tp},
                {"available_frequencies", clocks}}
        .dump();
  }

  // Ranks 0..n-1 of a pure pipeline (rank = stage), each a thread: register, then ask for the
  // schedule; their answers.
  std::vector<http::HttpResponse> pipeline_ranks_ask(const std::string& id, int n) {
    std::vector<http::HttpResponse> answers(n);
    std::vector<std::thread> ranks;
    for (int r = 0; r < n; ++r) {
      ranks.emplace_back([&, r] {
        auto c = client();
        ASSERT_EQ(c->request("POST", "/register_rank/" + id, rank_body(r, 0, r, 0))->status, 200);
        answers[r] = *c->request("GET", "/schedule/" + id + "?rank=" + std::to_string(r));
      });
    }
    for (auto& t : ranks) t.join();
    return answers;
  }

  fs::path dir_;
  std::unique_ptr<PfoServer> server_;
};

const char* kFourRanks =
    "[\n"
    "[('forward', 1980), ('forward', 1980), ('backward', 1500), ('backward', 1980)],\n"
    "[('forward', 1500), ('backward', 1500), ('forward', 1200), ('backward', 1500)],\n"
    "[('forward', 1200), ('backward', 1200), ('forward', 1200), ('backward', 0)],\n"
    "[('forward', 1980), ('backward', 1980), ('forward', 1980), ('backward', 1980)],\n"
    "]\n# Iteration 7\n";

TEST_F(PfoServerTest, FourRanksPassTheBarrierWithTheirExactSchedules) {
  PfoServerOptions o;
  o.solution_path = write("freqs_pipeline_00007.py", kFourRanks);
  o.dump_dir = (dir_ / "dump").string();
  start(o);
  const std::string id = register_job(4, 1, 1, 4);
  EXPECT_NE(id.find("+dp1+pp4+tp1+PointSolution+test"), std::string::npos) << id;
  std::atomic<int> answered{0};
  std::vector<std::string> bodies(4);
  auto rank = [&](int r) {
    auto c = client();
    auto reg = c->request("POST", "/register_rank/" + id, rank_body(r, 0, r, 0));
    ASSERT_TRUE(reg && reg->status == 200 && reg->body == "null") << (reg ? reg->body : "");
    auto s = c->request("GET", "/schedule/" + id + "?rank=" + std::to_string(r));
    ASSERT_TRUE(s && s->status == 200) << (s ? s->body : s.error().message);
    bodies[r] = s->body;
    answered.fetch_add(1);
  };
  std::vector<std::thread> ranks;
  for (int r = 0; r < 3; ++r) ranks.emplace_back(rank, r);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(answered.load(), 0);  // the barrier holds until rank 3 asks
  ranks.emplace_back(rank, 3);
  for (auto& t : ranks) t.join();
  EXPECT_EQ(answered.load(), 4);
  EXPECT_EQ(bodies[2],
            R"({"frequencies":[["forward",1200],["backward",1200],["forward",1200],["backward",0]],"rank":2})");
  EXPECT_EQ(json::parse(bodies[0])["frequencies"][2], json::parse(R"(["backward",1500])"));

  // Results end round 0 (dumped); round 1 repeats the schedule.
  auto c = client();
  for (int r = 0; r < 4; ++r) {
    auto res = c->request("POST", "/result/" + id,
                          json{{"rank", r}, {"iter_time", {1.0 + r}}, {"iter_energy", {100.0}},
                               {"time_breakdown", {{"forward", {{0.1, 0.2}}}}}}
                              .dump());
    ASSERT_TRUE(res && res->status == 200 && res->body == "null") << (res ? res->body : "");
  }
  auto dup = c->request("POST", "/result/" + id,
                        json{{"rank", 0}, {"iter_time", {1.0}}, {"iter_energy", {1.0}}}.dump());
  EXPECT_EQ(dup->status, 409);  // round 1 has not been handed out
  const fs::path dump = dir_ / "dump" / id;
  const json ranks_json = json::parse(std::ifstream(dump / "ranks.json"));
  EXPECT_EQ(ranks_json.size(), 4u);
  EXPECT_EQ(ranks_json[3]["pp_rank"], 3);
  const json sched = json::parse(std::ifstream(dump / "0.sched.json"));
  EXPECT_EQ(sched[2], json::parse(bodies[2]));
  const json prof = json::parse(std::ifstream(dump / "0.prof.json"));
  EXPECT_EQ(prof[3]["iter_time"][0], 4.0);
  EXPECT_EQ(prof[1]["time_breakdown"]["forward"][0][1], 0.2);

  std::vector<std::thread> again;
  for (int r = 0; r < 4; ++r) {
    again.emplace_back([&, r] {
      auto s = client()->request("GET", "/schedule/" + id + "?rank=" + std::to_string(r));
      ASSERT_TRUE(s && s->status == 200);
      EXPECT_EQ(s->body, bodies[r]);
    });
  }
  for (auto& t : again) t.join();
  auto info = json::parse(client()->request("GET", "/info")->body);
  EXPECT_EQ(info["jobs"][0]["round"], 1);
  EXPECT_EQ(info["scheduler"], "PointSolution");
}

TEST_F(PfoServerTest, ThreeDRanksOfAStageShareItsSchedule) {
  PfoServerOptions o;
  o.scheduler = "point-solution-3d";
  o.solution_path = write("stages.json", R"([[["forward", 1980]], [["forward", 1200]]])");
  start(o);
  const std::string id = register_job(2, 2, 1, 4);
  EXPECT_NE(id.find("+PointSolution3D+"), std::string::npos);
  std::vector<std::string> bodies(4);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back([&, r] {
      auto c = client();
      ASSERT_EQ(c->request("POST", "/register_rank/" + id, rank_body(r, r % 2, r / 2, 0))->status,
                200);
      bodies[r] = c->request("GET", "/schedule/" + id + "?rank=" + std::to_string(r))->body;
    });
  }
  for (auto& t : ranks) t.join();
  EXPECT_EQ(bodies[1], R"({"frequencies":[["forward",1980]],"rank":1})");
  EXPECT_EQ(bodies[3], R"({"frequencies":[["forward",1200]],"rank":3})");
}

TEST_F(PfoServerTest, ClearErrors) {
  PfoServerOptions o;
  o.solution_path = write("freqs.py", kFourRanks);
  start(o);
  auto c = client();
  // Bad bodies: 422 in FastAPI's shape.
  auto bad = c->request("POST", "/register_job",
                        R"({"pp_degree": 2, "dp_degree": 1, "tp_degree": 1, "world_size": 3})");
  ASSERT_EQ(bad->status, 422);
  EXPECT_EQ(json::parse(bad->body)["detail"][0]["loc"], json::parse(R"(["body","world_size"])"));
  // Unknown job: 404 on every route.
  EXPECT_EQ(c->request("POST", "/register_rank/nope", rank_body(0, 0, 0, 0))->status, 404);
  EXPECT_EQ(c->request("GET", "/schedule/nope?rank=0")->status, 404);
  auto unknown = c->request("POST", "/result/nope", R"({"rank": 0, "iter_time": [], "iter_energy": []})");
  EXPECT_EQ(unknown->status, 404);
  EXPECT_NE(json::parse(unknown->body)["detail"].get<std::string>().find("unknown job 'nope'"),
            std::string::npos);
  EXPECT_EQ(c->request("GET", "/schedule/nope")->status, 422);  // rank missing
  EXPECT_EQ(c->request("GET", "/nothing")->status, 404);

  const std::string id = register_job(4, 1, 1, 4);
  EXPECT_EQ(c->request("POST", "/register_rank/" + id, rank_body(4, 0, 3, 0))->status, 400);
  EXPECT_EQ(c->request("POST", "/register_rank/" + id, rank_body(0, 0, 0, 0))->status, 200);
  auto dup = c->request("POST", "/register_rank/" + id, rank_body(0, 0, 0, 0));
  EXPECT_EQ(dup->status, 409);
  EXPECT_EQ(c->request("GET", "/schedule/" + id + "?rank=9")->status, 400);
  EXPECT_EQ(c->request("GET", "/schedule/" + id + "?rank=x")->status, 422);
}

TEST_F(PfoServerTest, OneRanksUnsupportedClockFailsEveryRankAndNothingIsHandedOut) {
  PfoServerOptions o;
  o.solution_path = write("freqs.py", kFourRanks);
  start(o);
  const std::string id = register_job(4, 1, 1, 4);
  // Rank 2's GPU lacks 1200 MHz, which its list asks for; the others could run theirs.
  std::vector<http::HttpResponse> answers(4);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back([&, r] {
      auto c = client();
      const std::vector<int> clocks =
          r == 2 ? std::vector<int>{1980, 1500} : std::vector<int>{1980, 1500, 1200};
      ASSERT_EQ(c->request("POST", "/register_rank/" + id, rank_body(r, 0, r, 0, clocks))->status,
                200);
      answers[r] = *c->request("GET", "/schedule/" + id + "?rank=" + std::to_string(r));
    });
  }
  for (auto& t : ranks) t.join();
  for (const auto& a : answers) {
    EXPECT_EQ(a.status, 400);
    EXPECT_NE(a.body.find("rank 2 (pp_rank 2) instruction 0 ('forward') asks for 1200 MHz, which "
                          "its GPU does not support (1980, 1500 MHz)"),
              std::string::npos)
        << a.body;
  }
  // The job stays failed: a rank asking again, or reporting, gets the same reason.
  auto c = client();
  auto again = c->request("GET", "/schedule/" + id + "?rank=0");
  EXPECT_EQ(again->status, 400);
  EXPECT_NE(again->body.find("asks for 1200 MHz"), std::string::npos);
  auto result = c->request("POST", "/result/" + id,
                           json{{"rank", 0}, {"iter_time", {1.0}}, {"iter_energy", {1.0}}}.dump());
  EXPECT_EQ(result->status, 400);
  const json info = json::parse(c->request("GET", "/info")->body);
  EXPECT_EQ(info["jobs"][0]["round"], 0);
  EXPECT_EQ(info["jobs"][0]["state"].get<std::string>().rfind("failed: ", 0), 0u);
}

TEST_F(PfoServerTest, TwoRanksClaimingOnePositionAreRefused) {
  PfoServerOptions o;
  o.solution_path = write("freqs.py", kFourRanks);
  start(o);
  const std::string id = register_job(2, 2, 1, 4);
  auto c = client();
  ASSERT_EQ(c->request("POST", "/register_rank/" + id, rank_body(0, 0, 0, 0))->status, 200);
  auto same = c->request("POST", "/register_rank/" + id, rank_body(1, 0, 0, 0));
  EXPECT_EQ(same->status, 409);
  EXPECT_NE(same->body.find("rank 1 claims dp_rank 0, pp_rank 0, tp_rank 0, which rank 0 "
                            "registered"),
            std::string::npos)
      << same->body;
  auto outside = c->request("POST", "/register_rank/" + id, rank_body(1, 2, 0, 0));
  EXPECT_EQ(outside->status, 400);
  EXPECT_NE(outside->body.find("outside the job's degrees"), std::string::npos) << outside->body;
  // Refusals register nothing: rank 1 may still come with its own position.
  EXPECT_EQ(c->request("POST", "/register_rank/" + id, rank_body(1, 1, 0, 0))->status, 200);
  EXPECT_EQ(json::parse(c->request("GET", "/info")->body)["jobs"][0]["registered_ranks"], 2);
}

TEST_F(PfoServerTest, ProfilerRunsARoundPerClockAndSaysWhenItIsDone) {
  PfoServerOptions o;
  o.scheduler = "profiler";
  o.scheduler_args = R"({"num_microbatches": 2, "warmup_rounds": 1})";
  o.dump_dir = (dir_ / "dump").string();
  start(o);
  const std::string id = register_job(2, 1, 1, 2);
  EXPECT_NE(id.find("+InstructionProfiler+test"), std::string::npos) << id;
  std::vector<std::vector<int>> clocks(2);
  std::vector<std::string> done(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      auto c = client();
      ASSERT_EQ(c->request("POST", "/register_rank/" + id, rank_body(r, 0, r, 0))->status, 200);
      for (int round = 0; round < 10; ++round) {
        auto s = c->request("GET", "/schedule/" + id + "?rank=" + std::to_string(r));
        ASSERT_TRUE(s);
        if (s->status != 200) {
          done[r] = std::to_string(s->status) + " " + s->body;
          return;
        }
        const json schedule = json::parse(s->body);
        ASSERT_EQ(schedule["frequencies"].size(), 4u);  // 2 microbatches: 2 forwards, 2 backwards
        const int mhz = schedule["frequencies"][0][1];
        clocks[r].push_back(mhz);
        json iterations = json::array();
        for (int i = 0; i < 3; ++i) iterations.push_back({100.0 / mhz, 100.0 / mhz});
        auto res = c->request(
            "POST", "/result/" + id,
            json{{"rank", r},
                 {"iter_time", {1.0, 1.0, 1.0}},
                 {"iter_energy", {1.0, 1.0, 1.0}},
                 {"time_breakdown", {{"forward", iterations}, {"backward", iterations}}},
                 {"energy_breakdown", {{"forward", iterations}, {"backward", iterations}}}}
                .dump());
        ASSERT_EQ(res->status, 200) << res->body;
      }
    });
  }
  for (auto& t : ranks) t.join();
  // rank_body's GPUs list 1980, 1500 and 1200 MHz: one warm-up round, then each clock.
  EXPECT_EQ(clocks[0], (std::vector<int>{1980, 1980, 1500, 1200}));
  EXPECT_EQ(clocks[1], clocks[0]);
  for (const std::string& d : done) {
    EXPECT_EQ(d.rfind("500 {\"detail\":\"[profiling-done]", 0), 0u) << d;
  }
  const fs::path csv = dir_ / "dump" / id / "stage_profile.csv";
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "rank,dp_rank,pp_rank,tp_rank,stage,instruction,frequency,time,energy");
  int rows = 0;
  for (std::string line; std::getline(in, line);) ++rows;
  EXPECT_EQ(rows, 12);  // 2 stages x 2 instructions x 3 clocks
  EXPECT_TRUE(fs::exists(dir_ / "dump" / id / "3.prof.json"));
  const json info = json::parse(client()->request("GET", "/info")->body);
  EXPECT_EQ(info["scheduler"], "InstructionProfiler");
  EXPECT_EQ(info["scheduler_args"]["num_microbatches"], 2);
}

TEST_F(PfoServerTest, ScheduleForAnotherWorldSizeReachesEveryWaitingRank) {
  PfoServerOptions o;
  o.solution_path = write("freqs.py", kFourRanks);  // 4 ranks; the job has 2
  start(o);
  const std::string id = register_job(2, 1, 1, 2);
  const std::vector<http::HttpResponse> answers = pipeline_ranks_ask(id, 2);
  for (const auto& a : answers) {
    EXPECT_EQ(a.status, 400);
    EXPECT_NE(a.body.find("holds 4 ranks' clocks but the job has 2 ranks"), std::string::npos)
        << a.body;
  }
}

TEST_F(PfoServerTest, UnsupportedClockAndCodeInTheFileAreReportedNotRun) {
  PfoServerOptions o;
  o.solution_path = write("evil.py", "[[('forward', __import__('os').system('touch pwned'))]]");
  start(o);
  const std::string id = register_job(1, 1, 1, 1);
  auto c = client();
  ASSERT_EQ(c->request("POST", "/register_rank/" + id, rank_body(0, 0, 0, 0))->status, 200);
  auto a = c->request("GET", "/schedule/" + id + "?rank=0");
  EXPECT_EQ(a->status, 400);
  EXPECT_NE(a->body.find("a name ('__import__') is not allowed"), std::string::npos) << a->body;
  EXPECT_FALSE(fs::exists("pwned"));

  server_->stop();
  o.solution_path = write("clock.json", R"([[["forward", 1995]]])");
  start(o);
  const std::string id2 = register_job(1, 1, 1, 1);
  c = client();
  ASSERT_EQ(c->request("POST", "/register_rank/" + id2, rank_body(0, 0, 0, 0))->status, 200);
  a = c->request("GET", "/schedule/" + id2 + "?rank=0");
  EXPECT_EQ(a->status, 400);
  EXPECT_NE(a->body.find("asks for 1995 MHz, which its GPU does not support"), std::string::npos)
      << a->body;
}

TEST_F(PfoServerTest, RankThatNeverComesTimesOutEveryWaitingRank) {
  PfoServerOptions o;
  o.solution_path = write("freqs.py", kFourRanks);
  o.rank_timeout_s = 0.3;
  start(o);
  const std::string id = register_job(4, 1, 1, 4);
  const std::vector<http::HttpResponse> answers = pipeline_ranks_ask(id, 3);
  for (const auto& a : answers) {
    EXPECT_EQ(a.status, 504);
    EXPECT_NE(a.body.find("rank 3 never registered"), std::string::npos) << a.body;
  }
}

TEST_F(PfoServerTest, IdleJobsAreEvicted) {
  FakeClock clock;
  PfoServerOptions o;
  o.solution_path = write("freqs.py", kFourRanks);
  o.max_job_idle_s = 10;
  o.clock = &clock;
  start(o);
  const std::string id = register_job(4, 1, 1, 4);
  clock.advance_s(11);
  server_->sweep_now();
  EXPECT_EQ(client()->request("POST", "/register_rank/" + id, rank_body(0, 0, 0, 0))->status, 404);
  server_->stop();  // before `clock` goes: the sweep reads it
}

}  // namespace
}  // namespace zeus
