// The Electricity Maps provider over HTTPS end to end: a real TLS server (openssl-made
// certificate, Python's ssl) answers the history and latest shapes, and the provider trusts it
// through ZEUS_CA_FILE as an operator would set it for a private CA.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <ctime>

#include "http/tls_test_server.h"
#include "zeus/online_intensity.h"

namespace zeus {
namespace {

std::string iso(double unix_s) {
  const time_t t = static_cast<time_t>(unix_s);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S.000Z", &utc);
  return text;
}

TEST(ElectricityMapsTlsTest, AnswersThroughHttpsWithZeusCaFile) {
  const double hour = std::floor(static_cast<double>(std::time(nullptr)) / 3600) * 3600;
  http::testing::TlsTestServer server(
      "localhost",
      {{"/v3/carbon-intensity/history",
        "{\"zone\": \"DE\", \"history\": [{\"carbonIntensity\": 301, \"datetime\": \"" +
            iso(hour - 7200) + "\", \"isEstimated\": false}]}"},
       {"/v3/carbon-intensity/latest",
        "{\"zone\": \"DE\", \"carbonIntensity\": 288, \"datetime\": \"" + iso(hour) +
            "\", \"isEstimated\": false}"}});
  ASSERT_TRUE(server.ok()) << server.problem();
  ElectricityMapsOptions o;
  o.latitude = 52.52;
  o.longitude = 13.40;
  o.api_key = "test-key";
  o.base_url = "https://localhost:" + std::to_string(server.port());
  o.timeout_s = 10;

  // Without the CA: the handshake's reason and the fix reach the caller.
  auto untrusted = electricity_maps_provider(o);
  ASSERT_TRUE(untrusted) << untrusted.error().message;
  auto refused = (*untrusted)->value_at(hour + 5);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("self-signed certificate"), std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("ZEUS_CA_FILE"), std::string::npos);

  ::setenv("ZEUS_CA_FILE", server.cert_file().c_str(), 1);
  auto provider = electricity_maps_provider(o);
  ::unsetenv("ZEUS_CA_FILE");
  ASSERT_TRUE(provider) << provider.error().message;
  auto now = (*provider)->value_at(hour + 5);
  ASSERT_TRUE(now) << now.error().message;
  EXPECT_EQ(*now, 288);
  auto past = (*provider)->value_at(hour - 7200 + 60);
  ASSERT_TRUE(past) << past.error().message;
  EXPECT_EQ(*past, 301);
}

}  // namespace
}  // namespace zeus
