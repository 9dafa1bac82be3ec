// PipelineFrequencyOptimizer against `zeus pfo serve`'s server (PfoServer) on 127.0.0.1, through
// the real HTTP client: ranks as threads, each on its own ReplayGpu and FakeClock, so every
// measured time and energy is exact. The server's dump shows what the ranks reported; each GPU's
// SM clock history shows what the controller locked, instruction by instruction. A scripted HTTP
// server (the project's HTTP layer) stands in where the schedule must change between rounds,
// which a PointSolution schedule never does.
#include "zeus/perseus/pipeline_frequency_optimizer.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "http/test_server.h"
#include "perseus/wire/wire.h"
#include "zeus/device/replay_gpu.h"
#include "zeus/perseus/pfo_http_client.h"
#include "zeus/perseus/pfo_server.h"

namespace zeus {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Schedule = std::vector<std::pair<std::string, int>>;

constexpr double kForwardS = 0.02;
constexpr double kBackwardS = 0.04;

// One rank: a GPU whose power is a tenth of its locked SM clock in watts (1410 MHz: 141 W), on
// its own fake clock, so a 20 ms forward at 1200 MHz is exactly 2.4 J.
struct Rank {
  Rank() {
    ReplayGpuConfig config;
    config.power_model = [](double, uint32_t, uint32_t locked_mhz) {
      return (locked_mhz == 0 ? 1410 : locked_mhz) / 10.0;
    };
    auto replay = std::make_unique<ReplayGpu>(clock, config);
    gpu = replay.get();
    devices.gpus.push_back(std::move(replay));
  }
  std::vector<uint32_t> sm_history() const {
    std::vector<uint32_t> out;
    for (const ClockLockMhz& lock : gpu->sm_clock_history_mhz()) out.push_back(lock.max_mhz);
    return out;
  }

  FakeClock clock;
  Devices devices;
  ReplayGpu* gpu = nullptr;
};

http::HttpResponse answer(int status, std::string body) {
  http::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

// Rank 0's job id handed to the others, as torch.distributed.broadcast_object_list would.
struct Broadcast {
  std::promise<std::string> promise;
  std::shared_future<std::string> future = promise.get_future().share();
  JobIdBroadcast of(int rank) {
    return [this, rank](const std::string& value) -> Result<std::string> {
      if (rank == 0) promise.set_value(value);
      return future.get();
    };
  }
};

class PipelineFrequencyOptimizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "zeus_pfo_optimizer_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (server_) server_->stop();
    fs::remove_all(dir_);
  }

  // A PointSolution server for these per-rank schedules, dumping into dir_/dump.
  void serve(const std::vector<Schedule>& schedules, double rank_timeout_s = 600) {
    json file = json::array();
    for (const Schedule& s : schedules) {
      json list = json::array();
      for (const auto& [name, mhz] : s) list.push_back({name, mhz});
      file.push_back(list);
    }
    std::ofstream(dir_ / "schedule.json") << file.dump();
    PfoServerOptions o;
    o.port = 0;
    o.solution_path = (dir_ / "schedule.json").string();
    o.dump_dir = (dir_ / "dump").string();
    o.rank_timeout_s = rank_timeout_s;
    auto s = PfoServer::start(o);
    ASSERT_TRUE(s) << s.error().message;
    server_ = std::move(*s);
    url_ = server_->url();
  }

  std::unique_ptr<PipelineFrequencyService> service() {
    auto s = make_pfo_http_client(url_, {.timeout_s = 10, .schedule_timeout_s = 20});
    EXPECT_TRUE(s) << s.error().message;
    return std::move(*s);
  }

  static PipelineFrequencyOptimizerOptions pipeline(int rank, int stages,
                                                    uint32_t steps_per_round) {
    PipelineFrequencyOptimizerOptions o;
    o.rank = rank;
    o.pp_rank = rank;
    o.pp_degree = stages;
    o.world_size = stages;
    o.steps_per_round = steps_per_round;
    o.handle_signals = false;
    o.job_metadata = "test";
    return o;
  }

