// Simulation traces: the measured training and power traces of the Zeus paper, joined per
// workload and GPU into the tables the trace-driven simulator replays.
//
// A *training path* is one run (random seed) of one batch size until the target metric: the
// epoch at which it reached the target, or never. The power trace gives, per (batch size, power
// limit), the time of one epoch (s) and the average power (W). Units: seconds, watts, joules.
// Thread-safety: loading is reentrant; a loaded WorkloadTrace is immutable and may be shared.
// Failure: a missing file is kNotFound; a missing column, a non-numeric cell, an unknown
// workload or GPU, or a workload absent from the trace is kInvalidArgument naming file and line.
//
//   auto trace = zeus::sim::load_workload_trace("data", "v100", "librispeech");
//   if (!trace) { std::cerr << trace.error().to_string(); return 1; }
//   double tta_s = trace->time_per_epoch_s(trace->default_b, trace->num_power_limits() - 1);
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/result.h"

namespace zeus::sim {

// A recurring training job of the paper's evaluation (Table 1) and the defaults it used.
struct Workload {
  std::string name;       // e.g. "librispeech" (the dataset name)
  std::string dataset;    // key in the traces
  std::string network;    // key in the traces
  std::string optimizer;  // key in the traces
  double target_metric = 0.0;  // the target validation metric (direction already applied)
  int max_epochs = 0;          // a run that has not reached the target by then fails
  int default_batch_size = 0;  // b0, capped at the largest batch size in the GPU's trace
};

// The six workloads of the paper, in a fixed order.
const std::vector<Workload>& paper_workloads();
// The paper workload with this name; kInvalidArgument listing the known names otherwise.
Result<Workload> find_workload(std::string_view name);
// The GPUs with a power trace: "v100", "a40", "rtx6000", "p100".
const std::vector<std::string>& known_gpus();

// One row of summary_train.csv. target_epoch <= 0 means the run never reached the target.
struct TrainRow {
  std::string dataset, network, optimizer;
  int batch_size = 0;
  int run = 0;
  double target_metric = 0.0;
  int target_epoch = 0;
};

// One row of summary_power_<gpu>.csv.
struct PowerRow {
  std::string dataset, network, optimizer;
  int batch_size = 0;
  double power_limit_w = 0.0;
  double time_per_epoch_s = 0.0;
  double average_power_w = 0.0;
};

// Parses summary_train.csv text (header row first; columns in any order; extra columns ignored).
// `source` names the file in error messages. An empty or "nan" target_epoch means "never".
Result<std::vector<TrainRow>> parse_train_trace(std::string_view csv_text, std::string_view source);
// Parses summary_power_<gpu>.csv text. Times and powers must be positive numbers.
Result<std::vector<PowerRow>> parse_power_trace(std::string_view csv_text, std::string_view source);

// The joined trace of one workload on one GPU. Batch sizes are those present in both traces
// (ascending); power limits are the workload's grid in the power trace (ascending). Indices:
// b in [0, num_batch_sizes()), p in [0, num_power_limits()).
struct WorkloadTrace {
  Workload workload;
  std::string gpu;
  std::vector<int> batch_sizes;
  std::vector<double> power_limits_w;
  double max_power_w = 0.0;  // MAXPOWER: the largest power limit in the GPU's whole trace
  int default_b = 0;         // index of b0 in batch_sizes
  // paths[b]: the target epoch of each training path of batch size b (<= 0: never reached).
  std::vector<std::vector<int>> paths;
  // Row-major [b * num_power_limits() + p].
  std::vector<double> time_per_epoch_table_s;
  std::vector<double> average_power_table_w;
  // Batch sizes of both traces left out because the power trace lacks some limits for them.
  std::vector<int> dropped_batch_sizes;

  int num_batch_sizes() const { return static_cast<int>(batch_sizes.size()); }
  int num_power_limits() const { return static_cast<int>(power_limits_w.size()); }
  double time_per_epoch_s(int b, int p) const {
    return time_per_epoch_table_s[static_cast<std::size_t>(b * num_power_limits() + p)];
  }
  double average_power_w(int b, int p) const {
    return average_power_table_w[static_cast<std::size_t>(b * num_power_limits() + p)];
  }
  double energy_per_epoch_j(int b, int p) const { return time_per_epoch_s(b, p) * average_power_w(b, p); }
  // Cost of one epoch: eta * energy + (1 - eta) * MAXPOWER * time (J).
  double epoch_cost(int b, int p, double eta) const {
    return (eta * average_power_w(b, p) + (1.0 - eta) * max_power_w) * time_per_epoch_s(b, p);
  }
  // Index of a batch size, or -1.
  int batch_index(int batch_size) const;
};

// Joins the two traces for `workload` on `gpu`. A batch size without a power row for every limit
// of the grid is left out (listed in dropped_batch_sizes). kInvalidArgument when the workload has
// no training paths, no power rows, no batch size with a complete grid, or duplicate power rows.
Result<WorkloadTrace> join_trace(const std::vector<TrainRow>& train,
                                 const std::vector<PowerRow>& power, const Workload& workload,
                                 std::string_view gpu);

// Reads data_dir/summary_train.csv and data_dir/summary_power_<gpu>.csv and joins them.
Result<WorkloadTrace> load_workload_trace(const std::filesystem::path& data_dir,
                                          std::string_view gpu, std::string_view workload_name);

// Like load_workload_trace for several workloads (empty: the six paper workloads), reading each
// file once. Unknown names fail before any file is read.
Result<std::vector<WorkloadTrace>> load_workload_traces(const std::filesystem::path& data_dir,
                                                        std::string_view gpu,
                                                        const std::vector<std::string>& workload_names);

// Like load_workload_traces for workloads given in full (e.g. a paper workload with another
// target metric, as the drift experiment builds).
Result<std::vector<WorkloadTrace>> load_traces_of(const std::filesystem::path& data_dir, std::string_view gpu,
                                                  const std::vector<Workload>& workloads);

// Reads a whole file; kNotFound naming the path when it cannot be opened.
Result<std::string> read_text_file(const std::filesystem::path& path);

}  // namespace zeus::sim
