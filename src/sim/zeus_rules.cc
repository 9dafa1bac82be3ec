// The Zeus policy's named rule configurations (simulator.h): "zeus" and "upstream", with
// key=value overrides, and their canonical text.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "zeus/sim/simulator.h"

namespace zeus::sim {
namespace {

tl::unexpected<Error> bad(const std::string& message) {
  return fail(ErrorCode::kInvalidArgument, "Zeus rules: " + message);
}

Result<bool> parse_flag(std::string_view key, std::string_view value) {
  if (value == "1" || value == "true") return true;
  if (value == "0" || value == "false") return false;
  return bad(std::string(key) + "=" + std::string(value) + ": use 0 or 1");
}

}  // namespace

Result<ZeusRules> parse_zeus_rules(std::string_view text) {
  const size_t comma = text.find(',');
  const std::string_view preset = text.substr(0, comma);
  ZeusRules rules;
  if (preset == "upstream") {
    rules.early_stop = EarlyStopMode::kKnownEpochCost;
    rules.prune_factor.reset();
    rules.pruning_stop_after_rises = 0;
    rules.mab_min_relative_sd = 0.0;
    rules.upstream_bookkeeping = true;
  } else if (preset != "zeus") {
    return bad("unknown configuration '" + std::string(preset) +
               "'; use zeus or upstream, optionally followed by ,key=value overrides");
  }
  std::string_view rest = comma == std::string_view::npos ? "" : text.substr(comma + 1);
  while (!rest.empty()) {
    const size_t next = rest.find(',');
    const std::string_view part = rest.substr(0, next);
    rest = next == std::string_view::npos ? "" : rest.substr(next + 1);
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      return bad("'" + std::string(part) + "' is not key=value; use e.g. prune_factor=1.5");
    }
    const std::string_view key = part.substr(0, eq);
    const std::string value(part.substr(eq + 1));
    if (key == "early_stop") {
      if (!parse_early_stop_mode(value, &rules.early_stop)) {
        return bad("early_stop=" + value + ": use predictive, after-crossing or known-epoch-cost");
      }
    } else if (key == "stop_after_rises") {
      char* end = nullptr;
      const long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || n < 0 || n > 1000) {
        return bad("stop_after_rises=" + value + ": use a whole number >= 0 (0 = off)");
      }
      rules.pruning_stop_after_rises = static_cast<int>(n);
    } else if (key == "pruning_beta") {
      if (value == "off") {
        rules.pruning_beta.reset();
        continue;
      }
      char* end = nullptr;
      const double x = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(x >= 1.0 && std::isfinite(x))) {
        return bad("pruning_beta=" + value + ": use a number >= 1, or off");
      }
      rules.pruning_beta = x;
    } else if (key == "prune_factor") {
      if (value == "off") {
        rules.prune_factor.reset();
        continue;
      }
      char* end = nullptr;
      const double x = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(x >= 1.0 && std::isfinite(x))) {
        return bad("prune_factor=" + value + ": use a number >= 1, or off");
      }
      rules.prune_factor = x;
    } else if (key == "upstream_bookkeeping") {
      Result<bool> flag = parse_flag(key, value);
      if (!flag) return fail(flag.error());
      rules.upstream_bookkeeping = *flag;
    } else if (key == "mab_min_relative_sd") {
      char* end = nullptr;
      const double x = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(x >= 0.0 && std::isfinite(x))) {
        return bad("mab_min_relative_sd=" + value + ": use a number >= 0");
      }
      rules.mab_min_relative_sd = x;
    } else {
      return bad("unknown key '" + std::string(key) +
                 "'; use early_stop, prune_factor, pruning_beta, stop_after_rises, mab_min_relative_sd or upstream_bookkeeping");
    }
  }
  return rules;
}

std::string zeus_rules_text(const ZeusRules& rules) {
  char sd[32], factor[32], pbeta[32];
  std::snprintf(pbeta, sizeof pbeta, "%g", rules.pruning_beta.value_or(0.0));
  std::snprintf(sd, sizeof sd, "%g", rules.mab_min_relative_sd);
  std::snprintf(factor, sizeof factor, "%g", rules.prune_factor.value_or(0.0));
  return "early_stop=" + std::string(early_stop_mode_name(rules.early_stop)) +
         ",prune_factor=" + (rules.prune_factor ? std::string(factor) : std::string("off")) +
         ",pruning_beta=" + (rules.pruning_beta ? std::string(pbeta) : std::string("off")) +
         ",stop_after_rises=" + std::to_string(rules.pruning_stop_after_rises) +
         ",mab_min_relative_sd=" + sd +
         ",upstream_bookkeeping=" + (rules.upstream_bookkeeping ? "1" : "0");
}

}  // namespace zeus::sim
