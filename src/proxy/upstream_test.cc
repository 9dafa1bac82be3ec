// upstream_client: http:// and https:// upstreams (the latter a real TLS server trusted through
// ZEUS_CA_FILE), and the URLs it refuses; upstream_path/upstream_target: the URL's path put
// before every target.
#include "proxy/upstream.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "http/tls_test_server.h"

namespace zeus::proxy {
namespace {

TEST(UpstreamClientTest, ReachesAnHttpsUpstreamTrustedThroughZeusCaFile) {
  http::testing::TlsTestServer server("localhost", {{"/v1/models", "{\"data\": []}"}});
  ASSERT_TRUE(server.ok()) << server.problem();
  const std::string url = "https://localhost:" + std::to_string(server.port());
  ::setenv("ZEUS_CA_FILE", server.cert_file().c_str(), 1);
  auto client = upstream_client(url, 10, "--upstream");
  ::unsetenv("ZEUS_CA_FILE");
  ASSERT_TRUE(client) << client.error().message;
  EXPECT_EQ((*client)->where(), url);
  auto r = (*client)->request("GET", "/v1/models");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "{\"data\": []}");
}

TEST(UpstreamClientTest, RefusesOtherSchemesNamingTheFlag) {
  auto ftp = upstream_client("ftp://localhost:21", 10, "--upstream a=ftp://localhost:21");
  ASSERT_FALSE(ftp);
  EXPECT_EQ(ftp.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(ftp.error().message.find("--upstream a="), std::string::npos);
  EXPECT_TRUE(upstream_client("http://127.0.0.1:8000", 10, "--upstream"));
}

// An upstream's path goes before every target sent to it; a path that would need escaping is
// refused naming the flag.
TEST(UpstreamPathTest, PrefixesEveryTargetWithTheUrlsPath) {
  EXPECT_EQ(*upstream_path("http://h:8000", "--upstream"), "");
  EXPECT_EQ(*upstream_path("http://h:8000/", "--upstream"), "");
  EXPECT_EQ(*upstream_path("https://gw.example/llama/", "--upstream"), "/llama");
  EXPECT_EQ(*upstream_path("http://h/a/b//", "--upstream"), "/a/b");
  EXPECT_EQ(upstream_target("/llama", "/v1/models?x=%2F"), "/llama/v1/models?x=%2F");
  EXPECT_EQ(upstream_target("", "/v1/models"), "/v1/models");
  EXPECT_EQ(upstream_target("/llama", "*"), "*");
  auto spaced = upstream_path("http://h/my%20model/", "--upstream a=...");
  ASSERT_FALSE(spaced);
  EXPECT_EQ(spaced.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(spaced.error().message.find("--upstream a="), std::string::npos);
  EXPECT_FALSE(upstream_path("http://h:99999/x", "--upstream"));
}

}  // namespace
}  // namespace zeus::proxy
