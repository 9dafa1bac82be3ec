// parse_upstream_url: the URLs it refuses and the path it keeps; upstream_client: http:// and
// https:// upstreams (the latter a real TLS server trusted through ZEUS_CA_FILE);
// upstream_target: the URL's path put before every target.
#include "proxy/upstream.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "http/tls_test_server.h"

namespace zeus::proxy {
namespace {

TEST(UpstreamClientTest, ReachesAnHttpsUpstreamTrustedThroughZeusCaFile) {
  http::testing::TlsTestServer server("localhost", {{"/v1/models", "{\"data\": []}"}});
  ASSERT_TRUE(server.ok()) << server.problem();
  const std::string url = "https://localhost:" + std::to_string(server.port());
  ::setenv("ZEUS_CA_FILE", server.cert_file().c_str(), 1);
  auto upstream = parse_upstream_url(url, "--upstream");
  ASSERT_TRUE(upstream) << upstream.error().message;
  auto client = upstream_client(*upstream, 10);
  ::unsetenv("ZEUS_CA_FILE");
  ASSERT_TRUE(client) << client.error().message;
  EXPECT_EQ((*client)->where(), url);
  auto r = (*client)->request("GET", "/v1/models");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "{\"data\": []}");
}

TEST(UpstreamClientTest, RefusesOtherSchemesNamingTheFlag) {
  auto ftp = parse_upstream_url("ftp://localhost:21", "--upstream a=ftp://localhost:21");
  ASSERT_FALSE(ftp);
  EXPECT_EQ(ftp.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(ftp.error().message.find("--upstream a="), std::string::npos);
  auto http = parse_upstream_url("http://127.0.0.1:8000", "--upstream");
  ASSERT_TRUE(http);
  EXPECT_TRUE(upstream_client(*http, 10));
}

// An upstream's path goes before every target sent to it; a path that would need escaping is
// refused naming the flag.
TEST(UpstreamPathTest, PrefixesEveryTargetWithTheUrlsPath) {
  EXPECT_EQ(parse_upstream_url("http://h:8000", "--upstream")->path, "");
  EXPECT_EQ(parse_upstream_url("http://h:8000/", "--upstream")->path, "");
  EXPECT_EQ(parse_upstream_url("https://gw.example/llama/", "--upstream")->path, "/llama");
  EXPECT_EQ(parse_upstream_url("http://h/a/b//", "--upstream")->path, "/a/b");
  EXPECT_EQ(*upstream_target("/llama", "/v1/models?x=%2F"), "/llama/v1/models?x=%2F");
  EXPECT_EQ(*upstream_target("", "/v1/models"), "/v1/models");
  EXPECT_EQ(*upstream_target("/llama", "*"), "*");
  auto spaced = parse_upstream_url("http://h/my%20model/", "--upstream a=...");
  ASSERT_FALSE(spaced);
  EXPECT_EQ(spaced.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(spaced.error().message.find("--upstream a="), std::string::npos);
  EXPECT_FALSE(parse_upstream_url("http://h:99999/x", "--upstream"));
}

// The target sent upstream is a normalised origin-form under the path: dot
// segments are removed first (so none climbs out of it), percent-encoded unreserved characters
// decoded, an absolute-form target's authority dropped, its query kept as written; what another
// server could read as another path is refused.
TEST(UpstreamPathTest, ProxyTarget_DotSegmentsAndAbsoluteFormStayUnderThePath) {
  const std::vector<std::pair<std::string, std::string>> kept = {
      {"/../admin/", "/llama/admin/"},
      {"/v1/../../admin", "/llama/admin"},
      {"/%2e%2E/admin", "/llama/admin"},
      {"/.%2e/%2E./admin?next=../x", "/llama/admin?next=../x"},
      {"/v1/./models/.", "/llama/v1/models/"},
      {"/v1/%7euser%41", "/llama/v1/~userA"},
      {"//host/x", "/llama//host/x"},
      {"/", "/llama/"},
      {"/?", "/llama/?"},
      {"http://internal.example/", "/llama/"},
      {"https://gw/admin/../v1/models?a=b", "/llama/v1/models?a=b"},
      {"HtTp://gw", "/llama/"},
  };
  for (const auto& [target, sent] : kept) {
    auto out = upstream_target("/llama", target);
    ASSERT_TRUE(out) << target << ": " << out.error().message;
    EXPECT_EQ(*out, sent) << target;
  }
  for (const char* target :
       {"/..%2fadmin", "/a%2F..%2F..%2Fadmin", "/..;/admin", "/.;/admin", "/x/..;a=b/y",
        "/%5c../admin", "/a%00b", "/a?b=%00", "ftp://h/x", "http://h/x#frag", "h/x", "", "/a b"}) {
    auto out = upstream_target("/llama", target);
    EXPECT_FALSE(out) << target << " -> " << (out ? *out : "");
    if (!out) {
      EXPECT_EQ(out.error().code, ErrorCode::kInvalidArgument);
    }
  }
}

}  // namespace
}  // namespace zeus::proxy
