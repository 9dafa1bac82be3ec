// The relay's flow control on the event loop, with the real LlmProxy between a real upstream and
// a real client on 127.0.0.1 (fake NVML GPU): a client that stops reading holds the upstream back
// (the proxy reads no further than its bounded buffer), then gets every byte once it reads again;
// a client that hangs up mid-stream stops the upstream's answer, and the proxy serves on;
// repeated header fields pass both ways; each with one event-loop thread and with two.
#include <gtest/gtest.h>

#include <boost/beast/core/string.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "device/nvml/nvml_gpu.h"
#include "http/client.h"
#include "http/server.h"
#include "http/test_socket.h"
#include "proxy/proxy.h"

namespace zeus::proxy {
namespace {

constexpr size_t kPiece = 16 * 1024;
constexpr int kPieces = 4096;  // 64 MiB: far more than every buffer on the way together
constexpr int kShortPieces = 64;  // 1 MiB: a whole answer after a cut one

struct Upstream {
  std::atomic<size_t> written{0};
  std::atomic<bool> writer_stopped{false};  // a write failed: the proxy let go of the answer
  std::atomic<int> requests{0};             // every request that reached it
  std::unique_ptr<http::HttpServer> server;
  int port = 0;
};

// An SSE upstream that writes kPieces (or kShortPieces) comment lines of kPiece bytes as fast as
// it may.
void start_upstream(Upstream& u) {
  const std::string line = ": " + std::string(kPiece - 3, 'x') + "\n";
  auto server = http::HttpServer::start(
      {}, http::HttpServer::on_workers([&u, line](const http::HttpRequest& request,
                                                  const http::Peer&,
                                                  std::shared_ptr<http::Reply> reply) {
        ++u.requests;
        if (request.path == "/fields" || request.path == "/gw/fields") {
          // What the upstream saw, with repeated fields back and the target it was sent.
          std::string seen = request.header("host") ? *request.header("host") : "none";
          for (const auto& [name, value] : request.headers) {
            if (name == "x-multi") seen += " " + value;
            if (name == "expect") seen += " expect";
            if (boost::beast::iequals(name, "x-hop")) seen += " x-hop";
          }
          reply->send(http::HttpResponse{200,
                                         seen,
                                         "text/plain",
                                         {{"Set-Cookie", "a=1"},
                                          {"Set-Cookie", "b=2"},
                                          {"X-Target", request.target}},
                                         false});
          return;
        }
        http::StreamHead head;
        head.content_type = "text/event-stream";
        auto stream = reply->start_body(std::move(head));
        // A request that names the user "short" gets kShortPieces lines, the others kPieces.
        const bool short_answer = request.body.find(R"("user":"short")") != std::string::npos;
        const int pieces = short_answer ? kShortPieces : kPieces;
        for (int i = 0; i < pieces && stream; ++i) {
          if (!stream->write(line)) {
            u.writer_stopped = true;
            return;
          }
          u.written += line.size();
        }
        if (stream) stream->finish({});
      }));
  ASSERT_TRUE(server.has_value()) << server.error().message;
  u.server = std::move(*server);
  auto port = u.server->listen_tcp("127.0.0.1", 0);
  ASSERT_TRUE(port.has_value()) << port.error().message;
  u.port = *port;
}

// The first value of an answer's field `name` (any case), "" when absent.
std::string field_of(const http::HttpResponse& answer, std::string_view name) {
  for (const auto& [k, v] : answer.headers) {
    if (boost::beast::iequals(k, name)) return v;
  }
  return "";
}

class RelayTest : public ::testing::TestWithParam<int> {  // the proxy's I/O threads
 protected:
  void SetUp() override {
    ::unsetenv("ZEUS_FAKE_NVML_STATE");  // one fake GPU, its state in memory
    auto gpus = open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
    ASSERT_TRUE(gpus.has_value()) << gpus.error().message;
    devices_.gpus = std::move(*gpus);
    start_upstream(upstream_);
    ProxyOptions options;
    options.upstream =
        *parse_upstream_url("http://127.0.0.1:" + std::to_string(upstream_.port), "--upstream");
    options.port = 0;
    options.gpu_indices = {0};
    options.io_threads = GetParam();
    auto proxy = LlmProxy::start(devices_, options);
    ASSERT_TRUE(proxy.has_value()) << proxy.error().message;
    proxy_ = std::move(*proxy);
    http::ClientOptions client_options;
    client_options.timeout_s = 30;
    client_ = std::move(*http::HttpClient::tcp("127.0.0.1", proxy_->port(), client_options));
  }

