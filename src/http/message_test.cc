// parse_request (message.h): Beast's parser under the layer's limits, and the target decoding;
// to_beast (beast_mapping.h): an answer's fields and framing.
#include <gtest/gtest.h>

#include <iterator>
#include <string>

#include "http/beast_mapping.h"
#include "http/message.h"

namespace zeus::http {
namespace {

TEST(ParseRequestTest, AWholeRequestWithDecodedPathAndQuery) {
  const std::string bytes =
      "GET /jobs/a%20b?job_id=x%2Fy&flag HTTP/1.1\r\nHost: h\r\nX-Thing: 1\r\n\r\nGET / HTTP/1.1\r\n";
  ParsedRequest p = parse_request(bytes, {});
  ASSERT_TRUE(p.complete) << p.error;
  EXPECT_EQ(p.request.method, "GET");
  EXPECT_EQ(p.request.path, "/jobs/a b");
  ASSERT_EQ(p.request.query.size(), 2u);
  EXPECT_EQ(*p.request.query_value("job_id"), "x/y");
  EXPECT_EQ(*p.request.query_value("flag"), "");
  EXPECT_EQ(*p.request.header("x-thing"), "1");
  EXPECT_TRUE(p.request.keep_alive);
  EXPECT_EQ(bytes.substr(p.used_bytes), "GET / HTTP/1.1\r\n");  // the pipelined next one
}

TEST(ParseRequestTest, IncompleteIsNeitherDoneNorAnError) {
  ParsedRequest p = parse_request("POST /report HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n{\"a\"", {});
  EXPECT_FALSE(p.complete);
  EXPECT_EQ(p.error_status, 0);
}

TEST(ParseRequestTest, ChunkedBodiesAreAssembled) {
  ParsedRequest p = parse_request(
      "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", {});
  ASSERT_TRUE(p.complete) << p.error;
  EXPECT_EQ(p.request.body, "abcde");
}

TEST(ParseRequestTest, LimitsGiveTheirStatus) {
  Limits limits;
  limits.max_header_bytes = 512;
  limits.max_headers = 10;
  limits.max_body_bytes = 16;
  EXPECT_EQ(parse_request("GET / HTTP/1.1\r\nHost: h\r\nX: " + std::string(600, 'a') + "\r\n\r\n", limits)
                .error_status,
            431);
  std::string many = "GET / HTTP/1.1\r\nHost: h\r\n";
  for (int i = 0; i < 11; ++i) many += "H" + std::to_string(i) + ": v\r\n";
  ParsedRequest p = parse_request(many + "\r\n", limits);
  EXPECT_EQ(p.error_status, 431);
  EXPECT_NE(p.error.find("12 header fields"), std::string::npos) << p.error;  // Host too
  EXPECT_EQ(parse_request("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 17\r\n\r\n", limits).error_status, 413);
  EXPECT_EQ(parse_request("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n" +
                              std::string(32, 'x') + "\r\n0\r\n\r\n",
                          limits)
                .error_status,
            413);
}

TEST(ParseRequestTest, MalformedRequestsAre4xxOr5xxWithAMessage) {
  for (const std::string bad : {"GET\r\n\r\n", "GET / HTTP/2.0\r\n\r\n", "G@T / HTTP/1.1\r\nHost: h\r\n\r\n",
                                "GET mailto:a@b HTTP/1.1\r\nHost: h\r\n\r\n",
                                "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: x\r\n\r\n",
                                "GET /%zz HTTP/1.1\r\nHost: h\r\n\r\n"}) {
    ParsedRequest p = parse_request(bad, {});
    EXPECT_FALSE(p.complete) << bad;
    EXPECT_GE(p.error_status, 400) << bad;
    EXPECT_LE(p.error_status, 505) << bad;
    EXPECT_FALSE(p.error.empty()) << bad;
  }
}

TEST(ParseRequestTest, NegativeHugeOrConflictingContentLengthIs400) {
  for (const std::string header :
       {"Content-Length: -5\r\n", "Content-Length: 99999999999999999999\r\n",
        "Content-Length: 3\r\nContent-Length: 5\r\n", "Content-Length: 3, 5\r\n",
        "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n"}) {
    // Decided from the head alone: the body has not arrived.
    ParsedRequest p = parse_request("POST / HTTP/1.1\r\nHost: h\r\n" + header + "\r\n", {});
    EXPECT_FALSE(p.complete) << header;
    EXPECT_EQ(p.error_status, 400) << header << " -> " << p.error;
    EXPECT_NE(p.error.find("malformed HTTP request"), std::string::npos) << p.error;
  }
  // A length too large for the limit but well-formed is 413, also from the head alone.
  EXPECT_EQ(parse_request("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10000000000000000000\r\n\r\n", {})
                .error_status,
            413);
}

TEST(ParseRequestTest, HttpOneZeroClosesUnlessAskedToKeepAlive) {
  EXPECT_FALSE(parse_request("GET / HTTP/1.0\r\n\r\n", {}).request.keep_alive);
  EXPECT_TRUE(parse_request("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", {}).request.keep_alive);
  EXPECT_FALSE(parse_request("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", {}).request.keep_alive);
}

// Request smuggling: a request whose length is not determined by exactly one Content-Length or
// exactly `Transfer-Encoding: chunked` is refused from its head, never read as a bodiless request
// with its body as the next request.
TEST(ParseRequestTest, SmuggledBodiesAreNeverRequests) {
  const std::string inner = "DELETE /jobs?job_id=victim HTTP/1.1\r\nHost: h\r\n\r\n";
  for (const std::string te : {"gzip", "identity", "chunked, gzip", "gzip, chunked", "foo, chunked",
                               "chunked;ext=1"}) {
    ParsedRequest p =
        parse_request("POST /jobs HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: " + te + "\r\n\r\n" + inner, {});
    EXPECT_FALSE(p.complete) << te;
    EXPECT_TRUE(p.error_status == 400 || p.error_status == 501) << te << " -> " << p.error_status;
  }
  ParsedRequest with_length = parse_request(
      "POST /jobs HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\n{}", {});
  EXPECT_EQ(with_length.error_status, 400);
  ParsedRequest old = parse_request(
      "POST /jobs HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", {});
  EXPECT_EQ(old.error_status, 400);
  // Folded onto a continuation line, the value is still exactly chunked (RFC 9112 §5.2).
  ParsedRequest folded = parse_request(
      "POST /jobs HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: \r\n chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", {});
  ASSERT_TRUE(folded.complete) << folded.error;
  EXPECT_EQ(folded.request.body, "{}");
}

// Lines that end in a bare LF or CR are malformed (400), not a version problem.
TEST(ParseRequestTest, BareLineEndingsAre400) {
  for (const std::string bad : {"GET /healthz HTTP/1.1\nHost: x\n\n", "GET /healthz HTTP/1.1\rHost: x\r\r\n\r\n",
                                "GET /healthz HTTP/1.1\r\nHost: x\n\n"}) {
    ParsedRequest p = parse_request(bad, {});
    EXPECT_EQ(p.error_status, 400) << bad << " -> " << p.error;
  }
  EXPECT_EQ(parse_request("GET / HTTP/1.2\r\nHost: x\r\n\r\n", {}).error_status, 505);
}

// Host missing or doubled on HTTP/1.1 is 400; absolute-form targets are served as
// their path; "*" is for OPTIONS only; CONNECT is not served.
TEST(ParseRequestTest, HostAndTargetForms) {
  EXPECT_EQ(parse_request("GET /healthz HTTP/1.1\r\n\r\n", {}).error_status, 400);
  EXPECT_EQ(parse_request("GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", {}).error_status, 400);
  ParsedRequest absolute =
      parse_request("GET http://127.0.0.1:8000/jobs/a%20b?job_id=x HTTP/1.1\r\nHost: y\r\n\r\n", {});
  ASSERT_TRUE(absolute.complete) << absolute.error;
  EXPECT_EQ(absolute.request.path, "/jobs/a b");
  EXPECT_EQ(*absolute.request.query_value("job_id"), "x");
  ParsedRequest root = parse_request("GET http://h HTTP/1.1\r\nHost: h\r\n\r\n", {});
  ASSERT_TRUE(root.complete) << root.error;
  EXPECT_EQ(root.request.path, "/");
  EXPECT_EQ(parse_request("GET ftp://h/x HTTP/1.1\r\nHost: h\r\n\r\n", {}).error_status, 400);
  ParsedRequest options = parse_request("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", {});
  ASSERT_TRUE(options.complete) << options.error;
  EXPECT_EQ(options.request.path, "*");
  EXPECT_EQ(parse_request("GET * HTTP/1.1\r\nHost: h\r\n\r\n", {}).error_status, 400);
  EXPECT_EQ(parse_request("CONNECT h:22 HTTP/1.1\r\nHost: h\r\n\r\n", {}).error_status, 501);
}

TEST(HttpResponseTest, ErrorIsAMessageObject) {
  HttpResponse r = HttpResponse::error(404, "no \"such\" job");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, R"({"message":"no \"such\" job"})");
  EXPECT_EQ(reason(404), "Not Found");
}

