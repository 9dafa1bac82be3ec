// The OpenEI utility-rate provider (zeus/client/online_intensity.h).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>

#include "client/online_answer.h"
#include "client/online_service.h"
#include "client/server_url.h"
#include "zeus/client/online_intensity.h"

namespace zeus {
namespace {

using nlohmann::json;

// A month x hour table of period indices (12 x 24).
using Schedule = std::vector<std::vector<int>>;

Result<Schedule> read_schedule(const json& table, const char* name) {
  auto bad = [&] {
    return fail(ErrorCode::kInvalidArgument,
                std::string("OpenEI's ") + name + " is not 12 months x 24 hours of period numbers");
  };
  if (!table.is_array() || table.size() != 12) return bad();
  Schedule out;
  for (const json& month : table) {
    if (!month.is_array() || month.size() != 24) return bad();
    std::vector<int> hours;
    for (const json& period : month) {
      if (!period.is_number_integer() || period.get<int>() < 0) return bad();
      hours.push_back(period.get<int>());
    }
    out.push_back(std::move(hours));
  }
  return out;
}

class OpenEI final : public IntensityProvider {
 public:
  OpenEI(OpenEIOptions options, client::ServerUrl url, std::unique_ptr<http::HttpClient> client)
      : options_(std::move(options)), url_(std::move(url)), client_(std::move(client)) {}

  std::string unit() const override { return "$/kWh"; }
  // The next local top of the hour.
  double next_boundary_after(double unix_s) const override {
    const time_t t = static_cast<time_t>(std::floor(unix_s));
    std::tm local{};
    localtime_r(&t, &local);
    return static_cast<double>(t - local.tm_min * 60 - local.tm_sec + 3600);
  }
  std::string describe() const override { return "OpenEI rate " + options_.label; }

  Result<double> value_at(double unix_s) override {
    if (!rates_) ZEUS_TRY(fetch());
    const time_t t = static_cast<time_t>(std::floor(unix_s));
    std::tm local{};
    localtime_r(&t, &local);
    const bool weekend = local.tm_wday == 0 || local.tm_wday == 6;
    const int period = (weekend ? weekend_ : weekday_)[local.tm_mon][local.tm_hour];
    if (period >= static_cast<int>(rates_->size())) {
      return fail(ErrorCode::kInvalidArgument,
                  describe() + ": the schedule names period " + std::to_string(period) +
                      ", which energyratestructure lacks");
    }
    return (*rates_)[period];
  }

 private:
  Result<void> fetch() {
    const std::string target =
        url_.path_prefix + "/utility_rates?version=latest&format=json&detail=full" +
        "&lat=" + client::percent_encode(std::to_string(options_.latitude)) +
        "&lon=" + client::percent_encode(std::to_string(options_.longitude)) +
        "&radius=" + std::to_string(options_.radius_miles) + "&sector=" + options_.sector +
        "&api_key=" + client::percent_encode(options_.api_key);
    auto body = client::online_json_answer(*client_, "OpenEI", url_.text, target, {},
                                           "OPENEI_API_KEY");
    if (!body) return tl::unexpected(body.error());
    auto not_openei = [&](const std::string& why) {
      return fail(ErrorCode::kInvalidArgument,
                  "OpenEI at " + url_.text +
                      " answered JSON that is not what its utility_rates API sends (" + why +
                      "): check that the URL (ZEUS_OPENEI_URL) is OpenEI's API");
    };
    // json::value() throws on a non-object: a bare 42 or [] stops here.
    if (!body->is_object()) return not_openei("not an object");
    if (body->contains("error")) {
      return fail(ErrorCode::kPermissionDenied,
                  "OpenEI refused the request: " + (*body)["error"].dump() +
                      " (is OPENEI_API_KEY set to a valid key?)");
    }
    const json& items = body->value("items", json::array());
    if (!items.is_array()) return not_openei("no items list");
    for (const json& item : items) {
      if (!item.is_object()) return not_openei("an item that is not an object");
      const json& label = item.value("label", json());
      if (!label.is_string()) return not_openei("an item without a label");
      if (label.get<std::string>() != options_.label) continue;
      auto weekday = read_schedule(item.value("energyweekdayschedule", json()),
                                   "energyweekdayschedule");
      if (!weekday) return tl::unexpected(weekday.error());
      auto weekend = read_schedule(item.value("energyweekendschedule", json()),
                                   "energyweekendschedule");
      if (!weekend) return tl::unexpected(weekend.error());
      const json& structure = item.value("energyratestructure", json());
      std::vector<double> rates;
      for (const json& period : structure.is_array() ? structure : json::array()) {
        if (!period.is_array() || period.empty() || !period[0].is_object() ||
            !period[0].value("rate", json()).is_number()) {
          return fail(ErrorCode::kInvalidArgument,
                      "OpenEI's energyratestructure for " + options_.label +
                          " has a period without a first tier's rate");
        }
        const double rate = period[0]["rate"].get<double>();
        if (!std::isfinite(rate) || rate < 0) {
          return fail(ErrorCode::kInvalidArgument,
                      "OpenEI's energyratestructure for " + options_.label + " has a rate of " +
                          std::to_string(rate) + " per kWh, which no tariff has");
        }
        rates.push_back(rate);
      }
      if (rates.empty()) {
        return fail(ErrorCode::kNotFound, "OpenEI rate " + options_.label + " has no energy rates");
      }
      weekday_ = std::move(*weekday);
      weekend_ = std::move(*weekend);
      rates_ = std::move(rates);
      return ok();
    }
    return fail(ErrorCode::kNotFound, "OpenEI has no rate labelled " + options_.label + " within " +
                                          std::to_string(options_.radius_miles) +
                                          " miles of the location (sector " + options_.sector + ")");
  }

  OpenEIOptions options_;
  client::ServerUrl url_;
  std::unique_ptr<http::HttpClient> client_;
  std::optional<std::vector<double>> rates_;  // $/kWh per period
  Schedule weekday_, weekend_;
};

}  // namespace

Result<std::unique_ptr<IntensityProvider>> openei_provider(OpenEIOptions options) {
  if (!(std::abs(options.latitude) <= 90) || !(std::abs(options.longitude) <= 180)) {
    return fail(ErrorCode::kInvalidArgument,
                "OpenEI: latitude must be within ±90 and longitude within ±180");
  }
  if (options.label.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "OpenEI: give the rate's label (find it at apps.openei.org/USURDB)");
  }
  static const char* kSectors[] = {"Residential", "Commercial", "Industrial", "Lighting"};
  if (std::find(std::begin(kSectors), std::end(kSectors), options.sector) == std::end(kSectors)) {
    return fail(ErrorCode::kInvalidArgument,
                "OpenEI: sector must be Residential, Commercial, Industrial or Lighting, not '" +
                    options.sector + "'");
  }
  if (options.radius_miles < 0) {
    return fail(ErrorCode::kInvalidArgument, "OpenEI: the radius must not be negative");
  }
  auto service = client::open_online_service(options.base_url, options.timeout_s, "OPENEI_API_KEY",
                                             options.api_key);
  if (!service) return tl::unexpected(service.error());
  return std::unique_ptr<IntensityProvider>(std::make_unique<OpenEI>(
      std::move(options), std::move(service->url), std::move(service->client)));
}

}  // namespace zeus
