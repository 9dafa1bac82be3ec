#include "serving_profile_file.h"

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

namespace zeus::cli {
namespace {

constexpr const char* kFormat = "zeus-serving-profile/1";
using nlohmann::json;

}  // namespace

std::string serving_profile_json(const proxy::CalibrationRun& run,
                                 const proxy::CalibrateOptions& options,
                                 const ServingProfile& profile) {
  json points = json::array();
  for (const ServingCalibrationPoint& p : run.points) {
    points.push_back({{"clock_mhz", p.clock_mhz},
                      {"concurrency", p.concurrency},
                      {"requests", p.requests},
                      {"tokens_per_s", p.tokens_per_s},
                      {"ttft_p50_s", p.ttft_p50_s},
                      {"ttft_p99_s", p.ttft_p99_s},
                      {"tpot_p50_s", p.tpot_p50_s},
                      {"tpot_p99_s", p.tpot_p99_s},
                      {"power_w", p.power_w},
                      {"j_per_token", p.j_per_token}});
  }
  const json out = {{"format", kFormat},
                    {"gpu", run.gpu_name},
                    {"upstream", options.upstream.text},
                    {"load",
                     {{"prompt_tokens", options.prompt_tokens},
                      {"output_tokens", options.output_tokens},
                      {"seconds_per_point", options.seconds}}},
                    {"idle_w", run.idle_w},
                    {"points", std::move(points)},
                    {"profile",
                     {{"clocks_mhz", profile.clocks_mhz},
                      {"prefill_s_per_token", profile.prefill_s_per_token},
                      {"decode_s_per_seq", profile.decode_s_per_seq},
                      {"memory_s", profile.memory_s},
                      {"kv_s_per_token", profile.kv_s_per_token},
                      {"base_w", profile.base_w},
                      {"compute_w", profile.compute_w},
                      {"memory_w", profile.memory_w},
                      {"idle_w", profile.idle_w},
                      {"prefill_chunk_tokens", profile.prefill_chunk_tokens}}}};
  return out.dump(1) + "\n";
}

Result<ServingProfile> read_serving_profile(const std::filesystem::path& path) {
  const std::string where = "--serving-profile " + path.string();
  std::ifstream file(path);
  if (!file) {
    return fail(ErrorCode::kNotFound,
                where + ": cannot read it (make one with zeus proxy calibrate --out FILE)");
  }
  std::stringstream text;
  text << file.rdbuf();
  const json doc = json::parse(text.str(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("format", "") != kFormat ||
      !doc.contains("profile") || !doc["profile"].is_object()) {
    return fail(ErrorCode::kInvalidArgument, where + ": not a serving profile (\"format\": \"" +
                                                 kFormat + "\", written by zeus proxy calibrate)");
  }
  const json& p = doc["profile"];
  ServingProfile profile;
  try {
    profile.clocks_mhz = p.at("clocks_mhz").get<std::vector<double>>();
    profile.prefill_s_per_token = p.at("prefill_s_per_token").get<double>();
    profile.decode_s_per_seq = p.at("decode_s_per_seq").get<double>();
    profile.memory_s = p.at("memory_s").get<double>();
    profile.kv_s_per_token = p.value("kv_s_per_token", 0.0);
    profile.base_w = p.at("base_w").get<double>();
    profile.compute_w = p.at("compute_w").get<double>();
    profile.memory_w = p.at("memory_w").get<double>();
    profile.idle_w = p.value("idle_w", profile.idle_w);
    profile.prefill_chunk_tokens = p.value("prefill_chunk_tokens", profile.prefill_chunk_tokens);
  } catch (const json::exception& error) {
    return fail(ErrorCode::kInvalidArgument, where + ": " + error.what());
  }
  // Highest first, as the profile's users read it (a hand-written one may list them ascending).
  std::sort(profile.clocks_mhz.begin(), profile.clocks_mhz.end(), std::greater<double>());
  if (Result<void> valid = profile.validate(); !valid) {
    return fail(ErrorCode::kInvalidArgument, where + ": " + valid.error().message);
  }
  return profile;
}

}  // namespace zeus::cli
