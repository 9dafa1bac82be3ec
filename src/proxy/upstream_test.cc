// upstream_client: http:// and https:// upstreams (the latter a real TLS server trusted through
// ZEUS_CA_FILE), and the URLs it refuses.
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

}  // namespace
}  // namespace zeus::proxy
