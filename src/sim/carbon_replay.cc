// The recurrences' times and their charging over a series (zeus/sim/sim_carbon.h).
#include <cmath>
#include <cstdio>
#include <limits>

#include "zeus/monitor/energy_charge.h"
#include "zeus/sim/sim_carbon.h"

namespace zeus::sim {

double FixedIntervalScheduler::start_of(int index, double /*previous_end_s*/) const {
  return start_s_ + index * interval_s_;
}

std::string FixedIntervalScheduler::describe() const {
  char hours[32];
  std::snprintf(hours, sizeof hours, "%g", interval_s_ / 3600);
  return std::string("every ") + hours + " h from " + format_iso8601_utc(start_s_);
}

HistoryCharge charge_history(const History& history, const RecurrenceScheduler& scheduler,
                             IntensityProvider& provider) {
  HistoryCharge out;
  out.recurrence_starts_s.reserve(history.recurrences.size());
  double previous_end = std::numeric_limits<double>::quiet_NaN();
  std::size_t run = 0;
  for (std::size_t i = 0; i < history.recurrences.size(); ++i) {
    const double start = scheduler.start_of(static_cast<int>(i), previous_end);
    out.recurrence_starts_s.push_back(start);
    double at = start;
    for (; run < history.runs.size() && history.runs[run].recurrence == static_cast<int>(i); ++run) {
      const RunRecord& r = history.runs[run];
      if (out.complete) {
        auto charged = charge_constant_power(provider, at, r.time_s, r.energy_j);
        if (!charged) {
          out.complete = false;
          out.unknown_reason = charged.error().message;
        } else if (!charged->complete) {
          out.complete = false;
          out.unknown_reason = charged->unknown_reason;
        } else {
          out.amount += charged->total();
        }
      }
      at += r.time_s;
    }
    previous_end = at;
  }
  if (!out.complete) out.amount = 0;
  return out;
}

}  // namespace zeus::sim
