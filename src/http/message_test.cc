// parse_request (message.h): Beast's parser under the layer's limits, and the target decoding.
#include <gtest/gtest.h>

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
  ParsedRequest p = parse_request("POST /report HTTP/1.1\r\nContent-Length: 10\r\n\r\n{\"a\"", {});
  EXPECT_FALSE(p.complete);
  EXPECT_EQ(p.error_status, 0);
}

TEST(ParseRequestTest, ChunkedBodiesAreAssembled) {
  ParsedRequest p = parse_request(
      "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", {});
  ASSERT_TRUE(p.complete) << p.error;
  EXPECT_EQ(p.request.body, "abcde");
}

TEST(ParseRequestTest, LimitsGiveTheirStatus) {
  Limits limits;
  limits.max_header_bytes = 512;
  limits.max_headers = 10;
  limits.max_body_bytes = 16;
  EXPECT_EQ(parse_request("GET / HTTP/1.1\r\nX: " + std::string(600, 'a') + "\r\n\r\n", limits)
                .error_status,
            431);
  std::string many = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 11; ++i) many += "H" + std::to_string(i) + ": v\r\n";
  ParsedRequest p = parse_request(many + "\r\n", limits);
  EXPECT_EQ(p.error_status, 431);
  EXPECT_NE(p.error.find("11 header fields"), std::string::npos) << p.error;
  EXPECT_EQ(parse_request("POST / HTTP/1.1\r\nContent-Length: 17\r\n\r\n", limits).error_status, 413);
  EXPECT_EQ(parse_request("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n" +
                              std::string(32, 'x') + "\r\n0\r\n\r\n",
                          limits)
                .error_status,
            413);
}

TEST(ParseRequestTest, MalformedRequestsAre4xxOr5xxWithAMessage) {
  for (const std::string bad : {"GET\r\n\r\n", "GET / HTTP/2.0\r\n\r\n", "G@T / HTTP/1.1\r\n\r\n",
                                "GET http://a:b:c/ HTTP/1.1\r\n\r\n",
                                "POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
                                "GET /%zz HTTP/1.1\r\n\r\n"}) {
    ParsedRequest p = parse_request(bad, {});
    EXPECT_FALSE(p.complete) << bad;
    EXPECT_GE(p.error_status, 400) << bad;
    EXPECT_LE(p.error_status, 505) << bad;
    EXPECT_FALSE(p.error.empty()) << bad;
  }
}

TEST(ParseRequestTest, C11_NegativeHugeOrConflictingContentLengthIs400) {
  for (const std::string header :
       {"Content-Length: -5\r\n", "Content-Length: 99999999999999999999\r\n",
        "Content-Length: 3\r\nContent-Length: 5\r\n", "Content-Length: 3, 5\r\n",
        "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n"}) {
    // Decided from the head alone: the body has not arrived.
    ParsedRequest p = parse_request("POST / HTTP/1.1\r\n" + header + "\r\n", {});
    EXPECT_FALSE(p.complete) << header;
    EXPECT_EQ(p.error_status, 400) << header << " -> " << p.error;
    EXPECT_NE(p.error.find("malformed HTTP request"), std::string::npos) << p.error;
  }
  // A length too large for the limit but well-formed is 413, also from the head alone.
  EXPECT_EQ(parse_request("POST / HTTP/1.1\r\nContent-Length: 10000000000000000000\r\n\r\n", {})
                .error_status,
            413);
}

TEST(ParseRequestTest, HttpOneZeroClosesUnlessAskedToKeepAlive) {
  EXPECT_FALSE(parse_request("GET / HTTP/1.0\r\n\r\n", {}).request.keep_alive);
  EXPECT_TRUE(parse_request("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", {}).request.keep_alive);
  EXPECT_FALSE(parse_request("GET / HTTP/1.1\r\nConnection: close\r\n\r\n", {}).request.keep_alive);
}

TEST(HttpResponseTest, ErrorIsAMessageObject) {
  HttpResponse r = HttpResponse::error(404, "no \"such\" job");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, R"({"message":"no \"such\" job"})");
  EXPECT_EQ(reason(404), "Not Found");
}

}  // namespace
}  // namespace zeus::http
