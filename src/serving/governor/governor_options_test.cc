// GovernorOptions::validate, the one check of the governor's knobs: the defaults pass, each knob
// out of its range is refused naming itself (by the caller's name when given one), and the
// quantile's range is (0.5, 1), the same for both commands.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "zeus/serving/serving_governor.h"

namespace zeus {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The message of validate()'s refusal ("" when it accepts).
std::string refusal(const GovernorOptions& options,
                    std::span<const GovernorOptions::KnobName> names = {}) {
  Result<void> valid = options.validate(names);
  if (valid) return "";
  EXPECT_EQ(valid.error().code, ErrorCode::kInvalidArgument);
  return valid.error().message;
}

TEST(GovernorOptionsTest, TheDefaultsAndTheEdgesInsideTheRangesPass) {
  EXPECT_EQ(refusal(GovernorOptions{}), "");
  EXPECT_EQ(refusal({.quantile = 0.9999, .headroom = 1, .alarm = 1, .hold_s = 0,
                     .max_samples = GovernorOptions::kFewestSamples}),
            "");
  EXPECT_EQ(refusal({.headroom = 10, .budget_window_s = 86400, .hold_s = 3600, .window_s = 86400,
                     .load_tau_s = 3600, .max_samples = 100000}),
            "");
}

// What validate() says of `options` and what create() says: the same words, which begin with the
// knob's name and say its value and its range.
void expect_refused_naming(const GovernorOptions& options, const std::string& field) {
  const std::string message = refusal(options);
  EXPECT_EQ(message.rfind(field + " is ", 0), 0u) << field << ": " << message;
  EXPECT_NE(message.find("; "), std::string::npos) << message;
  auto governor = ServingGovernor::create(ServingProfile::parametric_h100(), options);
  ASSERT_FALSE(governor.has_value()) << field;
  EXPECT_EQ(governor.error().message, message);
}

TEST(GovernorOptionsTest, EachKnobOutOfItsRangeIsRefusedNamingItself) {
  struct Knob {
    const char* field;
    double GovernorOptions::*member;
    std::vector<double> bad;
  };
  const Knob knobs[] = {
      {"ttft_slo_s", &GovernorOptions::ttft_slo_s, {0, -1, kInf, kNan}},
      {"tpot_slo_s", &GovernorOptions::tpot_slo_s, {0, -0.1, kInf}},
      {"quantile", &GovernorOptions::quantile, {0.5, 0.3, 1, kNan}},
      {"headroom", &GovernorOptions::headroom, {0.9, 11}},
      {"budget_window_s", &GovernorOptions::budget_window_s, {0, 86401}},
      {"alarm", &GovernorOptions::alarm, {0, 1.1}},
      {"hold_s", &GovernorOptions::hold_s, {-0.1, kNan}},
      {"window_s", &GovernorOptions::window_s, {0, kInf}},
      {"load_tau_s", &GovernorOptions::load_tau_s, {0, 3601}},
  };
  for (const Knob& knob : knobs) {
    for (double value : knob.bad) {
      GovernorOptions options;
      options.*knob.member = value;
      expect_refused_naming(options, knob.field);
    }
  }
  for (size_t samples : {size_t{0}, size_t{4}, size_t{100001}}) {
    GovernorOptions options;
    options.max_samples = samples;
    expect_refused_naming(options, "max_samples");
  }
}

TEST(GovernorOptionsTest, TheCallersNamesReplaceTheFieldsInTheMessage) {
  const GovernorOptions::KnobName flags[] = {{"quantile", "--slo-quantile"},
                                             {"ttft_slo_s", "--ttft-slo"}};
  GovernorOptions options;
  options.quantile = 0.3;
  EXPECT_EQ(refusal(options, flags),
            "--slo-quantile is 0.3; it must be above 0.5 and below 1, e.g. 0.99 (the SLOs bound a "
            "tail of the latencies: a governor holding the median or a lower quantile under them "
            "would leave half the requests or more over them)");
  options = GovernorOptions{};
  options.ttft_slo_s = -2;
  EXPECT_EQ(refusal(options, flags).rfind("--ttft-slo is -2; ", 0), 0u);
  // A field the table does not list keeps its own name.
  options = GovernorOptions{};
  options.alarm = 2;
  EXPECT_EQ(refusal(options, flags).rfind("alarm is 2; ", 0), 0u);
}

}  // namespace
}  // namespace zeus
