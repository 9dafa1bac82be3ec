// Pushgateway over HTTPS: a real TLS server (http/tls_test_server.h) trusted through ZEUS_CA_FILE
// takes a push; without the CA the push fails naming the certificate's problem.
#include <gtest/gtest.h>

#include <cstdlib>

#include "exporter/pushgateway.h"
#include "http/tls_test_server.h"

namespace zeus::exporter {
namespace {

TEST(PushgatewayTlsTest, PushesToAnHttpsGatewayTrustedThroughZeusCaFile) {
  http::testing::TlsTestServer server("localhost", {{"/metrics/job/train", "{}"}});
  ASSERT_TRUE(server.ok()) << server.problem();
  const std::string url = "https://localhost:" + std::to_string(server.port());
  auto untrusted = Pushgateway::connect(url, "train", {}, "--push");
  ASSERT_TRUE(untrusted) << untrusted.error().message;
  auto refused = (*untrusted)->push("PUT", {});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("self-signed certificate"), std::string::npos)
      << refused.error().message;

  ::setenv("ZEUS_CA_FILE", server.cert_file().c_str(), 1);
  auto gateway = Pushgateway::connect(url + "/", "train", {}, "--push");
  ::unsetenv("ZEUS_CA_FILE");
  ASSERT_TRUE(gateway) << gateway.error().message;
  auto pushed = (*gateway)->push("PUT", {});
  EXPECT_TRUE(pushed) << pushed.error().message;
  auto elsewhere = Pushgateway::connect(url, "other", {}, "--push");  // 404 there
  ASSERT_TRUE(elsewhere);
  EXPECT_FALSE((*elsewhere)->push("POST", {}));
}

TEST(PushgatewayTlsTest, RefusesOtherSchemes) {
  auto ftp = Pushgateway::connect("ftp://gateway:9091", "train", {}, "--push");
  ASSERT_FALSE(ftp);
  EXPECT_EQ(ftp.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(ftp.error().message.find("--push"), std::string::npos);
}

}  // namespace
}  // namespace zeus::exporter
