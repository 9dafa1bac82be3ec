// WindowLog: the EnergyMonitor's optional CSV log, one row per ended (not cancelled) window.
//
// Format (the one Zeus users' tools read): header
//   start_time,window_name,elapsed_time,gpu0_energy,...,cpu0_energy,...,dram0_energy,...
// then one row per window; numbers are written like Python's repr of a float (shortest
// round-trip, "12.0" for integral values). Units: seconds and joules.
// Thread-safety: not thread-safe (owned by one EnergyMonitor).
// Failure: Unavailable when the file cannot be created or written.
//
//   auto log = zeus::WindowLog::create("energy.csv", {0, 1}, {}, {});
//   (*log)->append(start_unix_s, "epoch", measurement);
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/monitor/energy_monitor.h"

namespace zeus {

class WindowLog {
 public:
  // Creates (truncates) `path` and writes the header with one column per GPU index, per CPU
  // package index and per DRAM index given. With `append`, an existing non-empty file is kept
  // and appended to when its first line is that same header; any other content is
  // InvalidArgument (the file is not touched), so an unrelated file is never clobbered.
  static Result<std::unique_ptr<WindowLog>> create(const std::string& path,
                                                   std::vector<int> gpu_indices,
                                                   std::vector<int> cpu_indices,
                                                   std::vector<int> dram_indices,
                                                   bool append = false);
  ~WindowLog();
  WindowLog(const WindowLog&) = delete;
  WindowLog& operator=(const WindowLog&) = delete;

  // Appends and flushes one row; a value missing from `measurement` leaves its field empty.
  Result<void> append(double start_time_s, std::string_view window_name,
                      const Measurement& measurement);

 private:
  WindowLog(std::string path, std::FILE* file, std::vector<int> gpu_indices,
            std::vector<int> cpu_indices, std::vector<int> dram_indices);

  std::string path_;
  std::FILE* file_;
  std::vector<int> gpu_indices_;
  std::vector<int> cpu_indices_;
  std::vector<int> dram_indices_;
};

// A double as Python's repr writes it: "2924.4619999974966", "12.0", "1e-05".
std::string format_python_float(double value);

// A CSV field, quoted when it holds a comma, a quote or a line break.
std::string csv_field(std::string_view text);

}  // namespace zeus