  // A second proxy whose --upstream has a path (a server behind a gateway's path /gw/).
  Result<std::unique_ptr<LlmProxy>> start_gateway_proxy() {
    ProxyOptions options;
    options.upstream = *parse_upstream_url(
        "http://127.0.0.1:" + std::to_string(upstream_.port) + "/gw/", "--upstream");
    options.port = 0;
    options.gpu_indices = {0};
    options.io_threads = GetParam();
    return LlmProxy::start(devices_, options);
  }

  Devices devices_;
  Upstream upstream_;
  std::unique_ptr<LlmProxy> proxy_;
  std::unique_ptr<http::HttpClient> client_;
};

TEST_P(RelayTest, AClientThatStopsReadingHoldsTheUpstreamBackThenGetsEveryByte) {
  size_t received = 0;
  size_t written_while_paused = 0;
  bool paused = false;
  auto answer = client_->stream(
      "POST", "/v1/completions", R"({"model":"m","stream":true})", {},
      [&](std::string_view piece) {
        if (!paused) {  // stop reading for a while: the proxy must stop reading too
          paused = true;
          std::this_thread::sleep_for(std::chrono::milliseconds(1500));
          written_while_paused = upstream_.written.load();
        }
        received += piece.size();
        return true;
      },
      30);
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->status, 200);
  EXPECT_TRUE(answer->body_complete);
  EXPECT_EQ(received, kPiece * kPieces);
  // Socket buffers (autotuned, a few MiB each way) and the proxy's 1 MiB are all that may hold
  // the answer while nobody reads it: far less than the whole 64 MiB.
  EXPECT_LT(written_while_paused, kPiece * kPieces / 2) << "the proxy buffered without bound";
  EXPECT_GT(written_while_paused, 0u);
}

TEST_P(RelayTest, AClientThatHangsUpStopsTheUpstreamsAnswerAndTheProxyServesOn) {
  int pieces = 0;
  auto cut = client_->stream(
      "POST", "/v1/completions", R"({"model":"m","stream":true})", {},
      [&](std::string_view) { return ++pieces < 3; }, 30);  // then the client closes
  ASSERT_TRUE(cut.has_value()) << cut.error().message;
  EXPECT_FALSE(cut->body_complete);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!upstream_.writer_stopped.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(upstream_.writer_stopped.load()) << "the upstream's answer went on unread";
  EXPECT_LT(upstream_.written.load(), kPiece * kPieces);
  size_t received = 0;
  auto whole = client_->stream(
      "POST", "/v1/completions", R"({"model":"m","stream":true,"user":"short"})", {},
      [&](std::string_view piece) {
        received += piece.size();
        return true;
      },
      30);
  ASSERT_TRUE(whole.has_value()) << whole.error().message;
  EXPECT_TRUE(whole->body_complete);
  EXPECT_EQ(received, kPiece * kShortPieces);
  EXPECT_EQ(proxy_->summary().requests, 2);
}

// Repeated fields pass both ways (a request's two X-Multi, an answer's two Set-Cookie); the
// upstream gets its own Host (host:port), not the client's; a client's Expect: 100-continue is
// answered by the proxy (its client reads past the 100) and not passed on, since the proxy sends
// the whole body at once.
TEST_P(RelayTest, RepeatedFieldsPassBothWaysAndTheUpstreamGetsItsOwnHost) {
  auto answer = client_->request("POST", "/fields", "{}",
                                 {{"X-Multi", "1"}, {"X-Multi", "2"}, {"Expect", "100-continue"}});
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->body, "127.0.0.1:" + std::to_string(upstream_.port) + " 1 2");
  int cookies = 0;
  for (const auto& [name, value] : answer->headers) cookies += name == "Set-Cookie" ? 1 : 0;
  EXPECT_EQ(cookies, 2);
  EXPECT_EQ(field_of(*answer, "x-target"), "/fields");
}

