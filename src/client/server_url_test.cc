#include "client/server_url.h"

#include <gtest/gtest.h>

namespace zeus::client {
namespace {

TEST(ServerUrlTest, SplitsSchemeHostPortAndPrefix) {
  Result<ServerUrl> u = parse_server_url("http://127.0.0.1:8000");
  ASSERT_TRUE(u.has_value()) << u.error().to_string();
  EXPECT_EQ(u->scheme_host_port, "http://127.0.0.1:8000");
  EXPECT_EQ(u->path_prefix, "");
  u = parse_server_url("https://zeus.example.org/bso/v1//");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->scheme_host_port, "https://zeus.example.org");
  EXPECT_EQ(u->path_prefix, "/bso/v1");
  u = parse_server_url("http://[::1]:9000/");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->scheme_host_port, "http://[::1]:9000");
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 9000);
  u = parse_server_url("http://zeus.example.org/x");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->host, "zeus.example.org");
  EXPECT_EQ(u->port, 80);
}

TEST(ServerUrlTest, RejectsMalformedUrlsWithTheExpectedForm) {
  for (const char* bad : {"", "127.0.0.1:8000", "ftp://h", "http://", "http://:80",
                          "http://h:0", "http://h:65536", "http://h:80x", "http://h/a?b=1",
                          "http://user@h", "http://h h"}) {
    Result<ServerUrl> u = parse_server_url(bad);
    ASSERT_FALSE(u.has_value()) << bad;
    EXPECT_EQ(u.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(u.error().message.find("http://127.0.0.1:8000"), std::string::npos);
  }
}

TEST(ServerUrlTest, PercentEncodesAllButUnreservedBytes) {
  EXPECT_EQ(percent_encode("resnet-1_a.b~c"), "resnet-1_a.b~c");
  EXPECT_EQ(percent_encode("a b/c?d&e=f"), "a%20b%2Fc%3Fd%26e%3Df");
  EXPECT_EQ(percent_encode("é"), "%C3%A9");
}

}  // namespace
}  // namespace zeus::client
