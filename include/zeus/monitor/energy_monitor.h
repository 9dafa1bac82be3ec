// EnergyMonitor: time and energy of named code regions ("windows") on GPUs, CPUs and DRAM.
//
// Units: seconds and joules (SI doubles); converted once from the devices' mJ/uJ.
// Semantics (Python Zeus): windows are keyed by name and may nest and overlap; beginning a
// name that is open is an error unless `restart` is set; ending an unknown name is NotFound; a
// window can be cancelled. At begin and at end: sync callback, then the counters between two
// clock readings; a window's time runs from the reading before its begin's counters to the one
// after its end's, so the energy read always falls within it (power is never overstated).
// GPUs with an energy counter are read directly; the others are measured by a PowerSampler
// (background thread) integrated over the window. A counter that went backwards (driver reload,
// GPU reset) is warned about and that window's energy is instant power x elapsed time. A window
// that reads 0 J is warned about once per window name, offering the instant-power approximation
// (as upstream Zeus does; with approximate_zero_energy it is only logged at info level).
// Thread-safety: one EnergyMonitor is used from one thread at a time (its sampler has its own).
// Failure: Result everywhere; a device read that fails mid-window fails end_window (the window
// stays open, so it can be ended again or cancelled).
//
//   auto monitor = zeus::EnergyMonitor::create(devices, clock, {});
//   (*monitor)->begin_window("epoch");
//   train();
//   auto m = (*monitor)->end_window("epoch");   // m->time_s, m->gpu_energy_j[0], ...
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/clock.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"

namespace zeus {

struct Measurement {
  double time_s = 0.0;
  // Keyed by the framework-visible GPU index / RAPL package index.
  std::map<int, double> gpu_energy_j;
  std::map<int, double> cpu_energy_j;
  std::map<int, double> dram_energy_j;
  // The SoC's rail energies (upstream Zeus's Measurement.soc_energy); nullopt without a SoC.
  // Not part of either total: the SoC's rails overlap (its total rail includes CPU and GPU).
  struct SocEnergy {
    std::optional<double> cpu_j;
    std::optional<double> gpu_j;
    std::optional<double> total_j;
  };
  std::optional<SocEnergy> soc_energy;

  // Sum of the GPUs' energy only: upstream Zeus's Measurement.total_energy, so a number ported
  // from upstream means the same here.
  double total_energy_j() const;
  // GPUs plus CPU packages plus DRAM. On Intel RAPL the DRAM zone (intel-rapl:N:M named "dram")
  // is a sibling of the cores inside the package's power plane, not part of the package
  // counter, so it is added. Equals total_energy_j() when no CPU is measured.
  double total_energy_with_cpu_j() const;
};

struct EnergyMonitorOptions {
  // Framework-visible GPU indices to measure; nullopt = all GPUs in Devices.
  std::optional<std::vector<int>> gpu_indices{};
  // CPU package indices; nullopt = all that are readable (an unreadable RAPL turns CPU
  // measurement off with a warning); an explicit list makes unreadable RAPL an error.
  std::optional<std::vector<int>> cpu_indices{};
  // Called before each timestamp to wait for queued GPU work (e.g. cudaDeviceSynchronize).
  std::function<void()> sync{};
  // When a GPU counter reads 0 J over a non-empty window: false = warn only; true = also
  // replace it by instant power x elapsed time. (zeus measure --approx-zero; Python
  // ZeusMonitor(approx_instant_energy=True).)
  bool approximate_zero_energy = false;
  // Append one CSV row per ended window: start_time,window_name,elapsed_time,gpu{i}_energy,...
  // (then cpu{i}_energy, dram{i}_energy when measured); start_time is the clock's Unix time at
  // begin. Empty = no log. create() truncates the file and writes the header (Unavailable if it
  // cannot) — upstream ZeusMonitor's behaviour — unless log_append is set.
  std::string log_file{};
  // Append to log_file instead: an existing file must start with the same header (else
  // InvalidArgument, and the file is left untouched); a missing or empty one gets the header.
  bool log_append = false;
  // Log only the GPU columns (start_time,window_name,elapsed_time,gpu{i}_energy): exactly the
  // header and rows of upstream ZeusMonitor's log_file, which other tools parse.
  bool log_gpu_columns_only = false;
  // Measure the SoC (Devices::soc) when there is one.
  bool measure_soc = true;
  // Sampling period of the PowerSampler used for GPUs without an energy counter.
  double sampler_interval_s = 0.1;
  // Run that sampler on a background thread. false (for a FakeClock, whose sleeps would race
  // time forward): those GPUs are sampled only at window edges, which is exact for power that
  // is constant over each window.
  bool start_sampler_thread = true;
};

class EnergyMonitor {
 public:
  // Validates indices (NotFound for an unknown GPU index) and starts a sampler if needed.
  static Result<std::unique_ptr<EnergyMonitor>> create(Devices& devices, Clock& clock,
                                                       EnergyMonitorOptions options);
  virtual ~EnergyMonitor() = default;

  // Starts window `name`. InvalidArgument if open already and !restart (restart re-begins it).
  virtual Result<void> begin_window(std::string_view name, bool sync = true,
                                    bool restart = false) = 0;
  // Ends window `name` and returns what it measured. NotFound if not open. With cancel, the
  // window is dropped: nothing is read or logged, and an empty Measurement is returned.
  virtual Result<Measurement> end_window(std::string_view name, bool sync = true,
                                         bool cancel = false) = 0;
  // True when `name` is open.
  virtual bool is_window_open(std::string_view name) const = 0;
  // Drops every open window (nothing is read or logged) and returns their names, sorted.
  virtual std::vector<std::string> reset_windows() = 0;

  // The framework-visible GPU indices and CPU packages this monitor measures.
  virtual const std::vector<int>& gpu_indices() const = 0;
  virtual const std::vector<int>& cpu_indices() const = 0;
};

}  // namespace zeus
