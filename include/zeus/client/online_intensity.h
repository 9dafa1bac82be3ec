// Online IntensityProviders (intensity_provider.h): grid carbon intensity from Electricity Maps
// and electricity prices from OpenEI's utility-rate database, as Zeus's ElectrictyMapsClient and
// OpenEIClient provide them, over the project's HTTP client.
//
// Electricity Maps: hourly values (boundaries on the UTC hour), from
// GET {base_url}/v3/carbon-intensity/history?lat=..&lon=..&disableEstimations=..&emissionFactorType=..
// (the last 24 hours) and /v3/carbon-intensity/latest for the current hour, with the API key in
// the `auth-token` header (from ELECTRICITYMAPS_API_KEY unless given). Answers are cached: a past
// hour is asked for once, the current hour again after `cache_s`.
// OpenEI: GET {base_url}/utility_rates?version=latest&format=json&detail=full&lat=..&lon=..&
// radius=..&sector=..&api_key=.. (OPENEI_API_KEY unless given), once; the rate of `label` is its
// energyratestructure's first tier of the period that energyweekdayschedule /
// energyweekendschedule give for the month and hour, in the machine's local time (as upstream:
// tiers and adjustments are not applied), so boundaries fall on the local hour.
// Failure: every value_at() failure names the service and the fix: Unavailable (unreachable,
// timeout, 5xx), PermissionDenied (401/403: the key), NotFound (no value for that hour, no such
// label), InvalidArgument (an answer that is not the service's JSON). The accounting monitor turns
// them into an unknown amount; the window is still measured.
// Thread-safety: one thread at a time (the monitor's end_window).
//
//   zeus::ElectricityMapsOptions o;
//   o.latitude = 42.28; o.longitude = -83.74;
//   auto provider = zeus::electricity_maps_provider(o);
#pragma once

#include <memory>
#include <string>

#include "zeus/common/result.h"
#include "zeus/monitor/intensity_provider.h"

namespace zeus {

struct ElectricityMapsOptions {
  double latitude = 0;
  double longitude = 0;
  bool estimate = false;                          // allow Electricity Maps' estimated values
  std::string emission_factor_type = "direct";    // or "lifecycle"
  std::string api_key;                            // empty: ELECTRICITYMAPS_API_KEY
  std::string base_url = "https://api.electricitymap.org";
  double timeout_s = 10;
  double cache_s = 300;                           // how long the current hour's value is kept
};

struct OpenEIOptions {
  double latitude = 0;
  double longitude = 0;
  std::string label;                  // the rate's OpenEI label
  std::string sector = "Residential";  // Residential, Commercial, Industrial, Lighting
  int radius_miles = 0;
  std::string api_key;                 // empty: OPENEI_API_KEY
  std::string base_url = "https://api.openei.org";
  double timeout_s = 10;
};

// InvalidArgument for a latitude/longitude out of range, an unknown emission factor type or
// sector, an empty label, a base URL that is not http:// or https:// (https: the certificate is
// checked against the system's CAs plus the PEM file ZEUS_CA_FILE names; an unreadable one is
// InvalidArgument here, a certificate that fails shows in value_at's error).
Result<std::unique_ptr<IntensityProvider>> electricity_maps_provider(ElectricityMapsOptions options);
Result<std::unique_ptr<IntensityProvider>> openei_provider(OpenEIOptions options);

// "csv:FILE[:LOCATION]", "const:VALUE", "electricitymaps:LAT,LON", "openei:LAT,LON,LABEL": the
// CLI's and the Python helpers' way to name a provider; a CSV's or constant's values are per kWh in
// `csv_unit` (the first two are offline_intensity_provider_from_spec's, intensity_provider.h).
// InvalidArgument naming the accepted forms.
Result<std::unique_ptr<IntensityProvider>> intensity_provider_from_spec(
    const std::string& spec, const std::string& csv_unit = "gCO2eq/kWh");

}  // namespace zeus
