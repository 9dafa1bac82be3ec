// ZeusdEndpoint: where the library's client finds zeusd (ZEUSD_SOCK_PATH, or ZEUSD_HOST_PORT with
// ZEUSD_TOKEN), and the messages for malformed values.
#include <cstdlib>

#include <gtest/gtest.h>

#include "zeus/zeusd_client/zeusd_client.h"

namespace zeus {
namespace {

class ZeusdEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    unsetenv(kZeusdSocketEnvironment);
    unsetenv(kZeusdHostPortEnvironment);
    unsetenv(kZeusdTokenEnvironment);
  }
};

TEST_F(ZeusdEndpointTest, HostPortParsesIpv4NamesAndIpv6) {
  auto v4 = ZeusdEndpoint::tcp("127.0.0.1:4938", "t");
  ASSERT_TRUE(v4) << v4.error().message;
  EXPECT_TRUE(v4->is_tcp());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 4938);
  EXPECT_EQ(v4->token, "t");
  EXPECT_EQ(v4->describe(), "tcp 127.0.0.1:4938");
  auto v6 = ZeusdEndpoint::tcp("[::1]:9", "");
  ASSERT_TRUE(v6) << v6.error().message;
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->describe(), "tcp [::1]:9");
  for (const char* bad : {"gpu-node-1", "gpu-node-1:", ":4938", "host:99999", "host:1/path"}) {
    auto parsed = ZeusdEndpoint::tcp(bad, "");
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.error().message.find("ZEUSD_HOST_PORT"), std::string::npos);
    EXPECT_NE(parsed.error().message.find("HOST:PORT"), std::string::npos);
  }
}

TEST_F(ZeusdEndpointTest, TheSocketWinsThenHostPortWithItsToken) {
  auto none = ZeusdEndpoint::from_environment();
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());

  setenv(kZeusdHostPortEnvironment, "10.0.0.5:4938", 1);
  setenv(kZeusdTokenEnvironment, "abc.def.ghi", 1);
  auto tcp = ZeusdEndpoint::from_environment();
  ASSERT_TRUE(tcp && tcp->has_value());
  EXPECT_EQ((*tcp)->host, "10.0.0.5");
  EXPECT_EQ((*tcp)->token, "abc.def.ghi");

  setenv(kZeusdSocketEnvironment, "/run/zeusd/zeusd.sock", 1);
  auto socket = ZeusdEndpoint::from_environment();
  ASSERT_TRUE(socket && socket->has_value());
  EXPECT_FALSE((*socket)->is_tcp());
  EXPECT_EQ((*socket)->socket_path, "/run/zeusd/zeusd.sock");
  EXPECT_EQ((*socket)->token, "abc.def.ghi");  // zeusd with a signing key wants it there too

  unsetenv(kZeusdSocketEnvironment);
  setenv(kZeusdHostPortEnvironment, "no-port", 1);
  auto bad = ZeusdEndpoint::from_environment();
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("no-port"), std::string::npos);
  // discover_devices() reports it instead of silently using the devices directly.
  auto devices = discover_devices(DiscoverOptions{});
  ASSERT_FALSE(devices);
  EXPECT_EQ(devices.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(ZeusdEndpointTest, AnUnreachableTcpZeusdNamesTheVariable) {
  auto endpoint = ZeusdEndpoint::tcp("127.0.0.1:1", "");
  ASSERT_TRUE(endpoint);
  ZeusdClient client(*endpoint);
  auto answer = client.request("GET", "/discover");
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(answer.error().message.find("ZEUSD_HOST_PORT"), std::string::npos)
      << answer.error().message;
  EXPECT_NE(answer.error().message.find("127.0.0.1:1"), std::string::npos);
}

}  // namespace
}  // namespace zeus
