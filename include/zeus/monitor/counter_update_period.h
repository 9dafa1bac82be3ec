// The update period of a GPU's power counter, and how often to poll it.
//
// A driver refreshes its power readings every so often (tens of ms; ~100 ms on many NVIDIA
// GPUs): polling faster only repeats values. The poll period is inferred by reading the counter
// back to back for a short while, taking the fastest interval between two changes of the
// reading, and halving it (two polls per update), capped at 0.1 s; a counter that never changed
// while probed gets half of 0.1 s, as Zeus does. The rules (fastest_change_interval_s,
// poll_period_from_interval_s, poll_period_warning) are pure; probe_fastest_change_interval_s
// and infer_poll_period_s read the GPUs on a Clock.
// Units: seconds, mW. Thread-safety: reentrant; the probes block for up to max_duration_s per
// GPU model. Failure: a GPU whose readings fail is skipped when another model answers.
//
//   auto period_s = zeus::infer_poll_period_s({gpu}, clock, zeus::PowerDomain::kDeviceInstant);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zeus/common/clock.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"
#include "zeus/monitor/power_domain.h"

namespace zeus {

// One probe reading.
struct CounterReading {
  double time_s = 0.0;
  uint32_t power_mw = 0;
};

// The shortest time between two consecutive changes of the reading; nullopt with fewer than
// two changes. Readings are in time order.
std::optional<double> fastest_change_interval_s(const std::vector<CounterReading>& readings);

// Half the fastest change interval, at most 0.1 s; 0.05 s when no interval was seen.
double poll_period_from_interval_s(std::optional<double> fastest_interval_s);

// A warning for a poll period that is too short (below 50 ms: readings may repeat, fail with
// NotSupported or read 0; below 1 ms: the sampling thread does little but read); nullopt when
// the period is fine.
std::optional<std::string> poll_period_warning(double period_s);

struct CounterProbeOptions {
  // Longest probe of one GPU; it ends sooner once `intervals_wanted` change intervals are seen.
  double max_duration_s = 0.5;
  // Pause between two readings (the interval's resolution).
  double spacing_s = 0.0005;
  int intervals_wanted = 3;
};

// Reads `domain` of `gpu` back to back on `clock` and returns fastest_change_interval_s of the
// readings (nullopt: fewer than two changes while probed). Fails with the first failed read.
Result<std::optional<double>> probe_fastest_change_interval_s(
    Gpu& gpu, PowerDomain domain, Clock& clock, const CounterProbeOptions& options = {});

// The poll period for `gpus`: one probe per distinct GPU model (name), the fastest interval of
// all, through poll_period_from_interval_s. A GPU whose probe fails counts as no change seen.
double infer_poll_period_s(const std::vector<Gpu*>& gpus, Clock& clock, PowerDomain domain,
                           const CounterProbeOptions& options = {});

}  // namespace zeus
