// What one client can make `zeus pfo serve` hold, and how a job fails when its scheduler cannot
// start: registrations are refused past the live jobs' and ranks' bounds and past the connections a
// barrier needs; never-completed registrations go after an hour, not a week; a waiter whose
// connection closed stops counting at the barrier; a schedule file whose "rank" is not a number
// fails every waiting rank at once with a 400 naming it.
#include "zeus/perseus/pfo_server.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "http/client.h"
#include "http/test_socket.h"
#include "zeus/common/clock.h"

namespace zeus {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class PfoBoundsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pfo_bounds_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    schedule_ = (dir_ / "s.json").string();
    std::ofstream(schedule_) << R"([[["forward", 1980]], [["forward", 1980]]])";
  }
  void TearDown() override {
    if (server_) server_->stop();
    fs::remove_all(dir_);
  }

  void start(PfoServerOptions o) {
    o.host = "127.0.0.1";
    o.port = 0;
    if (o.solution_path.empty()) o.solution_path = schedule_;
    auto s = PfoServer::start(o);
    ASSERT_TRUE(s) << s.error().message;
    server_ = std::move(*s);
    http::ClientOptions co;
    co.timeout_s = 20;
    client_ = std::move(*http::HttpClient::tcp("127.0.0.1", server_->port(), co));
  }

  http::HttpResponse register_job(int world) {
    return *client_->request("POST", "/register_job",
                             json{{"job_id", ""}, {"pp_degree", world}, {"dp_degree", 1},
                                  {"tp_degree", 1}, {"world_size", world}}
                                 .dump());
  }
  http::HttpResponse register_rank(const std::string& id, int rank) {
    return *client_->request("POST", "/register_rank/" + id,
                             json{{"rank", rank}, {"dp_rank", 0}, {"pp_rank", rank},
                                  {"tp_rank", 0}, {"available_frequencies", {1980}}}
                                 .dump());
  }

  fs::path dir_;
  std::string schedule_;
  std::unique_ptr<PfoServer> server_;
  std::unique_ptr<http::HttpClient> client_;
};

TEST_F(PfoBoundsTest, PfoJobs_LiveJobsAndTheirRanksAreBounded) {
  PfoServerOptions o;
  o.max_jobs = 3;
  o.max_total_ranks = 1000;
  start(o);
  const http::HttpResponse first = register_job(600);
  ASSERT_EQ(first.status, 200);
  ASSERT_EQ(register_rank(json::parse(first.body).get<std::string>(), 0).status, 200);
  const http::HttpResponse too_many_ranks = register_job(600);
  EXPECT_EQ(too_many_ranks.status, 503) << too_many_ranks.body;
  EXPECT_NE(too_many_ranks.body.find("hold 600 ranks"), std::string::npos) << too_many_ranks.body;
  EXPECT_EQ(register_job(2).status, 200);
  EXPECT_EQ(register_job(2).status, 200);
  const http::HttpResponse too_many_jobs = register_job(2);
  EXPECT_EQ(too_many_jobs.status, 503) << too_many_jobs.body;
  EXPECT_NE(too_many_jobs.body.find("3 jobs, its most"), std::string::npos) << too_many_jobs.body;
  const json info = json::parse(client_->request("GET", "/info")->body);
  EXPECT_EQ(info["max_jobs"], 3);
  EXPECT_EQ(info["max_total_ranks"], 1000);
}

// Registrations alone, none of whose ranks ever come, cannot take the rank budget that real jobs
// need (13 requests once held it for an hour): together they hold at most half of
// it, a real job still registers beside them, and they are forgotten after a minute.
TEST_F(PfoBoundsTest, JobsWhoseRanksNeverRegisterHoldAtMostHalfTheBudgetForAMinute) {
  FakeClock clock;
  PfoServerOptions o;
  o.clock = &clock;
  o.max_total_ranks = 1000;
  start(o);
  ASSERT_EQ(register_job(400).status, 200);
  const http::HttpResponse junk = register_job(400);
  EXPECT_EQ(junk.status, 503) << junk.body;
  EXPECT_NE(junk.body.find("none of whose ranks has registered yet hold 400 ranks"),
            std::string::npos)
      << junk.body;
  for (int i = 0; i < 20; ++i) ASSERT_EQ(register_job(4).status, 200) << i;  // 480 of 500
  EXPECT_EQ(register_job(40).status, 503);
  // A real job: it registers, then its ranks do; the budget's other half is there for it.
  const http::HttpResponse real = register_job(2);
  ASSERT_EQ(real.status, 200) << real.body;
  const std::string id = json::parse(real.body).get<std::string>();
  EXPECT_EQ(register_rank(id, 0).status, 200);
  EXPECT_EQ(register_rank(id, 1).status, 200);
  clock.advance_s(61);
  server_->sweep_now();
  EXPECT_EQ(register_job(400).status, 200) << "the unclaimed jobs outlived a minute";
  server_->stop();  // before `clock` goes: the sweep reads it
}

