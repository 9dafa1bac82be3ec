// The Electricity Maps provider (zeus/client/online_intensity.h).
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "client/online_answer.h"
#include "client/online_service.h"
#include "client/server_url.h"
#include "zeus/client/online_intensity.h"
#include "zeus/common/clock.h"

namespace zeus {
namespace {

using nlohmann::json;
constexpr double kHourS = 3600;

double hour_of(double unix_s) { return std::floor(unix_s / kHourS) * kHourS; }

class ElectricityMaps final : public IntensityProvider {
 public:
  ElectricityMaps(ElectricityMapsOptions options, client::ServerUrl url,
                  std::unique_ptr<http::HttpClient> client)
      : options_(std::move(options)), url_(std::move(url)), client_(std::move(client)) {}

  std::string unit() const override { return "gCO2eq/kWh"; }
  double next_boundary_after(double unix_s) const override { return hour_of(unix_s) + kHourS; }
  std::string describe() const override {
    return "Electricity Maps (" + std::to_string(options_.latitude) + ", " +
           std::to_string(options_.longitude) + ")";
  }

  Result<double> value_at(double unix_s) override {
    const double hour = hour_of(unix_s);
    const double now = clock_.unix_time_s();
    const bool current = hour >= hour_of(now);
    if (auto cached = hours_.find(hour); cached != hours_.end()) {
      if (!current || now - fetched_at_[hour] < options_.cache_s) return cached->second;
    }
    if (current) {
      ZEUS_TRY(fetch("latest"));
    } else {
      ZEUS_TRY(fetch("history"));
    }
    if (auto found = hours_.find(hour); found != hours_.end()) return found->second;
    return fail(ErrorCode::kNotFound,
                describe() + " has no carbon intensity for the hour from Unix time " +
                    std::to_string(static_cast<long long>(hour)) +
                    (options_.estimate ? "" : " (estimate=true lets it fill gaps)"));
  }

 private:
  std::string target(const std::string& what) const {
    return url_.path_prefix + "/v3/carbon-intensity/" + what +
           "?lat=" + client::percent_encode(std::to_string(options_.latitude)) +
           "&lon=" + client::percent_encode(std::to_string(options_.longitude)) +
           "&disableEstimations=" + (options_.estimate ? "false" : "true") +
           "&emissionFactorType=" + options_.emission_factor_type;
  }

  // One answer's entries ({"datetime", "carbonIntensity"}) into the cache.
  Result<void> remember(const json& entry, double now) {
    if (!entry.is_object() || !entry.contains("datetime") || !entry["datetime"].is_string()) {
      return fail(ErrorCode::kInvalidArgument, "an entry without a datetime");
    }
    auto at = parse_iso8601_utc(entry["datetime"].get<std::string>());
    if (!at) return tl::unexpected(at.error());
    const json& value = entry.value("carbonIntensity", json());
    if (!value.is_number()) return ok();  // Electricity Maps leaves gaps as null
    const double intensity = value.get<double>();
    if (!std::isfinite(intensity) || intensity < 0) {
      return fail(ErrorCode::kInvalidArgument,
                  "a carbon intensity of " + std::to_string(intensity) + " gCO2eq/kWh for " +
                      entry["datetime"].get<std::string>() + ", which no grid has");
    }
    hours_[hour_of(*at)] = intensity;
    fetched_at_[hour_of(*at)] = now;
    return ok();
  }

  Result<void> fetch(const std::string& what) {
    http::Headers headers{{"auth-token", options_.api_key}};
    auto body = client::online_json_answer(*client_, "Electricity Maps", url_.text,
                                           target(what), headers, "ELECTRICITYMAPS_API_KEY");
    if (!body) return tl::unexpected(body.error());
    const double now = clock_.unix_time_s();
    auto bad = [&](const std::string& why) {
      return fail(ErrorCode::kInvalidArgument,
                  "Electricity Maps' answer to " + what + " is not what its API sends (" + why +
                      ")");
    };
    if (what == "history") {
      if (!body->is_object() || !(*body)["history"].is_array()) return bad("no history list");
      for (const json& entry : (*body)["history"]) {
        if (auto kept = remember(entry, now); !kept) return bad(kept.error().message);
      }
    } else if (auto kept = remember(*body, now); !kept) {
      return bad(kept.error().message);
    }
    return ok();
  }

  ElectricityMapsOptions options_;
  client::ServerUrl url_;
  std::unique_ptr<http::HttpClient> client_;
  SystemClock clock_;
  std::map<double, double> hours_;       // hour start -> gCO2eq/kWh
  std::map<double, double> fetched_at_;  // hour start -> when its value was fetched
};

}  // namespace

Result<std::unique_ptr<IntensityProvider>> electricity_maps_provider(
    ElectricityMapsOptions options) {
  if (!(std::abs(options.latitude) <= 90) || !(std::abs(options.longitude) <= 180)) {
    return fail(ErrorCode::kInvalidArgument,
                "Electricity Maps: latitude must be within ±90 and longitude within ±180");
  }
  if (options.emission_factor_type != "direct" && options.emission_factor_type != "lifecycle") {
    return fail(ErrorCode::kInvalidArgument,
                "Electricity Maps: emission_factor_type must be 'direct' or 'lifecycle', not '" +
                    options.emission_factor_type + "'");
  }
  auto service = client::open_online_service(options.base_url, options.timeout_s,
                                             "ELECTRICITYMAPS_API_KEY", options.api_key);
  if (!service) return tl::unexpected(service.error());
  return std::unique_ptr<IntensityProvider>(std::make_unique<ElectricityMaps>(
      std::move(options), std::move(service->url), std::move(service->client)));
}

}  // namespace zeus