  // One iteration: each instruction's clock waited for, then the "compute" on the rank's clock.
  static Result<void> iterate(PipelineFrequencyOptimizer& pfo, Rank& rank,
                              const std::vector<std::string>& names) {
    ZEUS_TRY(pfo.on_step_begin());
    for (const std::string& name : names) {
      ZEUS_TRY(pfo.on_instruction_begin(name));
      pfo.wait_for_clock();
      rank.clock.advance_s(name == "forward" ? kForwardS : kBackwardS);
      ZEUS_TRY(pfo.on_instruction_end(name));
    }
    return pfo.on_step_end();
  }

  json dump_file(const std::string& name) {
    for (const auto& job : fs::directory_iterator(dir_ / "dump")) {
      std::ifstream in(job.path() / name);
      if (in) return json::parse(in);
    }
    ADD_FAILURE() << "no " << name << " in the dump";
    return json();
  }

  fs::path dir_;
  std::unique_ptr<PfoServer> server_;
  std::string url_;
};

TEST_F(PipelineFrequencyOptimizerTest, TwoStagesFollowTheirSchedulesAndReportEachRound) {
  // The 1F1B order of 2 stages, 2 microbatches; every instruction at its own clock.
  const std::vector<Schedule> schedules = {
      {{"forward", 1200}, {"forward", 1000}, {"backward", 800}, {"backward", 600}},
      {{"forward", 600}, {"backward", 800}, {"forward", 1000}, {"backward", 1200}}};
  serve(schedules);
  Rank ranks[2];
  Broadcast broadcast;
  std::string ids[2];
  std::thread threads[2];
  for (int r = 0; r < 2; ++r) {
    threads[r] = std::thread([&, r] {
      PipelineFrequencyOptimizerOptions o = pipeline(r, 2, /*steps_per_round=*/2);
      o.broadcast = broadcast.of(r);
      auto pfo =
          PipelineFrequencyOptimizer::create(ranks[r].devices, 0, ranks[r].clock, service(), o);
      ASSERT_TRUE(pfo) << pfo.error().message;
      ids[r] = (*pfo)->job_id();
      EXPECT_EQ((*pfo)->schedule().frequencies, schedules[r]);
      std::vector<std::string> names;
      for (const auto& [name, mhz] : schedules[r]) names.push_back(name);
      for (int i = 0; i < 4; ++i) ASSERT_TRUE(iterate(**pfo, ranks[r], names)) << "iteration " << i;
      EXPECT_EQ((*pfo)->rounds(), 3);  // the first, then one after each 2 steps
      const FrequencyControllerStats stats = (*pfo)->controller_stats();
      EXPECT_EQ(stats.failed, 0u);
      ASSERT_TRUE((*pfo)->stop());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ids[0], ids[1]);
  EXPECT_NE(ids[0].find("+dp1+pp2+tp1+PointSolution+test"), std::string::npos) << ids[0];

  for (int r = 0; r < 2; ++r) {
    std::vector<uint32_t> expected = {1410};  // the controller's start: the maximum
    for (int i = 0; i < 4; ++i) {
      for (const auto& [name, mhz] : schedules[r]) expected.push_back(mhz);
    }
    expected.push_back(0);  // unlocked at stop
    EXPECT_EQ(ranks[r].sm_history(), expected) << "rank " << r;
  }
  // Two rounds of two iterations reached the server, measured exactly.
  for (const char* round : {"0.prof.json", "1.prof.json"}) {
    const json results = dump_file(round);
    ASSERT_EQ(results.size(), 2u);
    for (int r = 0; r < 2; ++r) {
      const json& result = results[r];
      EXPECT_EQ(result["rank"], r);
      ASSERT_EQ(result["iter_time"].size(), 2u);
      for (int i = 0; i < 2; ++i) {
        EXPECT_NEAR(result["iter_time"][i].get<double>(), 2 * kForwardS + 2 * kBackwardS, 1e-9);
        // Energy: each instruction's clock / 10 W for its time.
        double energy_j = 0;
        std::vector<double> forwards, backwards;
        for (const auto& [name, mhz] : schedules[r]) {
          const double e = mhz / 10.0 * (name == "forward" ? kForwardS : kBackwardS);
          energy_j += e;
          (name == "forward" ? forwards : backwards).push_back(e);
        }
        EXPECT_NEAR(result["iter_energy"][i].get<double>(), energy_j, 1e-3);
        ASSERT_EQ(result["energy_breakdown"]["forward"][i].size(), 2u);
        for (int k = 0; k < 2; ++k) {
          EXPECT_NEAR(result["energy_breakdown"]["forward"][i][k].get<double>(), forwards[k], 1e-3);
          EXPECT_NEAR(result["energy_breakdown"]["backward"][i][k].get<double>(), backwards[k],
                      1e-3);
          EXPECT_NEAR(result["time_breakdown"]["backward"][i][k].get<double>(), kBackwardS, 1e-9);
        }
      }
    }
  }
}

TEST_F(PipelineFrequencyOptimizerTest, ANameOffTheScheduleAbandonsTheIterationAndTheNextOneRuns) {
  serve({{{"forward", 1200}, {"backward", 800}}});
  Rank rank;
  auto pfo = PipelineFrequencyOptimizer::create(rank.devices, 0, rank.clock, service(),
                                                pipeline(0, 1, /*steps_per_round=*/1));
  ASSERT_TRUE(pfo) << pfo.error().message;
  ASSERT_TRUE((*pfo)->on_step_begin());
  Result<void> wrong = (*pfo)->on_instruction_begin("backward");
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(wrong.error().message.find("expects 'forward' as instruction 1"), std::string::npos)
      << wrong.error().message;
  // The iteration is abandoned: its step is over, and the next one follows the schedule.
  EXPECT_FALSE((*pfo)->on_step_end());
  EXPECT_TRUE(iterate(**pfo, rank, {"forward", "backward"}));
  EXPECT_EQ((*pfo)->rounds(), 2);
  const json results = dump_file("0.prof.json");
  EXPECT_EQ(results[0]["iter_time"].size(), 1u);  // the abandoned iteration was not reported
}

TEST_F(PipelineFrequencyOptimizerTest, AScheduleConsumedTooEarlyOrNotFullyIsAnError) {
  serve({{{"forward", 1200}, {"backward", 800}}});
  Rank rank;
  auto pfo = PipelineFrequencyOptimizer::create(rank.devices, 0, rank.clock, service(),
                                                pipeline(0, 1, /*steps_per_round=*/0));
  ASSERT_TRUE(pfo) << pfo.error().message;
  Result<void> extra = iterate(**pfo, rank, {"forward", "backward", "forward"});
  ASSERT_FALSE(extra);
  EXPECT_NE(extra.error().message.find("fewer frequencies than expected"), std::string::npos)
      << extra.error().message;
  Result<void> short_step = iterate(**pfo, rank, {"forward"});
  ASSERT_FALSE(short_step);
  EXPECT_NE(short_step.error().message.find("more frequencies than expected"), std::string::npos)
      << short_step.error().message;
  EXPECT_TRUE(iterate(**pfo, rank, {"forward", "backward"}));
  EXPECT_EQ((*pfo)->rounds(), 1);  // steps_per_round 0: never reports
  (*pfo).reset();                  // the destructor unlocks
  EXPECT_EQ(rank.sm_history().back(), 0u);
}

TEST_F(PipelineFrequencyOptimizerTest, BadOptionsNameTheFixAndTouchNeitherServerNorGpu) {
  serve({{{"forward", 1200}}});
  struct Case {
    const char* what;
    PipelineFrequencyOptimizerOptions options;
    int gpu_index;
    const char* message;
  };
  PipelineFrequencyOptimizerOptions world = pipeline(0, 2, 1);
  world.world_size = 3;
  PipelineFrequencyOptimizerOptions rank = pipeline(0, 2, 1);
  rank.rank = 2;
  PipelineFrequencyOptimizerOptions no_broadcast = pipeline(0, 2, 1);
  PipelineFrequencyOptimizerOptions stage = pipeline(0, 1, 1);
  stage.pp_rank = 1;
  const Case cases[] = {
      {"world size", world, 0, "is not dp x pp x tp = 2"},
      {"rank", rank, 0, "rank 2 is outside 0-1"},
      {"broadcast", no_broadcast, 0, "needs a broadcast"},
      {"stage", stage, 0, "pp rank 1 is outside 0-0"},
      {"gpu", pipeline(0, 1, 1), 1, "GPU index 1 is not among the 1 visible GPUs"},
  };
  for (const Case& c : cases) {
    Rank r;
    auto pfo =
        PipelineFrequencyOptimizer::create(r.devices, c.gpu_index, r.clock, service(), c.options);
    ASSERT_FALSE(pfo) << c.what;
    EXPECT_EQ(pfo.error().code, ErrorCode::kInvalidArgument) << c.what;
    EXPECT_NE(pfo.error().message.find(c.message), std::string::npos) << pfo.error().message;
    EXPECT_TRUE(r.gpu->sm_clock_history_mhz().empty()) << c.what;
  }
  auto info = http::HttpClient::tcp("127.0.0.1", server_->port(), {});
  auto answer = (*info)->request("GET", "/info");
  ASSERT_TRUE(answer);
  EXPECT_TRUE(json::parse(answer->body)["jobs"].empty()) << answer->body;
}

TEST_F(PipelineFrequencyOptimizerTest, ARefusedRegistrationReachesEveryRankAndLeavesNoClockLocked) {
  serve({{{"forward", 1200}}, {{"forward", 1200}}});
  Rank ranks[2];
  Broadcast broadcast;
  Result<std::unique_ptr<PipelineFrequencyOptimizer>> answers[2] = {
      fail(ErrorCode::kInternal, "not run"), fail(ErrorCode::kInternal, "not run")};
  std::thread threads[2];
  for (int r = 0; r < 2; ++r) {
    threads[r] = std::thread([&, r] {
      PipelineFrequencyOptimizerOptions o = pipeline(r, 2, 1);
      o.job_metadata = "a/b";  // the server refuses: the id travels in paths
      o.broadcast = broadcast.of(r);
      answers[r] =
          PipelineFrequencyOptimizer::create(ranks[r].devices, 0, ranks[r].clock, service(), o);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_FALSE(answers[0]);
  EXPECT_EQ(answers[0].error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(answers[0].error().message.find("HTTP 422"), std::string::npos)
      << answers[0].error().message;
  EXPECT_NE(answers[0].error().message.find("job_metadata"), std::string::npos)
      << answers[0].error().message;
  ASSERT_FALSE(answers[1]);
  EXPECT_NE(answers[1].error().message.find("rank 0 could not register the job"), std::string::npos)
      << answers[1].error().message;
  for (Rank& r : ranks) {
    EXPECT_EQ(r.sm_history(), (std::vector<uint32_t>{1410, 0}));  // started, then restored
  }
}

TEST_F(PipelineFrequencyOptimizerTest, AClockTheGpuLacksFailsEveryRankAtTheFirstSchedule) {
  serve({{{"forward", 1300}}});  // the ReplayGpu lists 1410, 1200, 1000, 800, 600
  Rank rank;
  auto pfo =
      PipelineFrequencyOptimizer::create(rank.devices, 0, rank.clock, service(), pipeline(0, 1, 1));
  ASSERT_FALSE(pfo);
  EXPECT_EQ(pfo.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(pfo.error().message.find("1300"), std::string::npos) << pfo.error().message;
  EXPECT_EQ(rank.sm_history(), (std::vector<uint32_t>{1410, 0}));
}

TEST_F(PipelineFrequencyOptimizerTest, ANewScheduleFromTheServerReplacesTheCurrentOneAtTheRound) {
  // A server whose rounds differ (the online profiler's kind): round n serves rounds[n], the last
  // one repeated; it records each reported result. The job id holds a '+', sent encoded.
  const std::vector<Schedule> rounds = {{{"forward", 1410}, {"backward", 1410}},
                                        {{"forward", 1000}, {"backward", 600}}};
  std::mutex mu;
  int served = 0;
  std::vector<pfo::ProfilingResult> reported;
  std::vector<std::string> paths;
  auto running = http::testing::start(
      {}, http::HttpServer::blocking([&](const http::HttpRequest& q, const http::Peer&) {
        std::lock_guard<std::mutex> lock(mu);
        paths.push_back(q.path);
        if (q.path == "/register_job") return answer(200, "\"job+1\"");
        if (q.path.rfind("/schedule/", 0) == 0) {
          pfo::FrequencySchedule s{0, rounds[std::min<size_t>(served++, rounds.size() - 1)]};
          return answer(200, pfo::encode(s));
        }
        if (q.path.rfind("/result/", 0) == 0) {
          auto result = pfo::decode_profiling_result(q.body);
          if (!result) return answer(422, pfo::validation_error_body(result.error()));
          reported.push_back(*result);
        }
        return answer(200, "null");
      }));
  url_ = "http://127.0.0.1:" + std::to_string(running.port);
  Rank rank;
  auto pfo = PipelineFrequencyOptimizer::create(rank.devices, 0, rank.clock, service(),
                                                pipeline(0, 1, /*steps_per_round=*/1));
  ASSERT_TRUE(pfo) << pfo.error().message;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(iterate(**pfo, rank, {"forward", "backward"}));
  EXPECT_EQ((*pfo)->schedule().frequencies, rounds[1]);
  ASSERT_TRUE((*pfo)->stop());
  EXPECT_EQ(rank.sm_history(), (std::vector<uint32_t>{1410, 1000, 600, 1000, 600, 0}));
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(reported.size(), 3u);
  EXPECT_NEAR(reported[0].iter_energy.at(0), 141.0 * (kForwardS + kBackwardS), 1e-3);
  EXPECT_NEAR(reported[1].iter_energy.at(0), 100.0 * kForwardS + 60.0 * kBackwardS, 1e-3);
  EXPECT_EQ(paths.at(1), "/register_rank/job+1");
}

TEST_F(PipelineFrequencyOptimizerTest, BadServerAddressesAreRefusedAndAMissingServerIsNamed) {
  EXPECT_EQ(make_pfo_http_client("ftp://127.0.0.1:7787").error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(make_pfo_http_client("https://127.0.0.1:7787"));  // TLS; connects on first use
  EXPECT_EQ(make_pfo_http_client("http://127.0.0.1:7787", {.timeout_s = 0}).error().code,
            ErrorCode::kInvalidArgument);
  // Nothing listens on a port just freed: rank 0's registration fails, and the GPU is restored.
  serve({{{"forward", 1200}}});
  server_->stop();
  Rank rank;
  auto pfo =
      PipelineFrequencyOptimizer::create(rank.devices, 0, rank.clock, service(), pipeline(0, 1, 1));
  ASSERT_FALSE(pfo);
  EXPECT_EQ(pfo.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(pfo.error().message.find("is `zeus pfo serve` running at " + url_), std::string::npos)
      << pfo.error().message;
  EXPECT_EQ(rank.sm_history(), (std::vector<uint32_t>{1410, 0}));
}

}  // namespace
}  // namespace zeus
