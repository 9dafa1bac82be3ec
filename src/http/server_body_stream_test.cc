// Streamed bodies of raw bytes (Reply::start_body): chunked framing with trailers, the status and
// headers of the handler's choice, keep-alive after the body, HTTP/1.0 and HEAD, the writer's
// bounded buffer against a client that does not read, a client that hangs up; and the client's
// stream() handing the answer's head over before its body.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "http/client.h"
#include "http/reply.h"
#include "http/server.h"
#include "http/test_server.h"
#include "http/test_socket.h"

namespace zeus::http {
namespace {

using testing::RawSocket;
using testing::Running;
using testing::start;
using namespace std::chrono_literals;

StreamHead head_with_trailers() {
  StreamHead head;
  head.status = 201;
  head.content_type = "text/plain";
  head.headers = {{"X-Upstream", "yes"}, {"Content-Length", "999"}};  // framing is left out
  head.trailer_names = {"X-Energy"};
  return head;
}

// Writes "ab", "", "cde" on a thread of its own (as a proxy's worker does), then the trailer.
Handler three_pieces() {
  return [](const HttpRequest&, const Peer&, std::shared_ptr<Reply> reply) {
    std::thread([reply] {
      std::shared_ptr<BodyStream> body = reply->start_body(head_with_trailers());
      body->write("ab");
      body->write("");
      std::this_thread::sleep_for(10ms);
      body->write("cde");
      body->finish({{"X-Energy", "1.5"}, {"Bad Name", "x"}, {"X-Bad", "a\r\nb"}});
      EXPECT_FALSE(body->write("late"));
    }).detach();
  };
}

TEST(ChunkedFramingTest, ChunksAndTheLastChunkWithItsTrailers) {
  EXPECT_EQ(detail::chunk_of("hello"), "5\r\nhello\r\n");
  EXPECT_EQ(detail::chunk_of(std::string(26, 'x')).substr(0, 4), "1a\r\n");
  EXPECT_EQ(detail::last_chunk({}), "0\r\n\r\n");
  EXPECT_EQ(detail::last_chunk({{"X-A", "1"}, {"bad name", "2"}, {"X-B", "3\n"}, {"X-C", "c d"}}),
            "0\r\nX-A: 1\r\nX-C: c d\r\n\r\n");
}

TEST(BodyStreamTest, ChunkedWithHeadersAndTrailersThenTheConnectionServesAgain) {
  Running r = start({}, three_pieces());
  RawSocket s = RawSocket::tcp(r.port);
  ASSERT_TRUE(s.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"));
  const std::string first = s.read(3, "\r\n0\r\nX-Energy: 1.5\r\n\r\n");
  EXPECT_EQ(first.rfind("HTTP/1.1 201", 0), 0u) << first;
  EXPECT_NE(first.find("X-Upstream: yes\r\n"), std::string::npos) << first;
  EXPECT_NE(first.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << first;
  EXPECT_NE(first.find("Trailer: X-Energy\r\n"), std::string::npos) << first;
  EXPECT_EQ(first.find("Content-Length"), std::string::npos) << first;
  const std::string body = first.substr(first.find("\r\n\r\n") + 4);
  EXPECT_EQ(body, "2\r\nab\r\n3\r\ncde\r\n0\r\nX-Energy: 1.5\r\n\r\n");
  // Kept alive: the next request on the same connection is answered.
  ASSERT_TRUE(s.send("GET /b HTTP/1.1\r\nHost: x\r\n\r\n"));
  const std::string second = s.read(3, "\r\n0\r\nX-Energy: 1.5\r\n\r\n");
  EXPECT_EQ(second.rfind("HTTP/1.1 201", 0), 0u) << second;
}

TEST(BodyStreamTest, Http10GetsTheBytesAsTheyAreEndedByClosing) {
  Running r = start({}, three_pieces());
  RawSocket s = RawSocket::tcp(r.port);
  ASSERT_TRUE(s.send("GET /a HTTP/1.0\r\n\r\n"));
  const std::string answer = s.read(3);  // until the server closes
  EXPECT_EQ(answer.rfind("HTTP/1.0 201", 0), 0u) << answer;
  EXPECT_EQ(answer.find("chunked"), std::string::npos) << answer;
  EXPECT_EQ(answer.substr(answer.find("\r\n\r\n") + 4), "abcde");
}

TEST(BodyStreamTest, HeadGetsTheHeadOnly) {
  Running r = start({}, three_pieces());
  RawSocket s = RawSocket::tcp(r.port);
  ASSERT_TRUE(s.send("HEAD /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n"));
  const std::string both = s.read(3, "\r\n0\r\nX-Energy: 1.5\r\n\r\n");
  const size_t second = both.find("HTTP/1.1 201", 1);
  ASSERT_NE(second, std::string::npos) << both;
  EXPECT_EQ(both.substr(0, second).find("ab"), std::string::npos) << both;
}

TEST(BodyStreamTest, TheClientGetsTheHeadBeforeTheBodyAndTheBodyUnframed) {
  Running r = start({}, three_pieces());
  HttpResponse head_seen;
  std::string body;
  bool head_first = false;
  Result<HttpResponse> answer = r.client->stream(
      "GET", "/a", "", {},
      [&](const HttpResponse& head) {
        head_seen = head;
        head_first = body.empty();
        return true;
      },
      [&](std::string_view piece) {
        body += piece;
        return true;
      },
      2);
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_TRUE(head_first);
  EXPECT_EQ(head_seen.status, 201);
  EXPECT_EQ(head_seen.content_type, "text/plain");
  bool upstream_header = false;
  for (const auto& [name, value] : head_seen.headers) {
    upstream_header = upstream_header || (name == "X-Upstream" && value == "yes");
  }
  EXPECT_TRUE(upstream_header);
  EXPECT_EQ(answer->status, 201);
  EXPECT_EQ(body, "abcde");
  // on_head may refuse the body.
  int pieces = 0;
  Result<HttpResponse> refused = r.client->stream(
      "GET", "/a", "", {}, [](const HttpResponse&) { return false; },
      [&](std::string_view) { return ++pieces > 0; }, 2);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(pieces, 0);
}

// The client says whether a streamed body was read to its end, and keeps its connection for
// the next request only then: streams read whole follow each other on one kept-alive connection;
// one stopped early, or cut by the server (abort), is never reused.
TEST(BodyStreamTest, AStreamReadToItsEndLeavesItsConnectionForTheNextOneACutOneDoesNot) {
  std::mutex mutex;
  std::vector<std::string> peers;
  std::atomic<int> pieces_read{0};
  Running r = start({}, [&](const HttpRequest& request, const Peer& peer,
                            std::shared_ptr<Reply> reply) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      peers.push_back(peer.address);
    }
    const bool cut = request.path == "/cut";
    std::thread([reply, cut, &pieces_read] {
      const int before = pieces_read.load();
      std::shared_ptr<BodyStream> body = reply->start_body(StreamHead{});
      body->write("ab");
      // "cd" once the client has read "ab" (a read takes every byte already received).
      const auto deadline = std::chrono::steady_clock::now() + 2s;
      while (pieces_read.load() == before && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(1ms);
      }
      body->write("cd");
      if (cut) {
        body->abort();
      } else {
        body->finish({});
      }
    }).detach();
  });
  const auto read = [&](const char* path, bool to_the_end, bool* complete) {
    std::string body;
    Result<HttpResponse> answer = r.client->stream(
        "POST", path, "{}", {},
        [&](std::string_view piece) {
          body += piece;
          pieces_read.fetch_add(1);
          return to_the_end;
        },
        2);
    *complete = answer && answer->body_complete;
    return body;
  };
  bool complete = false;
  for (int i = 0; i < 5; ++i) {  // back to back, each whole
    EXPECT_EQ(read("/s", true, &complete), "abcd");
    EXPECT_TRUE(complete);
  }
  EXPECT_EQ(read("/s", false, &complete), "ab");  // stopped early
  EXPECT_FALSE(complete);
  EXPECT_EQ(read("/s", true, &complete), "abcd");
  EXPECT_TRUE(complete);
  EXPECT_EQ(read("/cut", true, &complete), "abcd");  // cut by the server
  EXPECT_FALSE(complete);
  EXPECT_EQ(read("/s", true, &complete), "abcd");
  EXPECT_TRUE(complete);
  std::lock_guard<std::mutex> lock(mutex);
  ASSERT_EQ(peers.size(), 9u);
  for (size_t i = 1; i < 6; ++i) EXPECT_EQ(peers[i], peers[0]) << i;  // one connection
  EXPECT_NE(peers[6], peers[5]);  // after the stream stopped early
  EXPECT_EQ(peers[7], peers[6]);
  EXPECT_NE(peers[8], peers[7]);  // after the cut one
}

// abort(): the body ends without its last chunk and the connection closes, so the client sees
// the answer cut (an error), never a short body that looks whole.
TEST(BodyStreamTest, AnAbortedBodyIsCutForTheClient) {
  Running r = start({}, [&](const HttpRequest&, const Peer&, std::shared_ptr<Reply> reply) {
    std::thread([reply] {
      std::shared_ptr<BodyStream> body = reply->start_body(StreamHead{});
      body->write("ab");
      body->abort();
      EXPECT_FALSE(body->finish({}));  // only the first end counts
      EXPECT_FALSE(body->open());
    }).detach();
  });
  std::string body;
  Result<HttpResponse> answer = r.client->stream(
      "POST", "/s", "{}", {},
      [&](std::string_view piece) {
        body += piece;
        return true;
      },
      2);
  EXPECT_EQ(body, "ab");
  EXPECT_TRUE(!answer || !answer->body_complete);
}

TEST(BodyStreamTest, AWriterAheadOfAClientThatDoesNotReadWaitsThenTheClientIsDropped) {
  ServerOptions options;
  options.max_stream_buffer_bytes = 64 * 1024;
  options.write_timeout_s = 0.5;
  std::atomic<int> accepted{0};
  std::atomic<bool> refused{false};
  Running r = start(options, [&](const HttpRequest&, const Peer&, std::shared_ptr<Reply> reply) {
    std::thread([&, reply] {
      std::shared_ptr<BodyStream> body = reply->start_body(StreamHead{});
      const std::string piece(16 * 1024, 'x');
      for (int i = 0; i < 10000; ++i) {
        if (!body->write(piece)) {
          refused = true;
          return;
        }
        ++accepted;
      }
    }).detach();
  });
  RawSocket s = RawSocket::tcp(r.port, 4096);
  ASSERT_TRUE(s.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  for (int i = 0; i < 500 && !refused; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(refused.load());
  // Bounded: what was accepted fits the socket buffers and the 64 KiB bound, not 160 MB.
  EXPECT_LT(accepted.load(), 1000);
  EXPECT_TRUE(s.closed_by_peer(3));
}

TEST(BodyStreamTest, AWriterLearnsThatTheClientHungUp) {
  std::atomic<bool> refused{false};
  std::atomic<bool> started{false};
  Running r = start({}, [&](const HttpRequest&, const Peer&, std::shared_ptr<Reply> reply) {
    std::thread([&, reply] {
      std::shared_ptr<BodyStream> body = reply->start_body(StreamHead{});
      started = true;
      for (int i = 0; i < 500; ++i) {
        if (!body->write("tick\n")) {
          refused = true;
          return;
        }
        std::this_thread::sleep_for(10ms);
      }
      body->finish();
    }).detach();
  });
  {
    RawSocket s = RawSocket::tcp(r.port);
    ASSERT_TRUE(s.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_NE(s.read(3, "tick").find("tick"), std::string::npos);
  }
  for (int i = 0; i < 300 && !refused; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(started.load());
  EXPECT_TRUE(refused.load());
}

}  // namespace
}  // namespace zeus::http
