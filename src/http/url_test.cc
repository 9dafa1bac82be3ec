// parse_http_url (http/url.h).
#include "http/url.h"

#include <gtest/gtest.h>

namespace zeus::http {
namespace {

TEST(ParseHttpUrlTest, HostPortAndPath) {
  Result<HttpUrl> u = parse_http_url("http://[::1]:9091/a%20b/");
  ASSERT_TRUE(u.has_value()) << u.error().message;
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 9091);
  EXPECT_TRUE(u->port_given);
  EXPECT_EQ(u->host_and_port, "[::1]:9091");
  EXPECT_EQ(u->path, "/a b/");
  u = parse_http_url("https://zeus.example.org");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->port, 443);
  EXPECT_FALSE(u->port_given);
}

TEST(ParseHttpUrlTest, RefusesWhatNoClientCanUseSayingWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"127.0.0.1:8000", "does not start"}, {"ftp://h", "does not start"},
      {"http://", "no host"},               {"http://h:0", "outside 1-65535"},
      {"http://h:65536", "outside"},        {"http://h:80x", "malformed"},
      {"http://h/a?b=1", "query"},          {"http://user@h", "user name"},
      {"http://h h", "malformed"}, {"http://h/#f", "fragment"}};
  for (const auto& [url, why] : cases) {
    Result<HttpUrl> u = parse_http_url(url);
    ASSERT_FALSE(u.has_value()) << url;
    EXPECT_NE(u.error().message.find(why), std::string::npos) << url << ": " << u.error().message;
  }
}

}  // namespace
}  // namespace zeus::http
