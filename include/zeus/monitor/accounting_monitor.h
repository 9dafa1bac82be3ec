// AccountingMonitor: energy windows charged at a time-varying rate per kWh — carbon emissions
// (gCO2eq, Zeus's CarbonEmissionMonitor) or electricity cost ($, Zeus's EnergyCostMonitor).
//
// A window is measured as by EnergyMonitor, and split into parts wherever the provider's value may
// change (IntensityProvider::next_boundary_after): a background thread wakes at each boundary and
// ends the open windows' current parts there. At end_window each part is charged at the value of
// the interval it began in: amount = energy (J) / 3.6e6 × value per kWh, per GPU, CPU package and
// DRAM. A window that spans hours is thus charged interval by interval, never at one average.
// (Precisely: each device's window energy times its parts' energy-weighted mean rate, so the
// amount matches the reported energy even where counter resolution makes the parts' sum differ
// from it by a few millijoules.)
// When a part's value cannot be had (a gap in a CSV, a provider down, a 401), the window is still
// measured and returned, with its amounts left out and `complete = false` and the reason; the
// training loop never fails because of accounting.
// Thread-safety: one thread at a time calls the window methods (as EnergyMonitor); the boundary
// thread synchronises with them. Failure: as EnergyMonitor's begin/end.
//
//   auto carbon = zeus::load_intensity_csv("carbon.csv", "MISO_MASON_CITY");
//   auto monitor = zeus::AccountingMonitor::create(devices, clock, std::move(*carbon), {});
//   (*monitor)->begin_window("epoch");
//   train();
//   auto m = (*monitor)->end_window("epoch");  // m->energy.gpu_energy_j, m->gpu[0] grams
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/monitor/energy_monitor.h"
#include "zeus/monitor/intensity_provider.h"

namespace zeus {

// One part of a window: its time span (Unix seconds), its energy and the rate it was charged.
struct AccountedPart {
  double start_s = 0;
  double end_s = 0;
  Measurement energy;
  std::optional<double> value;  // per kWh; nullopt when the provider had none
};

struct AccountedMeasurement {
  Measurement energy;  // the whole window, as EnergyMonitor measures it
  std::string unit;    // the provider's unit per kWh ("gCO2eq/kWh" -> amounts in gCO2eq)
  // Energy × value per device (framework GPU index, RAPL package); empty when !complete.
  std::map<int, double> gpu;
  std::map<int, double> cpu;
  std::map<int, double> dram;
  bool complete = true;
  std::string unknown_reason;  // why some part has no value
  std::vector<AccountedPart> parts;
  // The GPUs' amounts (as Measurement::total_energy_j counts GPUs); the CPU packages' and DRAM's
  // are in cpu and dram.
  double gpu_total() const;
  // Every device's amount.
  double total() const;
};

// The pure core: charges each part at its value. `values[i]` is part i's value per kWh, or the
// reason it is missing.
AccountedMeasurement account_window(const Measurement& whole, std::vector<AccountedPart> parts,
                                    const std::vector<Result<double>>& values,
                                    const std::string& unit);

struct AccountingMonitorOptions {
  EnergyMonitorOptions monitor{};
  // false (tests on a FakeClock): nothing splits parts but split_due_parts() and the window calls.
  bool start_boundary_thread = true;
};

class AccountingMonitor {
 public:
  static Result<std::unique_ptr<AccountingMonitor>> create(
      Devices& devices, Clock& clock, std::shared_ptr<IntensityProvider> provider,
      AccountingMonitorOptions options);
  virtual ~AccountingMonitor() = default;

  virtual Result<void> begin_window(std::string_view name, bool sync = true) = 0;
  // Ends the window; the provider is asked for each part's value here (outside the lock).
  virtual Result<AccountedMeasurement> end_window(std::string_view name, bool sync = true) = 0;
  // Ends the current part of every open window whose part has passed a boundary (the boundary
  // thread calls it; with a FakeClock, tests call it at the boundary times).
  virtual void split_due_parts() = 0;
  virtual const std::vector<int>& gpu_indices() const = 0;
  virtual const std::vector<int>& cpu_indices() const = 0;
  virtual IntensityProvider& provider() = 0;
};

}  // namespace zeus
