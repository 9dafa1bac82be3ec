// HttpClient::tls against a real HTTPS server (openssl-made certificate, Python's ssl): trusted
// through ca_file it answers, keeps one connection alive and streams; an untrusted certificate or
// one for another name fails the handshake with the reason and the fix.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "http/client.h"
#include "http/tls_test_server.h"

namespace zeus::http {
namespace {

using testing::TlsTestServer;

ClientOptions trusting(const TlsTestServer& server) {
  ClientOptions o;
  o.timeout_s = 10;
  o.ca_file = server.cert_file();
  return o;
}

std::string header(const HttpResponse& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (n == name) return v;
  }
  return "";
}

TEST(HttpClientTlsTest, AnswersWithTheServersCertificateTrusted) {
  TlsTestServer server("localhost", {{"/v1/answer", "{\"value\": 42}"}});
  ASSERT_TRUE(server.ok()) << server.problem();
  for (const char* host : {"localhost", "127.0.0.1"}) {  // the name and the IP in the certificate
    auto client = HttpClient::tls(host, server.port(), trusting(server));
    ASSERT_TRUE(client) << client.error().message;
    EXPECT_EQ((*client)->where(), std::string("https://") + host + ":" + std::to_string(server.port()));
    auto r = (*client)->request("GET", "/v1/answer?x=1");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "{\"value\": 42}");
    auto missing = (*client)->request("POST", "/nowhere", "{}");
    ASSERT_TRUE(missing) << missing.error().message;
    EXPECT_EQ(missing->status, 404);
  }
}

TEST(HttpClientTlsTest, KeepsOneConnectionForSeveralRequests) {
  TlsTestServer server("localhost", {{"/a", "{}"}});
  ASSERT_TRUE(server.ok()) << server.problem();
  auto client = HttpClient::tls("localhost", server.port(), trusting(server));
  ASSERT_TRUE(client) << client.error().message;
  std::string first;
  for (int i = 0; i < 4; ++i) {
    auto r = (*client)->request(i % 2 ? "POST" : "GET", "/a", i % 2 ? "{\"i\": 1}" : "");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->status, 200);
    if (i == 0) first = header(*r, "X-Connection");
    EXPECT_EQ(header(*r, "X-Connection"), first) << "request " << i << " opened a new connection";
  }
  EXPECT_FALSE(first.empty());
}

TEST(HttpClientTlsTest, StreamsABodyAndReusesTheConnectionAfterIt) {
  TlsTestServer server("localhost", {{"/a", "{}"}});
  ASSERT_TRUE(server.ok()) << server.problem();
  auto client = HttpClient::tls("localhost", server.port(), trusting(server));
  ASSERT_TRUE(client) << client.error().message;
  std::string got;
  auto r = (*client)->stream("GET", "/stream", "", {}, [&](std::string_view piece) {
    got += piece;
    return true;
  }, 5);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(r->body_complete);
  EXPECT_EQ(got, "data: 0\n\ndata: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\n");
  auto next = (*client)->request("GET", "/a");
  ASSERT_TRUE(next) << next.error().message;
  EXPECT_EQ(header(*next, "X-Connection"), header(*r, "X-Connection"));
}

TEST(HttpClientTlsTest, RefusesAnUntrustedCertificateNamingTheFix) {
  TlsTestServer server("localhost", {{"/a", "{}"}});
  ASSERT_TRUE(server.ok()) << server.problem();
  ClientOptions o;
  o.timeout_s = 10;
  auto client = HttpClient::tls("localhost", server.port(), o);
  ASSERT_TRUE(client) << client.error().message;
  auto r = (*client)->request("GET", "/a");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  const std::string& m = r.error().message;
  EXPECT_NE(m.find("https://localhost:" + std::to_string(server.port())), std::string::npos) << m;
  EXPECT_NE(m.find("certificate verify failed: self-signed certificate"), std::string::npos) << m;
  EXPECT_NE(m.find("ZEUS_CA_FILE"), std::string::npos) << m;
}

TEST(HttpClientTlsTest, RefusesACertificateForAnotherName) {
  TlsTestServer server("other.example", {{"/a", "{}"}});
  ASSERT_TRUE(server.ok()) << server.problem();
  auto by_name = HttpClient::tls("localhost", server.port(), trusting(server));
  ASSERT_TRUE(by_name) << by_name.error().message;
  auto r = (*by_name)->request("GET", "/a");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(r.error().message.find("hostname mismatch"), std::string::npos) << r.error().message;
  auto by_ip = HttpClient::tls("127.0.0.1", server.port(), trusting(server));
  ASSERT_TRUE(by_ip) << by_ip.error().message;
  auto ip = (*by_ip)->request("GET", "/a");
  ASSERT_FALSE(ip);
  EXPECT_NE(ip.error().message.find("IP address mismatch"), std::string::npos) << ip.error().message;
}

TEST(HttpClientTlsTest, RefusesBadOptionsAndSchemes) {
  ClientOptions o;
  o.ca_file = "/nonexistent/ca.pem";
  auto bad_ca = HttpClient::tls("localhost", 443, o);
  ASSERT_FALSE(bad_ca);
  EXPECT_EQ(bad_ca.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(bad_ca.error().message.find("/nonexistent/ca.pem"), std::string::npos);
  EXPECT_FALSE(HttpClient::tls("", 443, {}));
  EXPECT_FALSE(HttpClient::tls("localhost", 0, {}));
  auto ftp = HttpClient::for_scheme("ftp", "localhost", 21, {});
  ASSERT_FALSE(ftp);
  EXPECT_EQ(ftp.error().code, ErrorCode::kInvalidArgument);
  auto https = HttpClient::for_scheme("https", "localhost", 443, {});
  ASSERT_TRUE(https) << https.error().message;
  EXPECT_EQ((*https)->where(), "https://localhost:443");
}

TEST(HttpClientTlsTest, ForSchemeTakesTheCaFileFromTheEnvironment) {
  TlsTestServer server("localhost", {{"/a", "{\"ok\": true}"}});
  ASSERT_TRUE(server.ok()) << server.problem();
  ::setenv("ZEUS_CA_FILE", server.cert_file().c_str(), 1);
  auto client = HttpClient::for_scheme("https", "localhost", server.port(), {});
  ::unsetenv("ZEUS_CA_FILE");
  ASSERT_TRUE(client) << client.error().message;
  auto r = (*client)->request("GET", "/a");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->body, "{\"ok\": true}");
}

}  // namespace
}  // namespace zeus::http
