// header_checks.h: the framing decision of RFC 9112 §6 (against request smuggling) and the
// request's Host, for requests as servers read them and answers as the client reads them.
#include "http/header_checks.h"

#include <gtest/gtest.h>

#include "http/message.h"

namespace zeus::http::detail {
namespace {

namespace bhttp = boost::beast::http;

bhttp::request_header<> request(std::vector<std::pair<std::string, std::string>> fields,
                                unsigned version = 11) {
  bhttp::request_header<> h;
  h.method(bhttp::verb::post);
  h.target("/jobs");
  h.version(version);
  for (auto& [name, value] : fields) h.insert(name, value);
  return h;
}

int status_of(const std::optional<HeaderProblem>& p) { return p ? p->status : 0; }

TEST(HeaderChecksTest, OnlyExactlyChunkedIsAcceptedAsATransferEncoding) {
  for (const char* ok : {"chunked", "Chunked", "CHUNKED", " chunked ", "chunked,", ", chunked"}) {
    EXPECT_EQ(status_of(check_request_header(request({{"Host", "x"}, {"Transfer-Encoding", ok}}))), 0)
        << ok;
  }
  // Not ending in chunked: the length cannot be determined: 400, never a bodiless request.
  for (const char* bad : {"gzip", "identity", "chunked, gzip", "deflate", "foo", "x-custom"}) {
    auto p = check_request_header(request({{"Host", "x"}, {"Transfer-Encoding", bad}}));
    EXPECT_EQ(status_of(p), 400) << bad;
    if (p) {
      EXPECT_NE(p->why.find("does not end in chunked"), std::string::npos) << p->why;
    }
  }
  // A registered coding before chunked: one we could implement: 501.
  for (const char* later : {"gzip, chunked", "deflate,chunked", "compress, gzip, chunked",
                            "x-gzip, chunked"}) {
    EXPECT_EQ(status_of(check_request_header(request({{"Host", "x"}, {"Transfer-Encoding", later}}))),
              501)
        << later;
  }
  // Anything else that ends in chunked: malformed.
  for (const char* bad : {"foo, chunked", "chunked;x=1", "chunked, chunked", "\"chunked\"",
                          "chunk ed", "chunked\x01", ",", "gzip;q=\"a,b\", chunked"}) {
    EXPECT_EQ(status_of(check_request_header(request({{"Host", "x"}, {"Transfer-Encoding", bad}}))),
              400)
        << bad;
  }
}

TEST(HeaderChecksTest, TransferEncodingFieldsCombineAsOneList) {
  EXPECT_EQ(status_of(check_request_header(request(
                {{"Host", "x"}, {"Transfer-Encoding", "gzip"}, {"Transfer-Encoding", "chunked"}}))),
            501);
  EXPECT_EQ(status_of(check_request_header(request(
                {{"Host", "x"}, {"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "gzip"}}))),
            400);
}

// Found by fuzz/http_framing_fuzz: an empty Transfer-Encoding field beside `chunked` (parsers
// disagree on what it means) is malformed, not chunked.
TEST(HeaderChecksTest, AnEmptyTransferEncodingFieldIs400) {
  for (const char* empty : {"", " ", ",", " , "}) {
    EXPECT_EQ(status_of(check_request_header(request(
                  {{"Host", "x"}, {"Transfer-Encoding", empty}, {"Transfer-Encoding", "chunked"}}))),
              400)
        << "'" << empty << "'";
    EXPECT_EQ(status_of(check_request_header(request(
                  {{"Host", "x"}, {"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", empty}}))),
              400)
        << "'" << empty << "'";
  }
}

TEST(HeaderChecksTest, TransferEncodingNextToContentLengthOrOnHttp10Is400) {
  EXPECT_EQ(status_of(check_request_header(
                request({{"Host", "x"}, {"Transfer-Encoding", "gzip"}, {"Content-Length", "2"}}))),
            400);
  EXPECT_EQ(status_of(check_request_header(request(
                {{"Host", "x"}, {"Transfer-Encoding", "chunked"}, {"Content-Length", "2"}}))),
            400);
  EXPECT_EQ(status_of(check_request_header(request({{"Transfer-Encoding", "chunked"}}, 10))), 400);
  EXPECT_EQ(status_of(check_request_header(request({{"Content-Length", "2"}}, 10))), 0);
}

TEST(HeaderChecksTest, Http11NeedsExactlyOneValidHost) {
  EXPECT_EQ(status_of(check_request_header(request({}))), 400);
  EXPECT_EQ(status_of(check_request_header(request({{"Host", "a"}, {"Host", "b"}}))), 400);
  EXPECT_EQ(status_of(check_request_header(request({{"Host", "a"}, {"Host", "b"}}, 10))), 400);
  EXPECT_EQ(status_of(check_request_header(request({{"Host", "u@h"}}))), 400);
  EXPECT_EQ(status_of(check_request_header(request({{"Host", "a b"}}))), 400);
  for (const char* ok : {"x", "127.0.0.1:8000", "[::1]:80", "zeusd", "example.org", ""}) {
    EXPECT_EQ(status_of(check_request_header(request({{"Host", ok}}))), 0) << ok;
  }
  EXPECT_EQ(status_of(check_request_header(request({}, 10))), 0);  // optional in HTTP/1.0
}

TEST(HeaderChecksTest, VersionsOtherThan1xAre505) {
  EXPECT_EQ(status_of(check_request_header(request({{"Host", "x"}}, 12))), 505);
  EXPECT_EQ(status_of(check_request_header(request({{"Host", "x"}}, 20))), 505);
}

TEST(HeaderChecksTest, AnswersAreFramedByTheSameRule) {
  bhttp::response_header<> h;
  h.version(11);
  h.result(200);
  EXPECT_FALSE(check_response_header(h));
  h.set("Transfer-Encoding", "chunked");
  EXPECT_FALSE(check_response_header(h));
  h.set("Transfer-Encoding", "gzip");
  EXPECT_TRUE(check_response_header(h));
  h.set("Transfer-Encoding", "chunked");
  h.set("Content-Length", "3");
  EXPECT_TRUE(check_response_header(h));
  h.erase("Content-Length");
  h.version(10);
  EXPECT_TRUE(check_response_header(h));
}

}  // namespace
}  // namespace zeus::http::detail
