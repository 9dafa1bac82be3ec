// The messages of the Perseus runtime (docs/perseus.md, "Runtime"): what a training job's ranks
// and the pipeline-frequency server exchange, as plain values. Field for field the models of
// Zeus 0.16's pipeline-frequency optimizer (JobInfo, RankInfo, FrequencySchedule,
// ProfilingResult), so its clients and ours speak to one server; the JSON codec is the server's
// and client's (src/perseus/wire/wire.h), these types know no JSON.
// Units: clocks in MHz, times in s, energies in J. Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zeus::pfo {

// A training job as rank 0 registers it (job_id empty on the wire; the server makes it:
// "YYYY-MM-DD-HH-MM-SS+dp{d}+pp{p}+tp{t}+{Scheduler}[+{metadata}]"). world_size = pp·dp·tp.
struct JobInfo {
  std::string job_id;
  int pp_degree = 1;
  int dp_degree = 1;
  int tp_degree = 1;
  int world_size = 1;
  std::optional<std::string> job_metadata;
};

// One rank as it registers: its global and per-dimension ranks and the SM clocks its GPU
// supports (at the highest memory clock, fastest first).
struct RankInfo {
  int rank = 0;
  int dp_rank = 0;
  int pp_rank = 0;
  int tp_rank = 0;
  std::vector<int> available_frequencies;
};

// One iteration's clocks for a rank: (instruction name, MHz) in the order the rank runs its
// instructions ("forward", "backward", ...); 0 MHz leaves the clock as it is.
struct FrequencySchedule {
  int rank = 0;
  std::vector<std::pair<std::string, int>> frequencies;
};

// What a rank measured while running a schedule for several iterations: each iteration's time
// and energy, and per instruction name, per iteration, each instance's time and energy.
struct ProfilingResult {
  int rank = 0;
  std::vector<double> iter_time;
  std::vector<double> iter_energy;
  std::map<std::string, std::vector<std::vector<double>>> time_breakdown;
  std::map<std::string, std::vector<std::vector<double>>> energy_breakdown;
};

}  // namespace zeus::pfo
