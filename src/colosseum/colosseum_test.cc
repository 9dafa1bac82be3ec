// Answers in progress never hold up the Colosseum's other routes (the page,
// /health, the leaderboard, votes are answered on the event loop), and one client address may
// have at most a quarter of the answer slots (429 beyond), so it cannot take them all.
// A real Colosseum on 127.0.0.1 (fake NVML GPU) in front of a real upstream whose answer takes
// 3 s.
#include "colosseum/colosseum.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "device/nvml/nvml_gpu.h"
#include "http/client.h"
#include "http/server.h"

namespace zeus::proxy {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// An OpenAI-style upstream that streams one chunk, waits 3 s, then ends.
std::unique_ptr<http::HttpServer> slow_upstream(int* port) {
  auto server = http::HttpServer::start(
      {}, http::HttpServer::on_workers([](const http::HttpRequest&, const http::Peer&,
                                          std::shared_ptr<http::Reply> reply) {
        http::StreamHead head;
        head.content_type = "text/event-stream";
        auto stream = reply->start_body(std::move(head));
        if (!stream) return;
        stream->write("data: {\"choices\":[{\"delta\":{\"content\":\"slow\"}}]}\n\n");
        std::this_thread::sleep_for(std::chrono::seconds(3));
        stream->write("data: [DONE]\n\n");
        stream->finish({});
      }));
  EXPECT_TRUE(server.has_value());
  auto bound = (*server)->listen_tcp("127.0.0.1", 0);
  EXPECT_TRUE(bound.has_value());
  *port = *bound;
  return std::move(*server);
}

// A Colosseum (fake NVML GPU 0 for both sides) in front of slow_upstream(), with 4 workers.
class ColosseumTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv("ZEUS_FAKE_NVML_STATE");
    auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
    ASSERT_TRUE(gpus.has_value()) << gpus.error().message;
    devices_.gpus = std::move(*gpus);
    int upstream_port = 0;
    upstream_ = slow_upstream(&upstream_port);
    const UpstreamUrl url =
        *parse_upstream_url("http://127.0.0.1:" + std::to_string(upstream_port), "--upstream");
    ColosseumOptions options;
    options.sides = {ColosseumSide{"small", url, {0}}, ColosseumSide{"big", url, {0}}};
    options.port = 0;
    options.workers = 4;  // one answer in progress per client address
    auto arena = Colosseum::start(devices_, options);
    ASSERT_TRUE(arena.has_value()) << arena.error().message;
    arena_ = std::move(*arena);
  }
  void TearDown() override {
    if (arena_) arena_->stop();
    if (upstream_) upstream_->stop();
  }

  Devices devices_;
  std::unique_ptr<http::HttpServer> upstream_;
  std::unique_ptr<Colosseum> arena_;
};

TEST_F(ColosseumTest, Colosseum_AnswersInProgressHoldUpNoOtherRouteAndAreCappedPerClient) {
  const int port = arena_->port();
  auto client = [port] {
    http::ClientOptions o;
    o.timeout_s = 20;
    return std::move(*http::HttpClient::tcp("127.0.0.1", port, o));
  };
  const std::string prompt = R"({"request_id": "duel-1", "prompt": "hi", "model_index": 0})";
  auto answering = std::async(std::launch::async, [&] {
    return client()->request("POST", "/prompt", prompt);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  for (const char* path : {"/health", "/zeus/colosseum", "/zeus/leaderboard", "/models"}) {
    const auto start = Clock::now();
    auto answer = client()->request("GET", path);
    ASSERT_TRUE(answer.has_value()) << path;
    EXPECT_EQ(answer->status, 200) << path;
    EXPECT_LT(seconds_since(start), 0.5) << path << " waited for an answer in progress";
  }
  const auto start = Clock::now();
  auto second = client()->request("POST", "/prompt",
                                  R"({"request_id": "duel-1", "prompt": "hi", "model_index": 1})");
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->status, 429) << second->body;
  EXPECT_LT(seconds_since(start), 0.5);
  auto first = answering.get();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->status, 200) << first->body;
  // The slot came back: the other side's answer may stream now.
  auto third = client()->request("POST", "/prompt",
                                 R"({"request_id": "duel-1", "prompt": "hi", "model_index": 1})");
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third->status, 200) << third->body;
}

// A POST /prompt sent from the loopback address `source` (127.0.0.N: another client address),
// left open while its answer streams. Returns the socket (closed by the caller).
int prompt_from(const char* source, int port, const std::string& body) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &from.sin_addr);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)), 0) << source;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0) << source;
  const std::string request = "POST /prompt HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
  EXPECT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  return fd;
}

// The per-address cap alone hid the blocking: from as many addresses as
// there are workers, every worker holds an answer in progress, and the page, /health, the
// leaderboard, /models and a vote are still answered at once.
TEST_F(ColosseumTest, OtherRoutesAreAnsweredWhileAnswersFromManyAddressesHoldEveryWorker) {
  const int port = arena_->port();
  std::vector<int> held;
  const char* sources[] = {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6",
                           "127.0.0.7"};
  for (int i = 0; i < 6; ++i) {  // 4 hold the workers, 2 wait for one
    held.push_back(prompt_from(sources[i], port,
                               R"({"request_id": "hog-)" + std::to_string(i) +
                                   R"(", "prompt": "hi", "model_index": 0})"));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  http::ClientOptions o;
  o.timeout_s = 20;
  auto client = std::move(*http::HttpClient::tcp("127.0.0.1", port, o));
  for (const char* path : {"/health", "/zeus/colosseum", "/zeus/leaderboard", "/models"}) {
    const auto start = Clock::now();
    auto answer = client->request("GET", path);
    ASSERT_TRUE(answer.has_value()) << path;
    EXPECT_EQ(answer->status, 200) << path;
    EXPECT_LT(seconds_since(start), 0.5) << path << " waited for a worker";
  }
  const auto start = Clock::now();
  auto vote = client->request("POST", "/response_vote",
                              R"({"request_id": "no-such-duel", "victory_index": 0})");
  ASSERT_TRUE(vote.has_value());
  EXPECT_NE(vote->status, 200);  // no such duel, but answered at once
  EXPECT_LT(seconds_since(start), 0.5) << "the vote waited for a worker";
  for (int fd : held) ::close(fd);
}

}  // namespace
}  // namespace zeus::proxy
