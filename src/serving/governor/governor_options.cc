// GovernorOptions::validate (zeus/serving/serving_governor.h): the one check of the governor's
// knobs,
// for `zeus proxy --govern`, `zeus simulate serving` and ServingGovernor::create alike.
#include <cmath>
#include <cstdio>
#include <string>

#include "zeus/serving/serving_governor.h"

namespace zeus {
namespace {

// One knob's rule: its field, its value, whether the value is in range, the range in words.
struct KnobRule {
  std::string_view field;
  double value;
  bool ok;
  const char* range;
};

std::string knob_value_text(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

}  // namespace

Result<void> GovernorOptions::validate(std::span<const KnobName> names) const {
  // Written so that NaN fails every rule (each comparison with NaN is false).
  auto within = [](double v, double low, double high) { return v >= low && v <= high; };
  const double samples = static_cast<double>(max_samples);
  const KnobRule rules[] = {
      {"ttft_slo_s", ttft_slo_s, ttft_slo_s > 0 && std::isfinite(ttft_slo_s),
       "an SLO must be a positive, finite number of seconds"},
      {"tpot_slo_s", tpot_slo_s, tpot_slo_s > 0 && std::isfinite(tpot_slo_s),
       "an SLO must be a positive, finite number of seconds"},
      {"quantile", quantile, quantile > 0.5 && quantile < 1,
       "it must be above 0.5 and below 1, e.g. 0.99 (the SLOs bound a tail of the latencies: a "
       "governor holding the median or a lower quantile under them would leave half the requests "
       "or more over them)"},
      {"headroom", headroom, within(headroom, 1, 10),
       "it must be from 1 (predictions held under the SLOs) to 10"},
      {"budget_window_s", budget_window_s, budget_window_s > 0 && budget_window_s <= 86400,
       "it must be above 0 s and at most a day (86400 s)"},
      {"alarm", alarm, alarm > 0 && alarm <= 1,
       "it must be above 0 and at most 1 (a share of the SLO)"},
      {"hold_s", hold_s, within(hold_s, 0, 3600), "it must be from 0 to 3600 s"},
      {"window_s", window_s, window_s > 0 && window_s <= 86400,
       "it must be above 0 s and at most a day (86400 s)"},
      {"load_tau_s", load_tau_s, load_tau_s > 0 && load_tau_s <= 3600,
       "it must be above 0 s and at most 3600 s"},
      {"max_samples", samples, within(samples, kFewestSamples, 100000),
       "it must be from 5 (the fewest latencies a quantile is read from) to 100,000"},
  };
  static_assert(kFewestSamples == 5, "max_samples' range above says 5");
  for (const KnobRule& rule : rules) {
    if (rule.ok) continue;
    std::string_view name = rule.field;
    for (const KnobName& known : names) {
      if (known.field == rule.field) name = known.shown;
    }
    return fail(ErrorCode::kInvalidArgument,
                std::string(name) + " is " + knob_value_text(rule.value) + "; " + rule.range);
  }
  return ok();
}

}  // namespace zeus