// An --upstream with a path (a server behind a gateway's path): every target goes under it.
TEST_P(RelayTest, AnUpstreamsPathGoesBeforeEveryTarget) {
  auto proxy = start_gateway_proxy();
  ASSERT_TRUE(proxy.has_value()) << proxy.error().message;
  auto client = http::HttpClient::tcp("127.0.0.1", (*proxy)->port(), {});
  ASSERT_TRUE(client.has_value()) << client.error().message;
  auto answer = (*client)->request("GET", "/fields?x=%2F");
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(field_of(*answer, "x-target"), "/gw/fields?x=%2F");
}

// No target leaves the --upstream's path, and an absolute-form target's
// authority is never the upstream's virtual host: dot segments (plain, percent-encoded, mixed
// case) are removed before the path is put in front; an absolute-form target goes as its path
// and query, with the upstream's own Host; what the upstream could still read as another path
// (an encoded slash or backslash, "..;") is refused with 400 and never forwarded.
TEST_P(RelayTest, ProxyTarget_NoTargetLeavesTheUpstreamsPathOrChoosesItsHost) {
  auto proxy = start_gateway_proxy();
  ASSERT_TRUE(proxy.has_value()) << proxy.error().message;
  auto client = http::HttpClient::tcp("127.0.0.1", (*proxy)->port(), {});
  ASSERT_TRUE(client.has_value()) << client.error().message;
  const std::string own_host = "127.0.0.1:" + std::to_string(upstream_.port);
  for (const char* target :
       {"/../fields", "/x/../fields", "/%2e%2e/fields", "/%2E./fields", "/v1/../../../fields",
        "/./fields", "http://internal.example/fields", "HTTP://gw/admin/../fields"}) {
    auto answer = (*client)->request("GET", target);
    ASSERT_TRUE(answer.has_value()) << target << ": " << answer.error().message;
    EXPECT_EQ(answer->status, 200) << target;
    EXPECT_EQ(field_of(*answer, "x-target"), "/gw/fields") << target;
    EXPECT_EQ(answer->body, own_host) << target;  // the Host the upstream saw
  }
  const int before = upstream_.requests.load();
  for (const char* target : {"/..%2Ffields", "/a%2f..%2f..%2ffields", "/..;/fields", "/.;x/fields",
                             "/%5C../fields", "/a%00/fields"}) {
    auto answer = (*client)->request("GET", target);
    ASSERT_TRUE(answer.has_value()) << target << ": " << answer.error().message;
    EXPECT_EQ(answer->status, 400) << target;
    EXPECT_NE(answer->body.find("request target"), std::string::npos) << answer->body;
  }
  EXPECT_EQ(upstream_.requests.load(), before) << "a refused target reached the upstream";
}

// Fields that a client's Connection field names are of its hop only (RFC
// 9110 §7.6.1) and never reach the upstream.
TEST_P(RelayTest, ProxyHop_FieldsNamedInConnectionAreNotForwarded) {
  // Raw bytes: a client library sets Connection itself.
  http::testing::RawSocket raw = http::testing::RawSocket::tcp(proxy_->port());
  ASSERT_TRUE(raw.ok());
  ASSERT_TRUE(raw.send("POST /fields HTTP/1.1\r\nHost: proxy\r\nConnection: keep-alive, X-Hop\r\n"
                       "X-Hop: secret-hop\r\nX-Multi: 1\r\nContent-Length: 2\r\n\r\n{}"));
  const std::string answer = raw.read(10, "127.0.0.1:" + std::to_string(upstream_.port) + " 1");
  EXPECT_NE(answer.find("\r\n\r\n127.0.0.1:" + std::to_string(upstream_.port) + " 1"),
            std::string::npos)
      << answer;
  EXPECT_EQ(answer.find("x-hop"), std::string::npos) << answer;
}

INSTANTIATE_TEST_SUITE_P(IoThreads, RelayTest, ::testing::Values(1, 2));

}  // namespace
}  // namespace zeus::proxy
