// The online providers against a local server that answers in the shapes of Electricity Maps'
// and OpenEI's APIs (as their documentation and upstream Zeus's recorded answers show them):
// values per hour, caching, and every failure a user meets (401, garbage, a timeout, no server),
// and the same over HTTPS.
#include "zeus/client/online_intensity.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <thread>

#include "http/server.h"
#include "http/test_server.h"
#include "http/tls_test_server.h"

namespace zeus {
namespace {

using http::HttpRequest;
using http::HttpResponse;
using http::Peer;

std::string iso(double unix_s) {
  const time_t t = static_cast<time_t>(unix_s);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S.000Z", &utc);
  return text;
}

double this_hour() {
  return std::floor(static_cast<double>(std::time(nullptr)) / 3600) * 3600;
}

// A fake service: `answer` decides each response; requests are recorded.
struct FakeService {
  std::function<HttpResponse(const HttpRequest&)> answer;
  std::mutex mutex;
  std::vector<HttpRequest> requests;
  http::testing::Running running;
  FakeService() {
    running = http::testing::start({}, http::HttpServer::blocking(
                                           [this](const HttpRequest& request, const Peer&) {
                                             {
                                               std::lock_guard<std::mutex> lock(mutex);
                                               requests.push_back(request);
                                             }
                                             return answer(request);
                                           }));
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(running.port); }
  size_t count() {
    std::lock_guard<std::mutex> lock(mutex);
    return requests.size();
  }
};

HttpResponse json_answer(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

std::unique_ptr<IntensityProvider> maps(const std::string& url, double timeout_s = 5) {
  ElectricityMapsOptions o;
  o.latitude = 42.28;
  o.longitude = -83.74;
  o.api_key = "test-key";
  o.base_url = url;
  o.timeout_s = timeout_s;
  auto provider = electricity_maps_provider(o);
  EXPECT_TRUE(provider) << provider.error().message;
  return std::move(*provider);
}

TEST(ElectricityMapsTest, AnswersPastAndCurrentHoursAndCachesThem) {
  FakeService service;
  const double hour = this_hour();
  service.answer = [&](const HttpRequest& r) {
    if (r.path == "/v3/carbon-intensity/history") {
      return json_answer(200, "{\"zone\": \"US-MIDW-MISO\", \"history\": [{\"carbonIntensity\": 512,"
                              " \"datetime\": \"" + iso(hour - 7200) + "\", \"isEstimated\": false},"
                              "{\"carbonIntensity\": null, \"datetime\": \"" + iso(hour - 3600) +
                              "\"}]}");
    }
    return json_answer(200, "{\"zone\": \"US-MIDW-MISO\", \"carbonIntensity\": 433, \"datetime\": \"" +
                                iso(hour) + "\", \"isEstimated\": false}");
  };
  auto provider = maps(service.url());
  EXPECT_EQ(*provider->value_at(hour - 7200 + 10), 512);
  EXPECT_EQ(*provider->value_at(hour + 5), 433);
  EXPECT_EQ(*provider->value_at(hour + 20), 433);  // cached
  EXPECT_EQ(*provider->value_at(hour - 7000), 512);  // cached
  EXPECT_EQ(service.count(), 2u);
  auto gap = provider->value_at(hour - 3000);  // null in the history: a gap, not 0
  ASSERT_FALSE(gap);
  EXPECT_EQ(gap.error().code, ErrorCode::kNotFound);
  EXPECT_NE(gap.error().message.find("estimate=true"), std::string::npos);
  EXPECT_DOUBLE_EQ(provider->next_boundary_after(hour + 5), hour + 3600);
  // The request as Electricity Maps documents it.
  const HttpRequest& first = service.requests.front();
  EXPECT_EQ(*first.header("auth-token"), "test-key");
  EXPECT_EQ(*first.query_value("disableEstimations"), "true");
  EXPECT_EQ(*first.query_value("emissionFactorType"), "direct");
  EXPECT_NEAR(std::stod(*first.query_value("lat")), 42.28, 1e-9);
}

TEST(ElectricityMapsTest, NamesEveryFailure) {
  FakeService service;
  service.answer = [](const HttpRequest&) {
    return json_answer(401, "{\"error\": \"Invalid auth-token\"}");
  };
  auto refused = maps(service.url())->value_at(this_hour());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(refused.error().message.find("ELECTRICITYMAPS_API_KEY"), std::string::npos);

  service.answer = [](const HttpRequest&) { return json_answer(200, "<html>oops</html>"); };
  auto garbage = maps(service.url())->value_at(this_hour());
  ASSERT_FALSE(garbage);
  EXPECT_NE(garbage.error().message.find("not JSON"), std::string::npos);

  service.answer = [](const HttpRequest&) { return json_answer(200, "{\"history\": 3}"); };
  auto shape = maps(service.url())->value_at(this_hour() - 7200);
  ASSERT_FALSE(shape);
  EXPECT_NE(shape.error().message.find("not what its API sends"), std::string::npos);

  service.answer = [](const HttpRequest&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    return json_answer(200, "{}");
  };
  const auto start = std::chrono::steady_clock::now();
  auto slow = maps(service.url(), 0.3)->value_at(this_hour());
  ASSERT_FALSE(slow);
  EXPECT_EQ(slow.error().code, ErrorCode::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));

  auto down = maps("http://127.0.0.1:1")->value_at(this_hour());
  ASSERT_FALSE(down);
  EXPECT_NE(down.error().message.find("cannot be reached"), std::string::npos);
}

TEST(ElectricityMapsTest, RefusesBadOptions) {
  ElectricityMapsOptions o;
  o.latitude = 91;
  EXPECT_FALSE(electricity_maps_provider(o));
  o.latitude = 0;
  o.emission_factor_type = "direkt";
  EXPECT_FALSE(electricity_maps_provider(o));
  o.emission_factor_type = "lifecycle";
  EXPECT_TRUE(electricity_maps_provider(o));  // the default https:// URL
  o.base_url = "ftp://api.electricitymap.org";
  auto ftp = electricity_maps_provider(o);
  ASSERT_FALSE(ftp);
  EXPECT_EQ(ftp.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(ftp.error().message.find("http://"), std::string::npos);
}

// The provider over HTTPS end to end: a real TLS server (openssl-made certificate, Python's ssl)
// answers the same shapes, trusted through ZEUS_CA_FILE as an operator would set it for a
// private CA.
TEST(ElectricityMapsTlsTest, AnswersThroughHttpsWithZeusCaFile) {
  const double hour = this_hour();
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

// An OpenEI answer: periods 0 (0.10 $/kWh), 1 (0.20), 2 (0.35); weekdays use period 2 from 14:00
// to 19:59 and 0 otherwise, weekends 1 all day.
std::string openei_answer(const std::string& label) {
  std::string weekday = "[", weekend = "[";
  for (int m = 0; m < 12; ++m) {
    weekday += m ? ",[" : "[";
    weekend += m ? ",[" : "[";
    for (int h = 0; h < 24; ++h) {
      weekday += std::string(h ? "," : "") + (h >= 14 && h < 20 ? "2" : "0");
      weekend += std::string(h ? "," : "") + "1";
    }
    weekday += "]";
    weekend += "]";
  }
  weekday += "]";
  weekend += "]";
  return "{\"items\": [{\"label\": \"other\", \"energyratestructure\": [[{\"rate\": 9}]]},"
         "{\"label\": \"" + label + "\", \"sector\": \"Residential\", \"energyratestructure\": "
         "[[{\"rate\": 0.10, \"unit\": \"kWh\"}], [{\"rate\": 0.20, \"adj\": 0.01}], "
         "[{\"rate\": 0.35, \"max\": 500}, {\"rate\": 0.5}]], \"energyweekdayschedule\": " +
         weekday + ", \"energyweekendschedule\": " + weekend + "}]}";
}

std::unique_ptr<IntensityProvider> openei(const std::string& url, const std::string& label,
                                          double timeout_s = 10, const std::string& key = "k") {
  OpenEIOptions o;
  o.latitude = 42.28;
  o.longitude = -83.74;
  o.label = label;
  o.api_key = key;
  o.base_url = url;
  o.timeout_s = timeout_s;
  auto provider = openei_provider(o);
  EXPECT_TRUE(provider) << provider.error().message;
  return std::move(*provider);
}

// Unix time of a local wall-clock time.
double local_time(int year, int month, int day, int hour) {
  std::tm t{};
  t.tm_year = year - 1900;
  t.tm_mon = month - 1;
  t.tm_mday = day;
  t.tm_hour = hour;
  t.tm_isdst = -1;
  return static_cast<double>(std::mktime(&t));
}

TEST(OpenEITest, ThePriceFollowsTheScheduleOfTheLabel) {
  FakeService service;
  service.answer = [](const HttpRequest&) { return json_answer(200, openei_answer("539f6e1d")); };
  auto provider = openei(service.url(), "539f6e1d");
  EXPECT_EQ(provider->unit(), "$/kWh");
  EXPECT_DOUBLE_EQ(*provider->value_at(local_time(2024, 7, 3, 15)), 0.35);  // a Wednesday
  EXPECT_DOUBLE_EQ(*provider->value_at(local_time(2024, 7, 3, 9)), 0.10);
  EXPECT_DOUBLE_EQ(*provider->value_at(local_time(2024, 7, 6, 15)), 0.20);  // a Saturday
  EXPECT_EQ(service.count(), 1u);  // asked once
  EXPECT_DOUBLE_EQ(provider->next_boundary_after(local_time(2024, 7, 3, 15) + 600),
                   local_time(2024, 7, 3, 16));
  const HttpRequest& r = service.requests.front();
  EXPECT_EQ(r.path, "/utility_rates");
  EXPECT_EQ(*r.query_value("detail"), "full");
  EXPECT_EQ(*r.query_value("sector"), "Residential");
  EXPECT_EQ(*r.query_value("api_key"), "k");

  auto missing = openei(service.url(), "nope")->value_at(local_time(2024, 7, 3, 15));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);

  service.answer = [](const HttpRequest&) {
    return json_answer(200, "{\"error\": {\"code\": \"API_KEY_INVALID\"}}");
  };
  auto refused = openei(service.url(), "539f6e1d")->value_at(local_time(2024, 7, 3, 15));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("OPENEI_API_KEY"), std::string::npos);
}

// Each failure says what happened and what to do, and never shows the API key (it travels in the
// query string).
TEST(OpenEITest, NamesEveryFailure) {
  const std::string key = "secret-openei-key-2718";
  const double at = local_time(2024, 7, 3, 15);
  FakeService service;
  auto failure = [&](double timeout_s = 10) {
    auto value = openei(service.url(), "539f6e1d", timeout_s, key)->value_at(at);
    EXPECT_FALSE(value);
    Error error = value ? Error{} : value.error();
    EXPECT_EQ(error.message.find(key), std::string::npos) << error.message;
    EXPECT_NE(error.message.find("OpenEI"), std::string::npos) << error.message;
    return error;
  };

  // HTTP 401 (api.data.gov's answer to a bad key): the key, and the variable to set.
  service.answer = [](const HttpRequest&) {
    return json_answer(401,
                       "{\"error\": {\"code\": \"API_KEY_INVALID\", \"message\": "
                       "\"An invalid api_key was supplied.\"}}");
  };
  Error refused = failure();
  EXPECT_EQ(refused.code, ErrorCode::kPermissionDenied);
  EXPECT_NE(refused.message.find("HTTP 401"), std::string::npos) << refused.message;
  EXPECT_NE(refused.message.find("set OPENEI_API_KEY to a valid key"), std::string::npos)
      << refused.message;

  // A body that is not JSON (a proxy's or a login page): say so, and which URL to check.
  service.answer = [](const HttpRequest&) {
    return json_answer(200, "<html><body>Sign in to continue</body></html>");
  };
  Error garbage = failure();
  EXPECT_EQ(garbage.code, ErrorCode::kInvalidArgument);
  EXPECT_NE(garbage.message.find("not JSON: <html>"), std::string::npos) << garbage.message;
  EXPECT_NE(garbage.message.find("check that the URL is OpenEI's API"), std::string::npos)
      << garbage.message;

  // JSON of another shape (a bare value, a list, items that are not rate records): an error,
  // never an exception out of value_at.
  for (const char* body :
       {"42", "[1, 2]", "{\"items\": 3}", "{\"items\": [7]}", "{\"items\": [{\"label\": 5}]}"}) {
    service.answer = [body](const HttpRequest&) { return json_answer(200, body); };
    Error shape = failure();
    EXPECT_EQ(shape.code, ErrorCode::kInvalidArgument) << body;
    EXPECT_NE(shape.message.find("not what its utility_rates API sends"), std::string::npos)
        << body << ": " << shape.message;
    EXPECT_NE(shape.message.find("ZEUS_OPENEI_URL"), std::string::npos) << shape.message;
  }

  // A wrong path (404) names the path, not the query that holds the key; a 5xx says to retry.
  service.answer = [](const HttpRequest&) { return json_answer(404, "Not Found"); };
  Error missing = failure();
  EXPECT_EQ(missing.code, ErrorCode::kNotFound);
  EXPECT_NE(missing.message.find("has no /utility_rates (HTTP 404"), std::string::npos)
      << missing.message;
  // A server whose error page echoes the request (its URL, its headers) never
  // puts the key into the message: failure() checks that the key is absent.
  service.answer = [](const HttpRequest& request) {
    return json_answer(500, "internal error for " + request.target);
  };
  Error echoed = failure();
  EXPECT_NE(echoed.message.find("internal error for /utility_rates?"), std::string::npos)
      << echoed.message;
  EXPECT_NE(echoed.message.find("***"), std::string::npos) << echoed.message;
  service.answer = [](const HttpRequest&) { return json_answer(503, "busy"); };
  Error busy = failure();
  EXPECT_EQ(busy.code, ErrorCode::kUnavailable);
  EXPECT_NE(busy.message.find("HTTP 503: busy (try again later)"), std::string::npos)
      << busy.message;

  // A service slower than the timeout: given up on at the timeout, and how to allow more.
  service.answer = [](const HttpRequest&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    return json_answer(200, openei_answer("539f6e1d"));
  };
  const auto start = std::chrono::steady_clock::now();
  Error slow = failure(0.3);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(slow.code, ErrorCode::kUnavailable);
  EXPECT_NE(slow.message.find("no answer within"), std::string::npos) << slow.message;
  EXPECT_NE(slow.message.find("timeout_s"), std::string::npos) << slow.message;

  // No server at all.
  auto down = openei("http://127.0.0.1:1", "539f6e1d", 10, key)->value_at(at);
  ASSERT_FALSE(down);
  EXPECT_EQ(down.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(down.error().message.find("cannot be reached"), std::string::npos);
  EXPECT_NE(down.error().message.find("check the network and the URL"), std::string::npos);
}

TEST(IntensitySpecTest, NamesProvidersAndRefusesTheRest) {
  auto csv = intensity_provider_from_spec(std::string("csv:") + ZEUS_SOURCE_DIR +
                                          "/data/carbon_hist.csv:MISO_MASON_CITY");
  ASSERT_TRUE(csv) << csv.error().message;
  EXPECT_EQ((*csv)->unit(), "gCO2eq/kWh");
  auto constant = intensity_provider_from_spec("const:0.12", "$/kWh");  // the offline names
  ASSERT_TRUE(constant) << constant.error().message;
  EXPECT_EQ(*(*constant)->value_at(0), 0.12);
  EXPECT_EQ((*constant)->unit(), "$/kWh");
  for (const char* bad : {"csv", "const:x", "electricitymaps:42", "electricitymaps:a,b", "openei:1,2",
                          "wind:1,2", "csv:/nonexistent.csv"}) {
    EXPECT_FALSE(intensity_provider_from_spec(bad)) << bad;
  }
  EXPECT_NE(intensity_provider_from_spec("wind:1").error().message.find("electricitymaps:LAT,LON"),
            std::string::npos);
  FakeService service;
  service.answer = [](const HttpRequest&) { return json_answer(200, "{}"); };
  setenv("ZEUS_ELECTRICITYMAPS_URL", service.url().c_str(), 1);
  auto online = intensity_provider_from_spec("electricitymaps:42.28,-83.74");
  unsetenv("ZEUS_ELECTRICITYMAPS_URL");
  ASSERT_TRUE(online) << online.error().message;
}

}  // namespace
}  // namespace zeus
