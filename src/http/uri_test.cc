// parse_uri, parse_origin_form, is_host_and_port, percent_encode (http/uri.h).
#include "http/uri.h"

#include <gtest/gtest.h>

namespace zeus::http {
namespace {

using Query = std::vector<std::pair<std::string, std::string>>;

TEST(ParseUriTest, SplitsAnAbsoluteUrlAndDecodesIt) {
  Result<UriParts> u = parse_uri("http://[::1]:9091/a+%20b//c/?x=1&y&=z&a+b=c%2Bd#f");
  ASSERT_TRUE(u.has_value()) << u.error().message;
  EXPECT_EQ(parse_uri("/a%00b").value().path, std::string("/a\0b", 4));  // NUL kept
  // A query with a NUL is refused: its parameters would be cut at it.
  EXPECT_NE(parse_uri("/?a=b%00c").error().message.find("%00"), std::string::npos);
  u = parse_uri("http://[::1]:9091/a+%20b//c/?x=1&y&=z&a+b=c%2Bd#f");
  ASSERT_TRUE(u.has_value()) << u.error().message;
  EXPECT_EQ(u->scheme, "http");
  EXPECT_TRUE(u->has_authority);
  EXPECT_FALSE(u->has_userinfo);
  EXPECT_EQ(u->host, "::1");
  EXPECT_TRUE(u->has_port);
  EXPECT_EQ(u->port, "9091");
  EXPECT_EQ(u->host_and_port, "[::1]:9091");
  EXPECT_EQ(u->path, "/a+ b//c/");
  EXPECT_TRUE(u->has_query);
  EXPECT_EQ(u->query, (Query{{"x", "1"}, {"y", ""}, {"", "z"}, {"a b", "c+d"}}));
  EXPECT_TRUE(u->has_fragment);
}

TEST(ParseUriTest, AuthorityForms) {
  Result<UriParts> u = parse_uri("https://us%65r@H.example:/");
  ASSERT_TRUE(u.has_value());
  EXPECT_TRUE(u->has_userinfo);
  EXPECT_EQ(u->host, "H.example");
  EXPECT_TRUE(u->has_port);
  EXPECT_EQ(u->port, "");
  EXPECT_EQ(u->path, "/");
  u = parse_uri("http://h");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->path, "");
  EXPECT_FALSE(u->has_port);
  EXPECT_EQ(u->host_and_port, "h");
  u = parse_uri("http://");
  ASSERT_TRUE(u.has_value());
  EXPECT_TRUE(u->has_authority);
  EXPECT_EQ(u->host, "");
  u = parse_uri("http:/x");
  ASSERT_TRUE(u.has_value());
  EXPECT_FALSE(u->has_authority);
  EXPECT_EQ(u->path, "/x");
}

TEST(ParseUriTest, SyntaxErrorsNameTheCharacter) {
  const std::pair<const char*, const char*> cases[] = {{"http://h h", "unexpected ' ' at character 9"},
                                                       {"http://h:80x", "malformed near its end"},
                                                       {"/%zz", "at character 3"},
                                                       {"http://[::1", "near its end"}};
  for (const auto& [text, why] : cases) {
    Result<UriParts> u = parse_uri(text);
    ASSERT_FALSE(u.has_value()) << text;
    EXPECT_NE(u.error().message.find(why), std::string::npos) << text << ": " << u.error().message;
  }
  Result<UriParts> u = parse_uri(std::string_view("/a\x01", 3));
  ASSERT_FALSE(u.has_value());
  EXPECT_NE(u.error().message.find("0x01 at character 3"), std::string::npos) << u.error().message;
}

TEST(ParseOriginFormTest, PathAndQueryOnly) {
  Result<UriParts> t = parse_origin_form("/");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->path, "/");
  EXPECT_FALSE(t->has_query);
  t = parse_origin_form("//h/x?");  // a path, never a host
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->path, "//h/x");
  EXPECT_FALSE(t->has_authority);
  EXPECT_EQ(t->host, "");
  EXPECT_TRUE(t->has_query);
  EXPECT_TRUE(t->query.empty());
  t = parse_origin_form("/jobs/a%2Fb?job_id=x%2Fy&flag");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->path, "/jobs/a/b");
  EXPECT_EQ(t->query, (Query{{"job_id", "x/y"}, {"flag", ""}}));
  for (const char* bad : {"", "x", "http://h/", "/a#f", "/a b", "/%4"}) {
    EXPECT_FALSE(parse_origin_form(bad).has_value()) << bad;
  }
  // Error positions count from the target's start, not from any prefix.
  EXPECT_NE(parse_origin_form("/a b").error().message.find("character 3"), std::string::npos);
  EXPECT_NE(parse_origin_form("/a#f").error().message.find("'#' at character 3"), std::string::npos);
}

TEST(IsHostAndPortTest, HostHeaderValues) {
  for (const char* ok : {"", "h", "h:80", "h:", "127.0.0.1:8000", "[::1]:9091", "a-b.example"}) {
    EXPECT_TRUE(is_host_and_port(ok)) << ok;
  }
  for (const char* bad : {"u@h", "h/x", "h?x", "h#x", "h h", "h:8x", "[::1", "h:80:81"}) {
    EXPECT_FALSE(is_host_and_port(bad)) << bad;
  }
}

TEST(PercentEncodeTest, KeepsOnlyUnreservedBytes) {
  EXPECT_EQ(percent_encode("zeus-job_1.x~"), "zeus-job_1.x~");
  EXPECT_EQ(percent_encode("a b/c%d?"), "a%20b%2Fc%25d%3F");
  EXPECT_EQ(percent_encode(std::string_view("\0a\0\xff\0", 5)), "%00a%00%FF%00");
  EXPECT_EQ(percent_encode(""), "");
  Result<UriParts> back = parse_uri("/" + percent_encode("a b/c%d?"));  // round trip
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->path, "/a b/c%d?");
}

}  // namespace
}  // namespace zeus::http