size_t fields_named(const detail::BeastResponse& r, boost::beast::http::field name) {
  return static_cast<size_t>(std::distance(r.equal_range(name).first, r.equal_range(name).second));
}

// An answer's header list: repeated fields kept, framing fields ignored (the layer frames), and
// Server/Content-Type replaced rather than doubled; 204 and 304 carry no body or Content-Length.
TEST(HttpResponseTest, ToBeastKeepsRepeatedFieldsAndFramesItself) {
  using boost::beast::http::field;
  HttpResponse r{200, "hello", "text/plain",
                 {{"Set-Cookie", "a=1"}, {"set-cookie", "b=2"}, {"Content-Length", "99"},
                  {"Transfer-Encoding", "chunked"}, {"Server", "upstream"}},
                 false};
  detail::BeastResponse out = detail::to_beast(HttpResponse(r), 11, true, false);
  EXPECT_EQ(fields_named(out, field::set_cookie), 2u);
  EXPECT_EQ(fields_named(out, field::server), 1u);
  EXPECT_EQ(out[field::server], "upstream");
  EXPECT_EQ(out[field::content_length], "5");
  EXPECT_EQ(fields_named(out, field::transfer_encoding), 0u);
  EXPECT_EQ(out.body(), "hello");
  for (int status : {204, 304}) {
    r.status = status;
    detail::BeastResponse empty = detail::to_beast(HttpResponse(r), 11, true, false);
    EXPECT_EQ(fields_named(empty, field::content_length), 0u) << status;
    EXPECT_EQ(empty.body(), "") << status;
  }
}

}  // namespace
}  // namespace zeus::http
