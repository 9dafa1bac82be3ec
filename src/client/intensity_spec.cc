// intensity_provider_from_spec (zeus/client/online_intensity.h): the CLI's and Python's provider
// names.
#include <cstdlib>
#include <sstream>

#include "zeus/client/online_intensity.h"

namespace zeus {
namespace {

Error bad_spec(const std::string& spec, const std::string& why) {
  return Error{ErrorCode::kInvalidArgument,
               "provider '" + spec + "' " + why +
                   "; the forms are csv:FILE[:LOCATION], const:VALUE, electricitymaps:LAT,LON and "
                   "openei:LAT,LON,LABEL"};
}

// "42.28,-83.74[,rest]" -> numbers (and the rest).
bool split_coordinates(const std::string& text, double& lat, double& lon, std::string* rest) {
  std::istringstream in(text);
  std::string a, b;
  if (!std::getline(in, a, ',') || !std::getline(in, b, rest ? ',' : '\n')) return false;
  if (rest && !std::getline(in, *rest)) return false;
  char* end = nullptr;
  lat = std::strtod(a.c_str(), &end);
  if (a.empty() || *end != '\0') return false;
  lon = std::strtod(b.c_str(), &end);
  return !b.empty() && *end == '\0';
}

std::string environment(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

}  // namespace

Result<std::unique_ptr<IntensityProvider>> intensity_provider_from_spec(const std::string& spec,
                                                                      const std::string& csv_unit) {
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) return tl::unexpected(bad_spec(spec, "names no provider"));
  const std::string kind = spec.substr(0, colon);
  const std::string rest = spec.substr(colon + 1);
  if (kind == "csv" || kind == "const") return offline_intensity_provider_from_spec(spec, csv_unit);
  if (kind == "electricitymaps") {
    ElectricityMapsOptions options;
    if (!split_coordinates(rest, options.latitude, options.longitude, nullptr)) {
      return tl::unexpected(bad_spec(spec, "needs LAT,LON"));
    }
    options.base_url = environment("ZEUS_ELECTRICITYMAPS_URL", options.base_url);
    return electricity_maps_provider(std::move(options));
  }
  if (kind == "openei") {
    OpenEIOptions options;
    if (!split_coordinates(rest, options.latitude, options.longitude, &options.label)) {
      return tl::unexpected(bad_spec(spec, "needs LAT,LON,LABEL"));
    }
    options.base_url = environment("ZEUS_OPENEI_URL", options.base_url);
    return openei_provider(std::move(options));
  }
  return tl::unexpected(bad_spec(spec, "names an unknown provider '" + kind + "'"));
}

}  // namespace zeus