TEST_F(PfoBoundsTest, PfoJobs_RegistrationsThatNeverCompleteGoAfterAnHourNotAWeek) {
  FakeClock clock;
  PfoServerOptions o;
  o.clock = &clock;
  o.max_jobs = 1;
  start(o);
  const std::string id = json::parse(register_job(2).body).get<std::string>();
  ASSERT_EQ(register_rank(id, 0).status, 200);
  EXPECT_EQ(register_job(2).status, 503);
  clock.advance_s(3601);
  server_->sweep_now();
  EXPECT_EQ(register_rank(id, 1).status, 404) << "a half-registered job outlived an hour idle";
  EXPECT_EQ(register_job(2).status, 200) << "its ranks were not given back";
  server_->stop();  // before `clock` goes: the sweep reads it
}

TEST_F(PfoBoundsTest, PfoBarrier_AJobLargerThanTheConnectionBudgetIsRefusedNamingIt) {
  PfoServerOptions o;
  o.max_connections = 100;
  start(o);
  const http::HttpResponse big = register_job(200);
  EXPECT_EQ(big.status, 422) << big.body;
  EXPECT_NE(big.body.find("--max-connections"), std::string::npos) << big.body;
  EXPECT_EQ(register_job(80).status, 200);
  EXPECT_EQ(json::parse(client_->request("GET", "/info")->body)["max_ranks_per_job"], 88);
}

// A rank that asked and then hung up no longer counts: the barrier does not complete for a
// schedule that nobody receives; when it asks again, everyone gets a schedule.
TEST_F(PfoBoundsTest, PfoBarrier_AWaiterWhoseConnectionClosedStopsCounting) {
  start({});
  const std::string id = json::parse(register_job(2).body).get<std::string>();
  ASSERT_EQ(register_rank(id, 0).status, 200);
  ASSERT_EQ(register_rank(id, 1).status, 200);
  {
    http::testing::RawSocket gone = http::testing::RawSocket::tcp(server_->port());
    ASSERT_TRUE(gone.ok());
    gone.send("GET /schedule/" + id + "?rank=0 HTTP/1.1\r\nHost: x\r\n\r\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }  // closed while waiting
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  server_->sweep_now();
  EXPECT_EQ(json::parse(client_->request("GET", "/info")->body)["jobs"][0]["waiting_ranks"], 0);
  http::HttpResponse one;
  std::thread rank1([&] {
    http::ClientOptions co;
    co.timeout_s = 20;
    one = *(*http::HttpClient::tcp("127.0.0.1", server_->port(), co))
               ->request("GET", "/schedule/" + id + "?rank=1");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto zero = client_->request("GET", "/schedule/" + id + "?rank=0");
  rank1.join();
  ASSERT_TRUE(zero);
  EXPECT_EQ(zero->status, 200) << zero->body;
  EXPECT_EQ(one.status, 200) << one.body;
}

TEST_F(PfoBoundsTest, PfoSchedule_ARankThatIsNotANumberFailsEveryWaitingRankWith400) {
  PfoServerOptions o;
  o.solution_path = (dir_ / "bad.sched.json").string();
  std::ofstream(o.solution_path)
      << R"([{"rank": "0", "frequencies": [["forward", 1980]]}, {"rank": 1, "frequencies": [["forward", 1980]]}])";
  o.rank_timeout_s = 0;  // forever: the failure must not wait for a timeout
  start(o);
  const std::string id = json::parse(register_job(2).body).get<std::string>();
  ASSERT_EQ(register_rank(id, 0).status, 200);
  http::HttpResponse first;
  std::thread rank0([&] {
    http::ClientOptions co;
    co.timeout_s = 20;
    auto c = std::move(*http::HttpClient::tcp("127.0.0.1", server_->port(), co));
    first = *c->request("GET", "/schedule/" + id + "?rank=0");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // rank 0 waits at the barrier
  const http::HttpResponse last = register_rank(id, 1);
  EXPECT_EQ(last.status, 200) << last.body;  // the registration itself was fine
  rank0.join();
  EXPECT_EQ(first.status, 400) << first.body;
  EXPECT_NE(first.body.find("rank 0: expected {\\\"rank\\\": 0"), std::string::npos) << first.body;
  auto later = client_->request("GET", "/schedule/" + id + "?rank=1");
  EXPECT_EQ(later->status, 400) << later->body;
}

}  // namespace
}  // namespace zeus
