// Carbon and cost of a simulated history: the recurrences are placed in time and their energy is
// charged over a carbon-intensity or price series (zeus simulate --carbon/--price).
//
// A RecurrenceScheduler decides when each recurrence starts; the default, FixedIntervalScheduler,
// starts recurrence i at start + i × interval (a recurrence that outlasts the interval overlaps
// the next one: recurrences are independent submissions). This is the hook for carbon-aware
// scheduling: a policy that delays a recurrence to a cleaner hour implements start_of() (it sees
// the recurrence's index and when the previous one ended) and is passed where the fixed one is;
// none is built yet.
// Within a recurrence its runs follow each other; each run's energy is charged at constant power
// over its own span (charge_constant_power, zeus/monitor/energy_charge.h), interval by interval.
// A time the provider has no value for (a gap in the series, past its end) makes the history's
// amount unknown, with the reason; it is never an error.
// Units: Unix seconds; amounts in the provider's unit without "/kWh" (gCO2eq, $).
// Thread-safety: schedulers are called concurrently (seeds run in parallel): start_of() is const
// and must not keep state across calls. charge_history() calls the provider's value_at(), which
// for the offline providers (series, constant) is safe from any thread.
//
//   zeus::sim::FixedIntervalScheduler daily(series->intervals().front().start_s, 86400);
//   auto grams = zeus::sim::charge_history(*history, daily, *series);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "zeus/monitor/intensity_provider.h"
#include "zeus/sim/simulator.h"

namespace zeus::sim {

class RecurrenceScheduler {
 public:
  virtual ~RecurrenceScheduler() = default;
  // The start (Unix s) of recurrence `index` (0-based); `previous_end_s` is when recurrence
  // index - 1 ended (NaN for the first). A carbon-aware policy plugs in here.
  virtual double start_of(int index, double previous_end_s) const = 0;
  // "every 24 h from 2022-10-20T06:20:00Z", for reports.
  virtual std::string describe() const = 0;
};

// Recurrence i starts at start_s + i × interval_s.
class FixedIntervalScheduler final : public RecurrenceScheduler {
 public:
  FixedIntervalScheduler(double start_s, double interval_s)
      : start_s_(start_s), interval_s_(interval_s) {}
  double start_of(int index, double previous_end_s) const override;
  std::string describe() const override;

 private:
  double start_s_;
  double interval_s_;
};

// One history's total amount under one provider.
struct HistoryCharge {
  bool complete = true;
  double amount = 0;           // valid when complete
  std::string unknown_reason;  // the first missing value's reason
  std::vector<double> recurrence_starts_s;  // when each recurrence started
};

// Charges every run of `history`: recurrence i at scheduler.start_of(i, ...), its runs one after
// another. Stops at the first missing value (complete = false).
HistoryCharge charge_history(const History& history, const RecurrenceScheduler& scheduler,
                             IntensityProvider& provider);

// What a headline run charges its histories with (ExperimentOptions::accounting): any of the two
// providers, or none; the scheduler is required when one is given.
struct ReplayAccounting {
  std::shared_ptr<IntensityProvider> carbon;  // gCO2eq/kWh
  std::shared_ptr<IntensityProvider> price;   // $/kWh
  std::shared_ptr<const RecurrenceScheduler> scheduler;
  bool enabled() const { return carbon != nullptr || price != nullptr; }
};

}  // namespace zeus::sim
