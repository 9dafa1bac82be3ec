#include "zeus/monitor/counter_update_period.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "zeus/common/log.h"

namespace zeus {
namespace {

constexpr double kMaxPollPeriodS = 0.1;
constexpr double kSlowPollWarningS = 0.05;
constexpr double kFastPollWarningS = 0.001;

std::string format_s(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", seconds);
  return text;
}

}  // namespace

std::optional<double> fastest_change_interval_s(const std::vector<CounterReading>& readings) {
  std::optional<double> fastest_s;
  std::optional<double> last_change_s;
  for (size_t i = 1; i < readings.size(); ++i) {
    if (readings[i].power_mw == readings[i - 1].power_mw) continue;
    const double change_s = readings[i].time_s;
    if (last_change_s) {
      const double interval_s = change_s - *last_change_s;
      if (!fastest_s || interval_s < *fastest_s) fastest_s = interval_s;
    }
    last_change_s = change_s;
  }
  return fastest_s;
}

double poll_period_from_interval_s(std::optional<double> fastest_interval_s) {
  if (!fastest_interval_s || !(*fastest_interval_s > 0)) return kMaxPollPeriodS / 2;
  return std::min(*fastest_interval_s / 2, kMaxPollPeriodS);
}

std::optional<std::string> poll_period_warning(double period_s) {
  if (period_s < kFastPollWarningS) {
    return "a power poll period of " + format_s(period_s) +
           " s is below 1 ms: the sampling thread will do little but read the driver, whose "
           "counters update every few tens of ms; use >= 0.05 s (or leave the period unset to "
           "infer it)";
  }
  if (period_s < kSlowPollWarningS) {
    return "a power poll period of " + format_s(period_s) +
           " s might be too fast: readings can repeat, fail with NotSupported or read 0; if you "
           "see that, use >= 0.05 s";
  }
  return std::nullopt;
}

Result<std::optional<double>> probe_fastest_change_interval_s(Gpu& gpu, PowerDomain domain,
                                                              Clock& clock,
                                                              const CounterProbeOptions& options) {
  std::vector<CounterReading> readings;
  const double start_s = clock.now_s();
  int changes = 0;
  while (clock.now_s() - start_s < options.max_duration_s) {
    auto power_mw = read_power_mw(gpu, domain);
    if (!power_mw) return fail(power_mw.error());
    const double time_s = clock.now_s();
    if (!readings.empty() && readings.back().power_mw != *power_mw) ++changes;
    readings.push_back({time_s, *power_mw});
    if (changes > options.intervals_wanted) break;
    if (options.spacing_s > 0) clock.sleep_for_s(options.spacing_s);
  }
  return fastest_change_interval_s(readings);
}

double infer_poll_period_s(const std::vector<Gpu*>& gpus, Clock& clock, PowerDomain domain,
                           const CounterProbeOptions& options) {
  std::set<std::string> models;
  std::optional<double> fastest_s;
  for (Gpu* gpu : gpus) {
    if (!models.insert(gpu->name()).second) continue;
    auto interval_s = probe_fastest_change_interval_s(*gpu, domain, clock, options);
    if (!interval_s) {
      log_info("inferring the power counter's update period: " + interval_s.error().to_string());
      continue;
    }
    log_info("power counter of " + gpu->name() + ": fastest change interval " +
             (*interval_s ? format_s(**interval_s) + " s" : std::string("not seen")));
    if (*interval_s && (!fastest_s || **interval_s < *fastest_s)) fastest_s = *interval_s;
  }
  return poll_period_from_interval_s(fastest_s);
}

}  // namespace zeus
