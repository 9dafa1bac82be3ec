// HttpServer and HttpClient together on 127.0.0.1 and a Unix socket: requests, keep-alive,
// deadlines against slow and idle peers, admission at the cap, long-polls, event streams,
// graceful shutdown.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "http/client.h"
#include "http/server.h"
#include "http/test_server.h"
#include "http/test_socket.h"

namespace zeus::http {
namespace {

using testing::RawSocket;
using testing::Running;
using testing::start;
using namespace std::chrono_literals;

HttpResponse echo(const HttpRequest& request, const Peer& peer) {
  HttpResponse r;
  r.body = request.method + " " + request.path + " " + request.body + " " + peer.key;
  for (const auto& [k, v] : request.query) r.body += " " + k + "=" + v;
  r.content_type = "text/plain";
  return r;
}

TEST(HttpServerTest, AnswersBlockingHandlersOverKeptAliveConnections) {
  Running r = start({}, HttpServer::blocking(echo));
  for (int i = 0; i < 20; ++i) {
    Result<HttpResponse> a = r.client->request("POST", "/a%20b?x=1&y=%2F", "body");
    ASSERT_TRUE(a.has_value()) << a.error().message;
    EXPECT_EQ(a->status, 200);
    EXPECT_EQ(a->body, "POST /a b body 127.0.0.1 x=1 y=/");
    EXPECT_FALSE(a->close);
  }
  Result<HttpResponse> head = r.client->request("HEAD", "/h");
  ASSERT_TRUE(head.has_value()) << head.error().message;
  EXPECT_EQ(head->body, "");
  EXPECT_EQ(r.server->stats().connections, 1u);  // one connection, reused
}

TEST(HttpServerTest, ExpectContinueGets100BeforeTheBody) {
  Running r = start({}, HttpServer::blocking(echo));
  RawSocket s = RawSocket::tcp(r.port);
  s.send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_EQ(s.read(3, "\r\n\r\n"), "HTTP/1.1 100 Continue\r\n\r\n");
  s.send("body");
  const std::string answer = s.read(3, "body 127.0.0.1");
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
}

TEST(HttpServerTest, NegativeHugeOrConflictingContentLengthGetsAPrompt400) {
  // The header timeout is far away: only the Content-Length itself can trigger these answers.
  ServerOptions options;
  options.header_timeout_s = 30;
  options.body_timeout_s = 30;
  Running r = start(options, HttpServer::blocking(echo));
  for (const std::string header :
       {"Content-Length: -5\r\n", "Content-Length: 99999999999999999999\r\n",
        "Content-Length: 3\r\nContent-Length: 5\r\n", "Content-Length: 3, 5\r\n",
        "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n"}) {
    RawSocket s = RawSocket::tcp(r.port);
    ASSERT_TRUE(s.send("POST /x HTTP/1.1\r\nHost: x\r\n" + header + "\r\nabc"));
    const std::string answer = s.read(3, "\r\n\r\n");
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << header << " -> " << answer;
  }
  // Equal duplicates are one length (RFC 9110 8.6), and the request is served.
  RawSocket s = RawSocket::tcp(r.port);
  ASSERT_TRUE(
      s.send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"));
  const std::string answer = s.read(3, "abc 127.0.0.1");
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
}

TEST(HttpServerTest, SlowHeadersGet408AndIdleConnectionsClose) {
  ServerOptions options;
  options.header_timeout_s = 0.3;
  options.idle_timeout_s = 0.3;
  Running r = start(options, HttpServer::blocking(echo));
  RawSocket slow = RawSocket::tcp(r.port);
  ASSERT_TRUE(slow.send("GET / HTTP/1.1\r\nX-A: 1\r\n"));  // never finishes its headers
  const std::string answer = slow.read(3, "\r\n\r\n");
  EXPECT_EQ(answer.rfind("HTTP/1.1 408", 0), 0u) << answer;
  RawSocket idle = RawSocket::tcp(r.port);
  EXPECT_TRUE(idle.closed_by_peer(3));
  EXPECT_GE(r.server->stats().timeouts, 2u);
}

// One timer serves every deadline of a connection, moved lazily: a shorter deadline after a
// longer one still comes on time, and a longer one after a shorter one does not end early.
TEST(HttpServerTest, EachDeadlineCountsFromItsOwnStartWhateverCameBefore) {
  ServerOptions options;
  options.idle_timeout_s = 1.5;
  options.header_timeout_s = 0.2;
  Running r = start(options, HttpServer::blocking(echo));
  const auto started = std::chrono::steady_clock::now();
  RawSocket slow = RawSocket::tcp(r.port);  // idle first (1.5 s), then slow headers (0.2 s)
  ASSERT_TRUE(slow.send("GET / HTTP/1.1\r\nX-A: 1\r\n"));
  EXPECT_EQ(slow.read(3, "\r\n\r\n").rfind("HTTP/1.1 408", 0), 0u);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(1400));
  RawSocket kept = RawSocket::tcp(r.port);  // headers (0.2 s), then idle after the answer (1.5 s)
  ASSERT_TRUE(kept.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(kept.read(3, "\r\n\r\n").rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_FALSE(kept.closed_by_peer(0.6));  // the header deadline has passed; idle has not
  EXPECT_TRUE(kept.closed_by_peer(5));
}

TEST(HttpServerTest, IdleAndSlowConnectionsCannotLockOutAClient) {
  ServerOptions options;
  options.max_connections = 8;
  Running r = start(options, HttpServer::blocking(echo));
  std::vector<RawSocket> attackers;
  for (int i = 0; i < 20; ++i) {
    attackers.push_back(RawSocket::tcp(r.port));
    if (i % 2) attackers.back().send("GET / HTTP/1.1\r\n");  // slowloris
    std::this_thread::sleep_for(2ms);
  }
  for (int i = 0; i < 5; ++i) {
    Result<HttpResponse> a = r.client->request("GET", "/ok");
    ASSERT_TRUE(a.has_value()) << a.error().message;
    EXPECT_EQ(a->status, 200);
  }
  EXPECT_LE(r.server->stats().connections, 9u);
  EXPECT_GE(r.server->stats().evicted, 12u);
}

TEST(HttpServerTest, PerPeerCapRefusesWith503) {
  ServerOptions options;
  options.max_connections_per_peer = 2;
  Running r = start(options, HttpServer::blocking(echo));
  RawSocket a = RawSocket::tcp(r.port), b = RawSocket::tcp(r.port);
  std::this_thread::sleep_for(50ms);
  RawSocket c = RawSocket::tcp(r.port);
  const std::string answer = c.read(3, "}");
  EXPECT_EQ(answer.rfind("HTTP/1.1 503", 0), 0u) << answer;
  EXPECT_NE(answer.find("per-peer limit"), std::string::npos) << answer;
}

// ServerOptions::error_answer words every error the layer answers itself: a body over the limit
// (413), a malformed request (400), a handler that threw or dropped its reply (500), a connection
// refused at the per-peer cap (503); what a handler answers stays its own.
TEST(HttpServerTest, ErrorAnswerWordsTheLayersOwnErrors) {
  ServerOptions options;
  options.limits.max_body_bytes = 16;
  options.error_answer = [](int status, std::string_view message) {
    HttpResponse r;
    r.status = status;
    r.body = "custom " + std::to_string(status) + ": " + std::string(message);
    r.content_type = "text/plain";
    return r;
  };
  Running r = start(options, HttpServer::blocking([](const HttpRequest& q, const Peer& p) {
    if (q.path == "/throw") throw std::runtime_error("boom");
    if (q.path == "/own") return HttpResponse::error(404, "the handler's own");
    return echo(q, p);
  }));
  Result<HttpResponse> big = r.client->request("POST", "/x", std::string(17, 'a'));
  ASSERT_TRUE(big.has_value()) << big.error().message;
  EXPECT_EQ(big->status, 413);
  EXPECT_EQ(big->body.rfind("custom 413: ", 0), 0u) << big->body;
  Result<HttpResponse> threw = r.client->request("GET", "/throw");
  ASSERT_TRUE(threw.has_value()) << threw.error().message;
  EXPECT_EQ(threw->body, "custom 500: internal error: boom");
  Result<HttpResponse> own = r.client->request("GET", "/own");
  ASSERT_TRUE(own.has_value()) << own.error().message;
  EXPECT_EQ(own->body, R"({"message":"the handler's own"})");
  {
    RawSocket bad = RawSocket::tcp(r.port);
    bad.send("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n");
    const std::string answer = bad.read(3, "custom 400: ");
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer;
  }
  ServerOptions other;
  other.error_answer = options.error_answer;
  other.max_connections_per_peer = 1;
  Running dropping = start(other, [](const HttpRequest&, const Peer&, std::shared_ptr<Reply>) {});
  Result<HttpResponse> dropped = dropping.client->request("GET", "/drop");
  ASSERT_TRUE(dropped.has_value()) << dropped.error().message;
  EXPECT_EQ(dropped->body, "custom 500: internal error: the request was dropped unanswered");
  dropping.client.reset();
  for (int i = 0; i < 200 && dropping.server->stats().connections > 0; ++i) {
    std::this_thread::sleep_for(5ms);
  }
  RawSocket first = RawSocket::tcp(dropping.port);
  std::this_thread::sleep_for(50ms);
  RawSocket second = RawSocket::tcp(dropping.port);
  const std::string refused = second.read(3, "per-peer limit");
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  EXPECT_NE(refused.find("custom 503: "), std::string::npos) << refused;
}

TEST(HttpServerTest, InlineRequestsAreAnsweredWhileEveryWorkerIsBusy) {
  ServerOptions options;
  options.workers = 1;
  options.inline_request = [](const HttpRequest& q) { return q.path == "/healthz"; };
  std::atomic<bool> release{false};
  Running r = start(options, HttpServer::blocking([&](const HttpRequest& q, const Peer&) {
    while (q.path == "/slow" && !release.load()) std::this_thread::sleep_for(1ms);
    return HttpResponse{200, "done", "text/plain", {}, false};
  }));
  auto slow_client = std::move(*HttpClient::tcp("127.0.0.1", r.port, {}));
  std::thread slow([&] { (void)slow_client->request("GET", "/slow"); });
  std::this_thread::sleep_for(50ms);
  const auto t0 = std::chrono::steady_clock::now();
  Result<HttpResponse> health = r.client->request("GET", "/healthz");
  ASSERT_TRUE(health.has_value()) << health.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  release = true;
  slow.join();
}

TEST(HttpServerTest, LongPollsWaitWithoutThreadsAndAllCompleteWhenReleased) {
  std::mutex mu;
  std::vector<std::shared_ptr<Reply>> waiting;
  Running r = start({}, [&](const HttpRequest& q, const Peer&, std::shared_ptr<Reply> reply) {
    if (q.path == "/deadline") {
      reply->answer_by(0.1, HttpResponse{204, "", "", {}, false});
      return;
    }
    std::lock_guard<std::mutex> lock(mu);
    waiting.push_back(std::move(reply));
  });
  Result<HttpResponse> timed = r.client->request("GET", "/deadline");
  ASSERT_TRUE(timed.has_value()) << timed.error().message;
  EXPECT_EQ(timed->status, 204);

  constexpr int kPolls = 500;
  std::vector<RawSocket> polls;
  for (int i = 0; i < kPolls; ++i) {
    polls.push_back(RawSocket::tcp(r.port));
    ASSERT_TRUE(polls.back().send("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n"));
  }
  for (int i = 0; i < 500 && [&] { std::lock_guard<std::mutex> l(mu); return waiting.size(); }() < kPolls; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(waiting.size(), static_cast<size_t>(kPolls));
    for (size_t i = 0; i < waiting.size(); ++i) {
      EXPECT_TRUE(waiting[i]->send(HttpResponse{200, std::to_string(i), "text/plain", {}, false}));
    }
    waiting.clear();
  }
  int answered = 0;
  for (auto& p : polls) answered += p.read(5, "\r\n\r\n").rfind("HTTP/1.1 200", 0) == 0;
  EXPECT_EQ(answered, kPolls);
}

TEST(HttpServerTest, AWaiterThatHangsUpIsNoticedAndADroppedReplyAnswers500) {
  std::mutex mu;
  std::shared_ptr<Reply> held;
  Running r = start({}, [&](const HttpRequest& q, const Peer&, std::shared_ptr<Reply> reply) {
    if (q.path == "/drop") return;  // the handler forgets the request
    std::lock_guard<std::mutex> lock(mu);
    held = std::move(reply);
  });
  Result<HttpResponse> dropped = r.client->request("GET", "/drop");
  ASSERT_TRUE(dropped.has_value()) << dropped.error().message;
  EXPECT_EQ(dropped->status, 500);
  {
    RawSocket waiter = RawSocket::tcp(r.port);
    waiter.send("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n");
    while ([&] { std::lock_guard<std::mutex> l(mu); return held == nullptr; }()) {
      std::this_thread::sleep_for(1ms);
    }
    EXPECT_FALSE(held->client_gone());
  }  // the waiter hangs up
  for (int i = 0; i < 200 && !held->client_gone(); ++i) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(held->client_gone());
  held.reset();  // forgotten: answered 500, and the connection closes
  for (int i = 0; i < 200 && r.server->stats().connections > 1; ++i) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(r.server->stats().connections, 1u);  // only the client's kept-alive connection
}

TEST(HttpServerTest, EventStreamsDeliverInOrderAndDropAStalledListener) {
  ServerOptions options;
  options.max_stream_buffer_bytes = 128 * 1024;
  std::mutex mu;
  std::vector<std::shared_ptr<EventStream>> streams;
  Running r = start(options, [&](const HttpRequest&, const Peer&, std::shared_ptr<Reply> reply) {
    std::lock_guard<std::mutex> lock(mu);
    streams.push_back(reply->start_events());
  });
  constexpr int kListeners = 20;
  std::vector<RawSocket> listeners;
  for (int i = 0; i < kListeners; ++i) {
    listeners.push_back(RawSocket::tcp(r.port, i == 0 ? 4096 : 0));
    listeners.back().send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  while ([&] { std::lock_guard<std::mutex> l(mu); return streams.size(); }() < kListeners) {
    std::this_thread::sleep_for(5ms);
  }
  // Listener 0 never reads: it falls behind and is dropped; the others read as events come.
  std::vector<std::string> received(kListeners);
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  for (int i = 1; i < kListeners; ++i) {
    readers.emplace_back([&, i] {
      while (!done.load() || received[i].find("data: 1999\n") == std::string::npos) {
        std::string more = listeners[i].read(0.05);
        received[i] += more;
        if (received[i].find("data: 1999\n") != std::string::npos) break;
        if (more.empty() && done.load()) break;
      }
    });
  }
  const std::string padding(500, 'p');
  const std::string bulk(64 * 1024, 'b');
  int dropped_at = -1;
  for (int e = 0; e < 2000; ++e) {
    if (e % 2 == 0) std::this_thread::sleep_for(1ms);  // a steady producer, ~1 MB/s each
    std::lock_guard<std::mutex> lock(mu);
    for (size_t s = 0; s < streams.size(); ++s) {
      bool sent = streams[s]->send(padding + "\n" + std::to_string(e), "tick");
      // The stalled listener's stream also carries bulk, more than the kernel's socket buffers
      // can absorb, so its backlog must reach the bound.
      if (s == 0 && sent) sent = streams[s]->send(bulk, "bulk");
      if (s == 0 && !sent && dropped_at < 0) dropped_at = e;
    }
  }
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_GE(dropped_at, 0) << "the stalled listener was never dropped";
  EXPECT_FALSE(streams[0]->open());
  for (int i = 1; i < kListeners; ++i) {
    ASSERT_EQ(received[i].rfind("HTTP/1.1 200", 0), 0u) << i;
    EXPECT_NE(received[i].find("text/event-stream"), std::string::npos);
    size_t at = 0;
    for (int e = 0; e < 2000; ++e) {  // every event, in order
      at = received[i].find("data: " + std::to_string(e) + "\n", at);
      ASSERT_NE(at, std::string::npos) << "listener " << i << " missed event " << e;
    }
  }
}

TEST(HttpServerTest, StopFinishesInFlightRequests) {
  std::atomic<bool> started{false};
  Running r = start({}, HttpServer::blocking([&](const HttpRequest&, const Peer&) {
    started = true;
    std::this_thread::sleep_for(200ms);
    return HttpResponse{200, "finished", "text/plain", {}, false};
  }));
  Result<HttpResponse> answer = fail(ErrorCode::kInternal, "not sent");
  std::thread t([&] { answer = r.client->request("GET", "/work"); });
  while (!started) std::this_thread::sleep_for(1ms);
  r.server->stop();
  t.join();
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->body, "finished");
  EXPECT_TRUE(answer->close);
}

TEST(HttpServerTest, UnixSocketsIdentifyTheirPeer) {
  const std::string path = ::testing::TempDir() + "/zeus_http_test.sock";
  std::filesystem::remove(path);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(listen(fd, 16), 0);
  ServerOptions options;
  options.identify = [](int peer_fd, Peer peer) -> Result<Peer> {
    ucred cred{};
    socklen_t length = sizeof(cred);
    getsockopt(peer_fd, SOL_SOCKET, SO_PEERCRED, &cred, &length);
    peer.key = "uid " + std::to_string(cred.uid);
    peer.context = static_cast<int>(cred.pid);
    return peer;
  };
  auto server = std::move(*HttpServer::start(options, HttpServer::blocking(
      [](const HttpRequest&, const Peer& peer) {
        return HttpResponse{200, peer.key + " pid " + std::to_string(std::any_cast<int>(peer.context)),
                            "text/plain", {}, false};
      })));
  ASSERT_TRUE(server->listen_unix(fd).has_value());
  auto client = std::move(*HttpClient::unix_socket(path, {}));
  Result<HttpResponse> answer = client->request("GET", "/who");
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->body, "uid " + std::to_string(getuid()) + " pid " + std::to_string(getpid()));
  EXPECT_EQ(client->where(), "unix:" + path);
  server->stop();
  std::filesystem::remove(path);
}

TEST(HttpClientTest, UnreachableServersAndTimeoutsAreUnavailableWithTheAddress) {
  ClientOptions options;
  options.timeout_s = 0.3;
  auto nobody = std::move(*HttpClient::tcp("127.0.0.1", 1, options));
  Result<HttpResponse> a = nobody->request("GET", "/");
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(a.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(a.error().message.find("127.0.0.1:1"), std::string::npos) << a.error().message;

  std::vector<std::shared_ptr<Reply>> held;
  std::mutex mu;
  ServerOptions quick_stop;
  quick_stop.shutdown_grace_s = 0.2;
  Running r = start(quick_stop, [&](const HttpRequest&, const Peer&, std::shared_ptr<Reply> reply) {
    reply->answer_by(5, HttpResponse{200, "late", "text/plain", {}, false});
    std::lock_guard<std::mutex> lock(mu);
    held.push_back(std::move(reply));
  });
  auto impatient = std::move(*HttpClient::tcp("127.0.0.1", r.port, options));
  Result<HttpResponse> b = impatient->request("GET", "/");
  ASSERT_FALSE(b.has_value());
  EXPECT_NE(b.error().message.find("no answer within 0.3 s"), std::string::npos) << b.error().message;
  EXPECT_FALSE(HttpClient::tcp("127.0.0.1", 0, {}).has_value());
  EXPECT_FALSE(HttpClient::tcp("127.0.0.1", 80, ClientOptions{.timeout_s = -1}).has_value());
  r.server->stop();
  held.clear();
}

TEST(HttpClientTest, StreamsArriveInPieces) {
  std::shared_ptr<EventStream> stream;
  std::mutex mu;
  Running r = start({}, [&](const HttpRequest&, const Peer&, std::shared_ptr<Reply> reply) {
    std::lock_guard<std::mutex> lock(mu);
    stream = reply->start_events();
  });
  std::thread producer([&] {
    while ([&] { std::lock_guard<std::mutex> l(mu); return stream == nullptr; }()) {
      std::this_thread::sleep_for(1ms);
    }
    for (int i = 0; i < 3; ++i) {
      stream->send(std::to_string(i));
      std::this_thread::sleep_for(20ms);
    }
    stream->close();
  });
  std::string all;
  int pieces = 0;
  Result<HttpResponse> head = r.client->stream(
      "GET", "/events", "", {},
      [&](std::string_view piece) {
        all += piece;
        ++pieces;
        return true;
      },
      2);
  producer.join();
  ASSERT_TRUE(head.has_value()) << head.error().message;
  EXPECT_EQ(head->content_type, "text/event-stream");
  EXPECT_EQ(all, "data: 0\n\ndata: 1\n\ndata: 2\n\n");
  EXPECT_GE(pieces, 2);
}

}  // namespace
}  // namespace zeus::http
