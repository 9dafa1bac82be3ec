// AsyncHttpClient against real servers on 127.0.0.1: whole and streamed answers, connections
// reused, flow control (a paused exchange reads nothing until resumed), and every failure an
// upstream can cause — down, silent, quiet mid-body, stopped, untrustworthy framing.
#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "http/async_client.h"
#include "http/stream_queue.h"
#include "http/test_server.h"
#include "http/test_socket.h"
#include "http/tls_test_server.h"

namespace zeus::http {
namespace {

using testing::Running;

// An event loop on its own thread, as a server's I/O thread.
class Loop {
 public:
  Loop() : thread_([this] { io_.run(); }) {}
  ~Loop() {
    work_.reset();
    io_.stop();
    thread_.join();
  }
  boost::asio::any_io_executor executor() { return io_.get_executor(); }

 private:
  boost::asio::io_context io_{1};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
      boost::asio::make_work_guard(io_);
  std::thread thread_;
};

std::shared_ptr<AsyncHttpClient> client_to(int port, double timeout_s = 5) {
  ClientOptions options;
  options.timeout_s = timeout_s;
  auto client = AsyncHttpClient::for_scheme("http", "127.0.0.1", port, options);
  EXPECT_TRUE(client.has_value()) << client.error().message;
  return *client;
}

// One exchange's results, as its handlers saw them.
struct Seen {
  std::mutex mu;
  int status = 0;
  std::string body;
  int pieces = 0;
  std::promise<Result<HttpResponse>> done;
};

ExchangeHandlers recording(Seen& seen, std::function<Flow(int piece)> flow = nullptr) {
  ExchangeHandlers h;
  h.on_head = [&seen](const HttpResponse& head) {
    std::lock_guard<std::mutex> lock(seen.mu);
    seen.status = head.status;
    return true;
  };
  h.on_data = [&seen, flow](std::string_view piece) {
    std::lock_guard<std::mutex> lock(seen.mu);
    seen.body.append(piece);
    const int n = ++seen.pieces;
    return flow ? flow(n) : Flow::kMore;
  };
  h.on_done = [&seen](Result<HttpResponse> end) { seen.done.set_value(std::move(end)); };
  return h;
}

Result<HttpResponse> wait_done(Seen& seen) {
  auto future = seen.done.get_future();
  EXPECT_EQ(future.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  return future.get();
}

TEST(AsyncClientTest, AWholeAnswerArrivesAndItsConnectionServesTheNext) {
  std::atomic<int> served{0};
  std::mutex peers_mu;
  std::set<std::string> peers;
  Running r = testing::start({}, HttpServer::blocking([&](const HttpRequest& q, const Peer& p) {
    served.fetch_add(1);
    std::lock_guard<std::mutex> lock(peers_mu);
    peers.insert(p.address);
    return HttpResponse{200, "echo:" + q.body, "application/json", {{"X-Upstream", "yes"}}, false};
  }));
  Loop loop;
  auto client = client_to(r.port);
  for (int i = 0; i < 3; ++i) {
    Seen seen;
    client->start(loop.executor(), "POST", "/v1/completions", "{\"i\":" + std::to_string(i) + "}",
                  {}, recording(seen), 5);
    Result<HttpResponse> end = wait_done(seen);
    ASSERT_TRUE(end.has_value()) << end.error().message;
    EXPECT_EQ(seen.status, 200);
    EXPECT_EQ(seen.body, "echo:{\"i\":" + std::to_string(i) + "}");
    EXPECT_TRUE(end->body_complete);
    EXPECT_FALSE(end->close);
    EXPECT_EQ(end->content_type, "application/json");
    bool relayed = false;
    for (const auto& [name, value] : end->headers) relayed |= name == "X-Upstream" && value == "yes";
    EXPECT_TRUE(relayed);
  }
  EXPECT_EQ(served.load(), 3);
  EXPECT_EQ(peers.size(), 1u) << "one connection, kept alive and reused";
  client->close_idle();
}

// A streamed answer of 64 pieces of 64 KB from a worker: the exchange pauses after the first
// piece; nothing more is read while paused (the upstream's writer is held back by TCP), then
// resume() from another thread reads the rest.
TEST(AsyncClientTest, APausedExchangeReadsNothingUntilResumed) {
  const std::string piece(64 * 1024, 'x');
  constexpr int kPieces = 64;
  Running r = testing::start({}, HttpServer::on_workers([&](const HttpRequest&, const Peer&,
                                                            std::shared_ptr<Reply> reply) {
    StreamHead head;
    head.content_type = "text/event-stream";
    auto stream = reply->start_body(std::move(head));
    for (int i = 0; i < kPieces && stream && stream->write(piece); ++i) {
    }
    if (stream) stream->finish({});
  }));
  Loop loop;
  auto client = client_to(r.port);
  Seen seen;
  std::atomic<bool> paused{false};
  auto exchange = client->start(loop.executor(), "GET", "/stream", "", {},
                                recording(seen,
                                          [&](int n) {
                                            if (n != 1) return Flow::kMore;
                                            paused = true;
                                            return Flow::kPause;
                                          }),
                                5);
  while (!paused.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  size_t while_paused = 0;
  {
    std::lock_guard<std::mutex> lock(seen.mu);
    while_paused = seen.body.size();
    EXPECT_EQ(seen.pieces, 1);
  }
  EXPECT_LT(while_paused, piece.size() * kPieces);
  exchange->resume();
  Result<HttpResponse> end = wait_done(seen);
  ASSERT_TRUE(end.has_value()) << end.error().message;
  EXPECT_TRUE(end->body_complete);
  EXPECT_EQ(seen.body.size(), piece.size() * kPieces);
  client->close_idle();
}

TEST(AsyncClientTest, AnUpstreamThatIsDownIsAnErrorNamingIt) {
  int port = 0;
  {
    Running r = testing::start({}, HttpServer::blocking([](const HttpRequest&, const Peer&) {
      return HttpResponse{};
    }));
    port = r.port;
  }  // stopped: nothing listens there now
  Loop loop;
  auto client = client_to(port);
  Seen seen;
  client->start(loop.executor(), "GET", "/", "", {}, recording(seen), 5);
  Result<HttpResponse> end = wait_done(seen);
  ASSERT_FALSE(end.has_value());
  EXPECT_NE(end.error().message.find("cannot reach http://127.0.0.1:" + std::to_string(port) +
                                     " (connecting:"),
            std::string::npos)
      << end.error().message;
}

// A listener that accepts and never answers; then one whose answer stops halfway.
TEST(AsyncClientTest, ASilentUpstreamTimesOutAndAQuietBodyEndsIncomplete) {
  Running r = testing::start({}, HttpServer::on_workers([](const HttpRequest& q, const Peer&,
                                                           std::shared_ptr<Reply> reply) {
    if (q.path == "/silent") {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      reply->send(HttpResponse{});
      return;
    }
    auto stream = reply->start_body(StreamHead{});
    if (!stream) return;
    stream->write("first");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    stream->finish({});
  }));
  Loop loop;
  auto client = client_to(r.port, /*timeout_s=*/0.3);
  Seen silent;
  client->start(loop.executor(), "GET", "/silent", "", {}, recording(silent), 5);
  Result<HttpResponse> end = wait_done(silent);
  ASSERT_FALSE(end.has_value());
  EXPECT_NE(end.error().message.find("no answer within 0.3 s"), std::string::npos)
      << end.error().message;

  Seen quiet;
  client->start(loop.executor(), "GET", "/quiet", "", {}, recording(quiet), /*idle=*/0.3);
  end = wait_done(quiet);
  ASSERT_TRUE(end.has_value()) << end.error().message;
  EXPECT_EQ(quiet.body, "first");
  EXPECT_FALSE(end->body_complete);
  EXPECT_TRUE(end->close);
}

TEST(AsyncClientTest, AStoppedExchangeEndsIncompleteAndItsConnectionIsNotReused) {
  std::mutex peers_mu;
  std::set<std::string> peers;
  Running r = testing::start({}, HttpServer::on_workers([&](const HttpRequest&, const Peer& p,
                                                            std::shared_ptr<Reply> reply) {
    {
      std::lock_guard<std::mutex> lock(peers_mu);
      peers.insert(p.address);
    }
    auto stream = reply->start_body(StreamHead{});
    for (int i = 0; i < 100 && stream && stream->write(std::string(1000, 'y')); ++i) {
    }
    if (stream) stream->finish({});
  }));
  Loop loop;
  auto client = client_to(r.port);
  Seen stopped;
  client->start(loop.executor(), "GET", "/", "", {},
                recording(stopped, [](int) { return Flow::kStop; }), 5);
  Result<HttpResponse> end = wait_done(stopped);
  ASSERT_TRUE(end.has_value()) << end.error().message;
  EXPECT_FALSE(end->body_complete);
  EXPECT_TRUE(end->close);
  Seen next;
  client->start(loop.executor(), "GET", "/", "", {}, recording(next), 5);
  end = wait_done(next);
  ASSERT_TRUE(end.has_value()) << end.error().message;
  EXPECT_TRUE(end->body_complete);
  EXPECT_EQ(next.body.size(), 100000u);
  EXPECT_EQ(peers.size(), 2u) << "the stopped answer's connection was closed, not reused";
}

// A listener on 127.0.0.1 that answers each of `connections` connections, one after another,
// with the raw bytes `answer` once it has read the request, then closes it.
class RawAnswerer {
 public:
  RawAnswerer(std::string answer, int connections) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(::listen(fd_, 4), 0);
    socklen_t length = sizeof(address);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this, answer = std::move(answer), connections] {
      for (int i = 0; i < connections; ++i) {
        const int conn = ::accept(fd_, nullptr, nullptr);
        if (conn < 0) return;
        char buffer[4096];
        (void)::recv(conn, buffer, sizeof(buffer), 0);
        (void)::send(conn, answer.data(), answer.size(), MSG_NOSIGNAL);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        ::close(conn);
      }
    });
  }
  ~RawAnswerer() {
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

// An answer framed as no server may frame it (a coding before chunked) is refused.
TEST(AsyncClientTest, AnAnswerWithUntrustworthyFramingIsAnError) {
  RawAnswerer server(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 1);
  Loop loop;
  auto client = client_to(server.port());
  Seen seen;
  client->start(loop.executor(), "GET", "/", "", {}, recording(seen), 5);
  Result<HttpResponse> end = wait_done(seen);
  ASSERT_FALSE(end.has_value());
  EXPECT_NE(end.error().message.find("cannot trust"), std::string::npos) << end.error().message;
  EXPECT_TRUE(seen.body.empty());
}

// Interim answers before the real one (100 Continue, as an upstream sends to a request that
// says Expect: 100-continue, and 103 Early Hints) are read past, by this client and by the
// blocking one, whole and streamed.
TEST(AsyncClientTest, InterimAnswersAreReadPastByBothClients) {
  RawAnswerer server(
      "HTTP/1.1 100 Continue\r\n\r\n"
      "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
      3);
  Loop loop;
  Seen seen;
  client_to(server.port())->start(loop.executor(), "POST", "/", "x", {}, recording(seen), 5);
  Result<HttpResponse> end = wait_done(seen);
  ASSERT_TRUE(end.has_value()) << end.error().message;
  EXPECT_EQ(seen.status, 200);
  EXPECT_EQ(seen.body, "hello");

  ClientOptions options;
  options.timeout_s = 5;
  auto blocking = HttpClient::tcp("127.0.0.1", server.port(), options);
  ASSERT_TRUE(blocking.has_value()) << blocking.error().message;
  Result<HttpResponse> whole = (*blocking)->request("POST", "/", "x");
  ASSERT_TRUE(whole.has_value()) << whole.error().message;
  EXPECT_EQ(whole->status, 200);
  EXPECT_EQ(whole->body, "hello");
  std::string streamed;
  Result<HttpResponse> stream = (*blocking)->stream(
      "POST", "/", "x", {},
      [&](std::string_view piece) {
        streamed.append(piece);
        return true;
      },
      5);
  ASSERT_TRUE(stream.has_value()) << stream.error().message;
  EXPECT_EQ(stream->status, 200);
  EXPECT_EQ(streamed, "hello");
}

// https: the certificate trusted through ca_file answers on one kept-alive connection; an
// untrusted one fails the handshake with the reason, as the blocking client does.
TEST(AsyncClientTest, HttpsAnswersWhenTheCertificateIsTrustedAndNamesTheReasonWhenNot) {
  testing::TlsTestServer server("localhost", {{"/v1/answer", "{\"value\": 42}"}});
  ASSERT_TRUE(server.ok()) << server.problem();
  Loop loop;
  ClientOptions options;
  options.timeout_s = 10;
  options.ca_file = server.cert_file();
  auto trusting = AsyncHttpClient::for_scheme("https", "localhost", server.port(), options);
  ASSERT_TRUE(trusting.has_value()) << trusting.error().message;
  EXPECT_EQ((*trusting)->where(), "https://localhost:" + std::to_string(server.port()));
  for (int i = 0; i < 2; ++i) {
    Seen seen;
    (*trusting)->start(loop.executor(), "GET", "/v1/answer", "", {}, recording(seen), 10);
    Result<HttpResponse> end = wait_done(seen);
    ASSERT_TRUE(end.has_value()) << end.error().message;
    EXPECT_EQ(seen.status, 200);
    EXPECT_EQ(seen.body, "{\"value\": 42}");
    EXPECT_TRUE(end->body_complete);
  }
  (*trusting)->close_idle();

  options.ca_file.clear();
  auto untrusting = AsyncHttpClient::for_scheme("https", "localhost", server.port(), options);
  ASSERT_TRUE(untrusting.has_value()) << untrusting.error().message;
  Seen refused;
  (*untrusting)->start(loop.executor(), "GET", "/v1/answer", "", {}, recording(refused), 10);
  Result<HttpResponse> end = wait_done(refused);
  ASSERT_FALSE(end.has_value());
  EXPECT_NE(end.error().message.find("certificate verify failed"), std::string::npos)
      << end.error().message;
  EXPECT_FALSE(AsyncHttpClient::for_scheme("ftp", "localhost", 21, options).has_value());
}

// The queue under BodyStream::write_nowait: bytes are queued however full, the producer is told
// to stop, and its callback comes once the connection has written half of it, or the listener
// goes.
TEST(AsyncClientTest, AFullStreamQueueCallsBackWhenItHasRoomOrItsListenerGoes) {
  using detail::StreamQueue;
  StreamQueue queue(std::weak_ptr<detail::SessionHandle>(), 100, StreamQueue::WhenFull::kWait, 1);
  int called = 0;
  EXPECT_EQ(queue.push_nowait(std::string(80, 'a'), [&] { ++called; }),
            StreamQueue::Pushed::kQueued);
  EXPECT_EQ(queue.push_nowait(std::string(80, 'b'), [&] { ++called; }),
            StreamQueue::Pushed::kFull);
  std::string out;
  ASSERT_EQ(queue.take(&out), StreamQueue::Take::kBytes);
  EXPECT_EQ(out.size(), 160u) << "nothing was dropped";
  queue.written(100);
  EXPECT_EQ(called, 0) << "60 bytes still in flight: more than half of the bound";
  queue.written(60);
  EXPECT_EQ(called, 1);
  queue.written(0);
  EXPECT_EQ(called, 1) << "once";

  EXPECT_EQ(queue.push_nowait(std::string(150, 'c'), [&] { ++called; }),
            StreamQueue::Pushed::kFull);
  queue.mark_gone();
  EXPECT_EQ(called, 2) << "a listener that goes wakes the producer too";
  EXPECT_EQ(queue.push_nowait("d", [&] { ++called; }), StreamQueue::Pushed::kGone);
}

}  // namespace
}  // namespace zeus::http
