// The framing rules of header_checks.h on real connections: what every server answers to a
// request whose length could be read two ways (request smuggling), bare line endings, Host and
// target forms; and the client refusing such answers. Repeated fields kept both ways, and the
// client's Host with its port.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <boost/beast/core/string.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "http/test_server.h"
#include "http/test_socket.h"

namespace zeus::http {
namespace {

using testing::RawSocket;
using testing::Running;
using testing::start;

struct Counting {
  std::atomic<int> calls{0};
  Handler handler() {
    return HttpServer::blocking([this](const HttpRequest& request, const Peer&) {
      calls.fetch_add(1);
      HttpResponse r;
      r.body = request.method + " " + request.path + " " + request.body;
      r.content_type = "text/plain";
      return r;
    });
  }
};

int count_answers(const std::string& bytes) {
  int n = 0;
  for (size_t at = bytes.find("HTTP/1.1 "); at != std::string::npos;
       at = bytes.find("HTTP/1.1 ", at + 1)) {
    ++n;
  }
  return n;
}

TEST(ServerFramingTest, ABodyOfUndeterminedLengthIsRefusedAndNeverRunAsARequest) {
  Counting counting;
  Running r = start({}, counting.handler());
  const std::string inner = "DELETE /jobs?job_id=victim-1 HTTP/1.1\r\nHost: x\r\n\r\n";
  for (const std::string& te : std::vector<std::string>{"gzip", "identity", "chunked, gzip", "gzip, chunked", "foo, chunked", "chunked;a=b",
        "gzip\r\nContent-Length: " + std::to_string(inner.size())}) {
    RawSocket s = RawSocket::tcp(r.port);
    ASSERT_TRUE(s.send("POST /jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + te + "\r\n\r\n" + inner));
    const std::string answer = s.read(3);  // until the server closes
    EXPECT_EQ(count_answers(answer), 1) << te << ": " << answer;
    EXPECT_TRUE(answer.rfind("HTTP/1.1 400", 0) == 0 || answer.rfind("HTTP/1.1 501", 0) == 0)
        << te << ": " << answer;
    EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
  }
  RawSocket old = RawSocket::tcp(r.port);
  ASSERT_TRUE(old.send("POST /jobs HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"));
  EXPECT_EQ(old.read(3).rfind("HTTP/1.1 400", 0), 0u);
  EXPECT_EQ(counting.calls.load(), 0);
  // Exactly chunked is served.
  RawSocket good = RawSocket::tcp(r.port);
  ASSERT_TRUE(good.send("POST /jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"));
  EXPECT_NE(good.read(3, "POST /jobs {}").find("POST /jobs {}"), std::string::npos);
  EXPECT_EQ(counting.calls.load(), 1);
}

TEST(ServerFramingTest, BareLineEndingsAre400NotAVersionError) {
  Running r = start({}, Counting().handler());
  for (const std::string bad : {"GET /ok HTTP/1.1\nHost: x\n\n", "GET /ok HTTP/1.1\rHost: x\r\r\n\r\n"}) {
    RawSocket s = RawSocket::tcp(r.port);
    ASSERT_TRUE(s.send(bad));
    const std::string answer = s.read(3);
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer;
    EXPECT_EQ(answer.find("HTTP/1.0 and HTTP/1.1"), std::string::npos) << answer;
  }
}

TEST(ServerFramingTest, HostAbsoluteFormAndOptionsAsterisk) {
  Counting counting;
  Running r = start({}, counting.handler());
  auto exchange = [&](const std::string& bytes) {
    RawSocket s = RawSocket::tcp(r.port);
    EXPECT_TRUE(s.send(bytes));
    return s.read(3, "\r\n\r\n");
  };
  EXPECT_EQ(exchange("GET /ok HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  EXPECT_EQ(exchange("GET /ok HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  EXPECT_EQ(counting.calls.load(), 0);
  RawSocket s = RawSocket::tcp(r.port);
  ASSERT_TRUE(s.send("GET http://127.0.0.1/ok?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  const std::string absolute = s.read(3, "GET /ok ");
  EXPECT_EQ(absolute.rfind("HTTP/1.1 200", 0), 0u) << absolute;
  EXPECT_NE(absolute.find("GET /ok "), std::string::npos) << absolute;
  const std::string options = exchange("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(options.rfind("HTTP/1.1 200", 0), 0u) << options;
  EXPECT_EQ(counting.calls.load(), 1);  // OPTIONS * is the layer's, not the handler's
}

// A server (a plain socket here) that answers every connection with `answer` and closes.
class CannedServer {
 public:
  explicit CannedServer(std::string answer) : answer_(std::move(answer)) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    socklen_t length = sizeof(a);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &length);
    port_ = ntohs(a.sin_port);
    listen(fd_, 4);
    thread_ = std::thread([this] {
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char request[4096];
      [[maybe_unused]] ssize_t n = recv(c, request, sizeof(request), 0);
      n = send(c, answer_.data(), answer_.size(), MSG_NOSIGNAL);
      shutdown(c, SHUT_WR);
      n = recv(c, request, sizeof(request), 0);
      close(c);
    });
  }
  ~CannedServer() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  int port() const { return port_; }

 private:
  std::string answer_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST(ClientFramingTest, TheClientRefusesAnswersOfUndeterminedLength) {
  for (const std::string head :
       {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\n{}",
        "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"}) {
    for (bool streamed : {false, true}) {
      CannedServer server(head + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
      auto client = HttpClient::tcp("127.0.0.1", server.port(), {.timeout_s = 3});
      ASSERT_TRUE(client.has_value());
      Result<HttpResponse> answer =
          streamed ? (*client)->stream("GET", "/", "", {}, [](std::string_view) { return true; }, 1)
                   : (*client)->request("GET", "/");
      ASSERT_FALSE(answer.has_value()) << head << " streamed=" << streamed;
      EXPECT_NE(answer.error().message.find("cannot trust"), std::string::npos)
          << answer.error().message << " head=" << head << " streamed=" << streamed;
    }
  }
  CannedServer good("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n");
  auto client = HttpClient::tcp("127.0.0.1", good.port(), {.timeout_s = 3});
  Result<HttpResponse> answer = (*client)->request("GET", "/");
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->body, "{}");
}

// A streamed answer framed by Content-Length arrives whole (the stream has no body limit; with
// Boost 1.74 an unset limit refused every Content-Length).
TEST(ClientFramingTest, StreamedAnswerWithContentLength) {
  CannedServer server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
  auto client = HttpClient::tcp("127.0.0.1", server.port(), {.timeout_s = 3});
  ASSERT_TRUE(client.has_value());
  std::string body;
  Result<HttpResponse> answer = (*client)->stream("GET", "/", "", {}, [&](std::string_view piece) {
    body += piece;
    return true;
  }, 1);
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(body, "{}");
}

}  // namespace
}  // namespace zeus::http

namespace zeus::http {
namespace {

size_t count_named(const Headers& headers, std::string_view name) {
  size_t n = 0;
  for (const auto& [k, v] : headers) n += boost::beast::iequals(k, name) ? 1 : 0;
  return n;
}

// Repeated fields (Set-Cookie, a request's X-Multi) are kept on every path: a whole answer, a
// streamed answer's head and a client's request; a framing field in a header list is ignored;
// the client's Host names the port.
TEST(HttpFieldsTest, RepeatedFieldsSurviveAndHostNamesThePort) {
  Running r = start({}, HttpServer::on_workers([](const HttpRequest& q, const Peer&,
                                                  std::shared_ptr<Reply> reply) {
    const std::string seen = std::to_string(count_named(q.headers, "x-multi")) + " " +
                             (q.header("host") ? *q.header("host") : std::string("none"));
    const Headers fields = {{"Set-Cookie", "a=1"}, {"Set-Cookie", "b=2"},
                            {"Content-Length", "999"}, {"Server", "upstream"}};
    if (q.path == "/stream") {
      StreamHead head;
      head.content_type = "text/plain";
      head.headers = fields;
      auto stream = reply->start_body(std::move(head));
      if (stream) {
        stream->write(seen);
        stream->finish({});
      }
      return;
    }
    reply->send(HttpResponse{200, seen, "text/plain", fields, false});
  }));
  const Headers multi = {{"X-Multi", "1"}, {"X-Multi", "2"}, {"Content-Length", "999"}};
  Result<HttpResponse> whole = r.client->request("GET", "/whole", "", multi);
  ASSERT_TRUE(whole.has_value()) << whole.error().message;
  EXPECT_EQ(whole->body, "2 127.0.0.1:" + std::to_string(r.port));
  EXPECT_EQ(count_named(whole->headers, "set-cookie"), 2u);
  EXPECT_EQ(count_named(whole->headers, "server"), 1u);
  std::string streamed;
  Result<HttpResponse> head = r.client->stream(
      "GET", "/stream", "", multi,
      [&](std::string_view p) {
        streamed.append(p);
        return true;
      },
      5);
  ASSERT_TRUE(head.has_value()) << head.error().message;
  EXPECT_EQ(streamed, "2 127.0.0.1:" + std::to_string(r.port));
  EXPECT_EQ(count_named(head->headers, "set-cookie"), 2u);
  EXPECT_EQ(count_named(head->headers, "server"), 1u);
}

}  // namespace
}  // namespace zeus::http
