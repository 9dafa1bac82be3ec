#include "zeusd/http_message.h"

#include <gtest/gtest.h>

namespace zeus::zeusd {
namespace {

ParseResult parse(std::string_view data, HttpRequest* request, HttpLimits limits = {}) {
  return parse_http_request(data, limits, request);
}

TEST(HttpRequestParser, ParsesRequestWithBodyAndQuery) {
  const std::string wire =
      "POST /gpu/0/power_limit?x=1 HTTP/1.1\r\nHost: zeusd\r\nContent-Length: 25\r\n"
      "X-Empty:\r\n\r\n{\"power_limit_mw\":300000}";
  HttpRequest request;
  ParseResult result = parse(wire, &request);
  ASSERT_EQ(result.status, ParseStatus::kComplete) << result.error_message;
  EXPECT_EQ(result.consumed_bytes, wire.size());
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.path, "/gpu/0/power_limit");
  EXPECT_EQ(request.query, "x=1");
  EXPECT_EQ(request.body, "{\"power_limit_mw\":300000}");
  ASSERT_NE(request.header("host"), nullptr);
  EXPECT_EQ(*request.header("host"), "zeusd");
  ASSERT_NE(request.header("x-empty"), nullptr);
  EXPECT_EQ(*request.header("x-empty"), "");
  EXPECT_TRUE(request.keep_alive);
}

TEST(HttpRequestParser, IncompleteUntilTheWholeMessageArrives) {
  const std::string wire = "POST /a HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd";
  for (size_t n = 0; n < wire.size(); ++n) {
    HttpRequest request;
    EXPECT_EQ(parse(wire.substr(0, n), &request).status, ParseStatus::kIncomplete) << n;
  }
  HttpRequest request;
  EXPECT_EQ(parse(wire, &request).status, ParseStatus::kComplete);
}

TEST(HttpRequestParser, PipelinedRequestsAreConsumedOneAtATime) {
  const std::string first = "GET /discover HTTP/1.1\r\n\r\n";
  const std::string second = "GET /leases HTTP/1.1\nConnection: close\n\n";  // bare LF accepted
  HttpRequest request;
  ParseResult result = parse(first + second, &request);
  ASSERT_EQ(result.status, ParseStatus::kComplete);
  EXPECT_EQ(result.consumed_bytes, first.size());
  EXPECT_EQ(request.path, "/discover");
  result = parse(second, &request);
  ASSERT_EQ(result.status, ParseStatus::kComplete);
  EXPECT_EQ(request.path, "/leases");
  EXPECT_FALSE(request.keep_alive);
}

TEST(HttpRequestParser, Http10ClosesUnlessKeepAlive) {
  HttpRequest request;
  ASSERT_EQ(parse("GET / HTTP/1.0\r\n\r\n", &request).status, ParseStatus::kComplete);
  EXPECT_FALSE(request.keep_alive);
  ASSERT_EQ(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &request).status,
            ParseStatus::kComplete);
  EXPECT_TRUE(request.keep_alive);
}

struct BadRequest {
  std::string wire;
  int status;
};

TEST(HttpRequestParser, RejectsMalformedRequestsWithTheRightStatus) {
  const std::vector<BadRequest> cases = {
      {"GET\r\n\r\n", 400},
      {"GET /a b HTTP/1.1\r\n\r\n", 400},
      {"get /a HTTP/1.1\r\n\r\n", 400},
      {"GET a HTTP/1.1\r\n\r\n", 400},
      {"GET /a HTTP/2.0\r\n\r\n", 505},
      {"GET /a HTTP/1.1x\r\n\r\n", 400},
      {"GET /a\x01 HTTP/1.1\r\n\r\n", 400},
      {"GET /a HTTP/1.1\r\nNo colon\r\n\r\n", 400},
      {"GET /a HTTP/1.1\r\n: empty-name\r\n\r\n", 400},
      {"GET /a HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", 400},
      {"GET /a HTTP/1.1\r\nA: b\x7f\r\n\r\n", 400},
      {"POST /a HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
      {"POST /a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
      {"POST /a HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400},
      {"POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501},
  };
  for (const auto& c : cases) {
    HttpRequest request;
    ParseResult result = parse(c.wire, &request);
    EXPECT_EQ(result.status, ParseStatus::kError) << c.wire;
    EXPECT_EQ(result.error_status, c.status) << c.wire;
    EXPECT_FALSE(result.error_message.empty());
  }
}

TEST(HttpRequestParser, BoundsHeaderAndBodySizes) {
  HttpLimits limits;
  limits.max_header_bytes = 64;
  limits.max_body_bytes = 10;
  HttpRequest request;
  // A head that never ends is refused as soon as it passes the limit, not buffered forever.
  ParseResult result = parse("GET /" + std::string(100, 'a'), &request, limits);
  EXPECT_EQ(result.status, ParseStatus::kError);
  EXPECT_EQ(result.error_status, 431);
  // A body larger than the limit is refused from its Content-Length, before it arrives.
  result = parse("POST /a HTTP/1.1\r\nContent-Length: 11\r\n\r\n", &request, limits);
  EXPECT_EQ(result.status, ParseStatus::kError);
  EXPECT_EQ(result.error_status, 413);
  result = parse("POST /a HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789", &request, limits);
  EXPECT_EQ(result.status, ParseStatus::kComplete);
  // Too many headers.
  limits.max_header_bytes = 16384;
  limits.max_headers = 2;
  result = parse("GET /a HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", &request, limits);
  EXPECT_EQ(result.error_status, 431);
}

TEST(HttpResponse, SerialisesAndParsesBack) {
  HttpResponse response;
  response.status = 403;
  response.body = "{\"message\":\"no\"}";
  response.close = true;
  const std::string wire = serialize_http_response(response);
  EXPECT_EQ(wire.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << wire;
  ParsedResponse parsed;
  ParseResult result = parse_http_response(wire + "HTTP/1.1 200", {}, &parsed);
  ASSERT_EQ(result.status, ParseStatus::kComplete) << result.error_message;
  EXPECT_EQ(result.consumed_bytes, wire.size());
  EXPECT_EQ(parsed.status, 403);
  EXPECT_EQ(parsed.body, response.body);
  EXPECT_FALSE(parsed.keep_alive);
}

TEST(HttpResponse, RequestSerialisationRoundTrips) {
  const std::string wire = serialize_http_request("POST", "/gpu/1/sm_clocks", "{\"min_mhz\":600}");
  HttpRequest request;
  ASSERT_EQ(parse(wire, &request).status, ParseStatus::kComplete);
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.path, "/gpu/1/sm_clocks");
  EXPECT_EQ(request.body, "{\"min_mhz\":600}");
}

TEST(HttpResponse, RejectsResponsesWithoutLength) {
  ParsedResponse parsed;
  EXPECT_EQ(parse_http_response("HTTP/1.1 200 OK\r\n\r\n", {}, &parsed).status,
            ParseStatus::kError);
  EXPECT_EQ(parse_http_response("HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n", {}, &parsed).status,
            ParseStatus::kError);
  EXPECT_EQ(parse_http_response("HTTP/1.1 204 No Content\r\n\r\n", {}, &parsed).status,
            ParseStatus::kComplete);
}

}  // namespace
}  // namespace zeus::zeusd
