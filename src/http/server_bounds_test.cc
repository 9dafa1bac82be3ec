// What no client can take from the others: a request the server answers inline
// is answered while every worker is held, whichever way the handler answers; request bodies
// being received are bounded in total, not only each.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
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

// Handlers that answer through their Reply on the workers (on_workers: the Colosseum, the
// proxy) honour inline_request as blocking() does: an inline request is answered while every
// worker is held.
TEST(HttpServerTest, InlineRequestsOfWorkerHandlersAreAnsweredWhileEveryWorkerIsBusy) {
  ServerOptions options;
  options.workers = 2;
  options.inline_request = [](const HttpRequest& q) { return q.path != "/slow"; };
  std::atomic<bool> release{false};
  std::atomic<int> held{0};
  Running r = start(options, HttpServer::on_workers([&](const HttpRequest& q, const Peer&,
                                                        std::shared_ptr<Reply> reply) {
    if (q.path == "/slow") {
      ++held;
      while (!release.load()) std::this_thread::sleep_for(1ms);
    }
    reply->send(HttpResponse{200, "done", "text/plain", {}, false});
  }));
  std::vector<std::thread> slow;
  for (int i = 0; i < 4; ++i) {  // more than the workers: every worker held, two queued
    slow.emplace_back([&] {
      auto client = std::move(*HttpClient::tcp("127.0.0.1", r.port, {}));
      (void)client->request("GET", "/slow");
    });
  }
  for (int i = 0; i < 2000 && held.load() < 2; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(held.load(), 2);
  const auto t0 = std::chrono::steady_clock::now();
  Result<HttpResponse> health = r.client->request("GET", "/health");
  ASSERT_TRUE(health.has_value()) << health.error().message;
  EXPECT_EQ(health->status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  release = true;
  for (std::thread& t : slow) t.join();
}

// Bodies held open by their clients are bounded in total, not only each (20 held bodies of
// 15 MiB once took 300 MB): past the budget a new body is refused 503 before any of it is
// read; a held body that ends gives its share back.
TEST(HttpServerTest, RequestBodiesBeingReceivedAreBoundedInTotal) {
  ServerOptions options;
  options.limits.max_body_bytes = 1 << 20;
  options.limits.max_total_body_bytes = 2 << 20;
  Running r = start(options, HttpServer::blocking([](const HttpRequest& q, const Peer&) {
    return HttpResponse{200, std::to_string(q.body.size()), "text/plain", {}, false};
  }));
  auto head = [](size_t length) {
    return "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(length) +
           "\r\n\r\n";
  };
  RawSocket first = RawSocket::tcp(r.port), second = RawSocket::tcp(r.port);
  ASSERT_TRUE(first.send(head(1 << 20) + std::string(1000, 'a')));  // held: 1 MiB reserved
  ASSERT_TRUE(second.send(head(1 << 20) + std::string(1000, 'b')));  // held: 2 MiB reserved
  std::this_thread::sleep_for(200ms);
  RawSocket third = RawSocket::tcp(r.port);
  ASSERT_TRUE(third.send(head(1000)));
  const std::string refused = third.read(3, "\r\n\r\n");
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  // The first body ends: its share is free again, and a small body is taken.
  ASSERT_TRUE(first.send(std::string((1 << 20) - 1000, 'a')));
  const std::string answered = first.read(5, "\r\n\r\n");
  EXPECT_EQ(answered.rfind("HTTP/1.1 200", 0), 0u) << answered.substr(0, 80);
  Result<HttpResponse> small = r.client->request("POST", "/upload", std::string(1000, 'c'));
  ASSERT_TRUE(small.has_value()) << small.error().message;
  EXPECT_EQ(small->status, 200);
  EXPECT_EQ(small->body, "1000");
}

}  // namespace
}  // namespace zeus::http
