// One server, one simulated 1,024-rank job (pp 8 x dp 16 x tp 8, PointSolution3D): registration,
// one schedule round, results — with a few client threads each driving many ranks (a kept-alive
// connection for the POSTs, one raw socket per waiting rank), and the server's threads bounded
// while all 1,024 ranks wait at the barrier.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "http/client.h"
#include "http/test_socket.h"
#include "zeus/perseus/pfo_server.h"

namespace zeus {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kPp = 8, kDp = 16, kTp = 8, kWorld = kPp * kDp * kTp;
constexpr int kClientThreads = 4;

int threads_of_this_process() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

// Megatron's order: tp fastest, then dp, then pp.
int pp_of(int rank) { return rank / (kDp * kTp); }

TEST(PfoServerScaleTest, A1024RankJobPassesRegistrationOneRoundAndResults) {
  const fs::path dir = fs::temp_directory_path() / ("pfo_scale_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  json stages = json::array();
  for (int s = 0; s < kPp; ++s) {
    json list = json::array();
    for (int m = 0; m < 12; ++m) list.push_back({m % 2 ? "backward" : "forward", 1980 - 15 * s});
    stages.push_back(list);
  }
  std::ofstream(dir / "stages.json") << stages.dump();

  PfoServerOptions o;
  o.port = 0;
  o.scheduler = "PointSolution3D";
  o.solution_path = (dir / "stages.json").string();
  auto server = PfoServer::start(o);
  ASSERT_TRUE(server) << server.error().message;
  const int port = (*server)->port();
  const auto started = std::chrono::steady_clock::now();
  const int threads_before = threads_of_this_process();

  http::ClientOptions co;
  co.timeout_s = 60;
  auto admin = std::move(*http::HttpClient::tcp("127.0.0.1", port, co));
  auto reg = admin->request("POST", "/register_job",
                            json{{"job_id", ""}, {"pp_degree", kPp}, {"dp_degree", kDp},
                                 {"tp_degree", kTp}, {"world_size", kWorld},
                                 {"job_metadata", nullptr}}
                                .dump());
  ASSERT_EQ(reg->status, 200);
  const std::string id = json::parse(reg->body).get<std::string>();

  // Each client thread drives ranks t, t + 4, t + 8, ...
  auto for_each_thread = [&](const std::function<void(int)>& work) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kClientThreads; ++t) threads.emplace_back(work, t);
    for (auto& th : threads) th.join();
  };
  std::vector<int> clocks;
  for (int mhz = 1980; mhz >= 210; mhz -= 15) clocks.push_back(mhz);
  for_each_thread([&](int t) {
    auto c = std::move(*http::HttpClient::tcp("127.0.0.1", port, co));
    for (int r = t; r < kWorld; r += kClientThreads) {
      const json body = {{"rank", r}, {"dp_rank", (r / kTp) % kDp}, {"pp_rank", pp_of(r)},
                         {"tp_rank", r % kTp}, {"available_frequencies", clocks}};
      auto a = c->request("POST", "/register_rank/" + id, body.dump());
      ASSERT_TRUE(a && a->status == 200) << r << ": " << (a ? a->body : a.error().message);
    }
  });

  // Every rank asks on its own connection; all wait until the last has asked.
  std::vector<http::testing::RawSocket> sockets(kWorld);
  for_each_thread([&](int t) {
    for (int r = t; r < kWorld; r += kClientThreads) {
      sockets[r] = http::testing::RawSocket::tcp(port);
      ASSERT_TRUE(sockets[r].send("GET /schedule/" + id + "?rank=" + std::to_string(r) +
                                  " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    }
  });
  const int threads_waiting = threads_of_this_process();
  std::vector<std::string> answers(kWorld);
  for_each_thread([&](int t) {
    for (int r = t; r < kWorld; r += kClientThreads) answers[r] = sockets[r].read(60);
  });
  for (int r = 0; r < kWorld; ++r) {
    const size_t body_at = answers[r].find("\r\n\r\n");
    ASSERT_NE(body_at, std::string::npos) << r;
    ASSERT_EQ(answers[r].rfind("HTTP/1.1 200", 0), 0u) << answers[r];
    const json s = json::parse(answers[r].substr(body_at + 4));
    ASSERT_EQ(s["rank"], r);
    ASSERT_EQ(s["frequencies"], stages[pp_of(r)]) << r;
  }

  for_each_thread([&](int t) {
    auto c = std::move(*http::HttpClient::tcp("127.0.0.1", port, co));
    for (int r = t; r < kWorld; r += kClientThreads) {
      const json body = {{"rank", r}, {"iter_time", {1.0, 1.1}}, {"iter_energy", {100.0, 101.0}},
                         {"time_breakdown", {{"forward", {{0.1, 0.1}, {0.1, 0.1}}}}},
                         {"energy_breakdown", {{"forward", {{5.0, 5.0}, {5.0, 5.0}}}}}};
      auto a = c->request("POST", "/result/" + id, body.dump());
      ASSERT_TRUE(a && a->status == 200) << r << ": " << (a ? a->body : a.error().message);
    }
  });
  const json info = json::parse(admin->request("GET", "/info")->body);
  EXPECT_EQ(info["jobs"][0]["round"], 1);
  EXPECT_EQ(info["jobs"][0]["registered_ranks"], kWorld);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "1,024 ranks: registration, one round and results in " << seconds << " s; threads "
            << threads_before << " before, " << threads_waiting << " with every rank waiting\n";
  // Waiting ranks hold connections, not threads.
  EXPECT_LT(threads_waiting, 64);
  (*server)->stop();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace zeus
