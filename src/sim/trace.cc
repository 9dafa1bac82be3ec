#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/csv_table.h"
#include "zeus/common/log.h"
#include "zeus/sim/sim_trace.h"

namespace zeus::sim {
namespace {

bool same_metric(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(a)); }

bool matches(const Workload& w, const std::string& dataset, const std::string& network,
             const std::string& optimizer) {
  return dataset == w.dataset && network == w.network && optimizer == w.optimizer;
}

Result<int> whole_number(double value, const CsvTable& table, std::size_t row, std::string_view column) {
  if (value != std::floor(value) || std::fabs(value) > 1e9) {
    return fail(ErrorCode::kInvalidArgument, table.source() + " line " + std::to_string(table.line_of(row)) +
                                                 ": column " + std::string(column) + ": " +
                                                 std::to_string(value) + " is not a whole number");
  }
  return static_cast<int>(value);
}

}  // namespace

const std::vector<Workload>& paper_workloads() {
  static const std::vector<Workload> kWorkloads = {
      {"cifar100", "cifar100", "shufflenetv2", "adadelta", 0.6, 100, 1024},
      {"imagenet", "imagenet", "resnet50", "adadelta", 0.65, 100, 256},
      {"squad", "squad", "bert_base_uncased", "adamw", 84.0, 6, 32},
      {"librispeech", "librispeech", "deepspeech2", "adamw", 40.0, 16, 192},
      {"movielens-1m", "movielens-1m", "ncf", "adam", 0.41, 100, 1024},
      {"sentiment140", "sentiment140", "bert_base_uncased", "adamw", 0.84, 10, 128},
  };
  return kWorkloads;
}

Result<Workload> find_workload(std::string_view name) {
  std::string known;
  for (const Workload& w : paper_workloads()) {
    if (w.name == name) return w;
    known += (known.empty() ? "" : ", ") + w.name;
  }
  return fail(ErrorCode::kInvalidArgument,
              "unknown workload '" + std::string(name) + "' (known workloads: " + known + ")");
}

const std::vector<std::string>& known_gpus() {
  static const std::vector<std::string> kGpus = {"v100", "a40", "rtx6000", "p100"};
  return kGpus;
}

int WorkloadTrace::batch_index(int batch_size) const {
  auto it = std::find(batch_sizes.begin(), batch_sizes.end(), batch_size);
  return it == batch_sizes.end() ? -1 : static_cast<int>(it - batch_sizes.begin());
}

Result<std::vector<TrainRow>> parse_train_trace(std::string_view csv_text, std::string_view source) {
  auto table = CsvTable::parse(csv_text, source);
  if (!table) return fail(table.error());
  const std::vector<std::string> names = {"dataset", "network", "batch_size", "optimizer",
                                          "run", "target_metric", "target_epoch"};
  auto col = table->require_columns(names);
  if (!col) return fail(col.error());
  std::vector<TrainRow> rows;
  rows.reserve(table->num_rows());
  for (std::size_t r = 0; r < table->num_rows(); ++r) {
    TrainRow row;
    row.dataset = std::string(table->cell(r, (*col)[0]));
    row.network = std::string(table->cell(r, (*col)[1]));
    row.optimizer = std::string(table->cell(r, (*col)[3]));
    auto batch = table->number(r, (*col)[2], names[2]);
    if (!batch) return fail(batch.error());
    auto batch_int = whole_number(*batch, *table, r, names[2]);
    if (!batch_int) return fail(batch_int.error());
    row.batch_size = *batch_int;
    auto run = table->number(r, (*col)[4], names[4]);
    if (!run) return fail(run.error());
    row.run = static_cast<int>(*run);
    auto metric = table->number(r, (*col)[5], names[5]);
    if (!metric) return fail(metric.error());
    row.target_metric = *metric;
    std::string_view epoch_text = table->cell(r, (*col)[6]);
    if (epoch_text.empty() || epoch_text == "nan" || epoch_text == "NaN") {
      row.target_epoch = 0;
    } else {
      auto epoch = table->number(r, (*col)[6], names[6]);
      if (!epoch) return fail(epoch.error());
      auto epoch_int = whole_number(*epoch, *table, r, names[6]);
      if (!epoch_int) return fail(epoch_int.error());
      if (*epoch_int < 1) {
        return fail(ErrorCode::kInvalidArgument, table->source() + " line " + std::to_string(table->line_of(r)) +
                                                     ": target_epoch must be >= 1, or empty/nan for never");
      }
      row.target_epoch = *epoch_int;
    }
    if (row.batch_size < 1) {
      return fail(ErrorCode::kInvalidArgument,
                  table->source() + " line " + std::to_string(table->line_of(r)) + ": batch_size must be >= 1");
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<std::vector<PowerRow>> parse_power_trace(std::string_view csv_text, std::string_view source) {
  auto table = CsvTable::parse(csv_text, source);
  if (!table) return fail(table.error());
  const std::vector<std::string> names = {"dataset",     "network",        "batch_size",   "optimizer",
                                          "power_limit", "time_per_epoch", "average_power"};
  auto col = table->require_columns(names);
  if (!col) return fail(col.error());
  std::vector<PowerRow> rows;
  rows.reserve(table->num_rows());
  for (std::size_t r = 0; r < table->num_rows(); ++r) {
    PowerRow row;
    row.dataset = std::string(table->cell(r, (*col)[0]));
    row.network = std::string(table->cell(r, (*col)[1]));
    row.optimizer = std::string(table->cell(r, (*col)[3]));
    double values[4] = {};
    const int value_columns[4] = {2, 4, 5, 6};
    for (int i = 0; i < 4; ++i) {
      const int c = value_columns[i];
      auto v = table->number(r, (*col)[static_cast<std::size_t>(c)], names[static_cast<std::size_t>(c)]);
      if (!v) return fail(v.error());
      if (*v <= 0.0) {
        return fail(ErrorCode::kInvalidArgument, table->source() + " line " + std::to_string(table->line_of(r)) +
                                                     ": column " + names[static_cast<std::size_t>(c)] +
                                                     " must be positive");
      }
      values[i] = *v;
    }
    auto batch_int = whole_number(values[0], *table, r, names[2]);
    if (!batch_int) return fail(batch_int.error());
    row.batch_size = *batch_int;
    row.power_limit_w = values[1];
    row.time_per_epoch_s = values[2];
    row.average_power_w = values[3];
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<WorkloadTrace> join_trace(const std::vector<TrainRow>& train, const std::vector<PowerRow>& power,
                                 const Workload& workload, std::string_view gpu) {
  WorkloadTrace trace;
  trace.workload = workload;
  trace.gpu = std::string(gpu);
  const std::string what = "workload " + workload.name + " on " + std::string(gpu);

  // Training paths per batch size, ordered by run index.
  std::map<int, std::vector<std::pair<int, int>>> runs_by_batch;
  for (const TrainRow& row : train) {
    if (matches(workload, row.dataset, row.network, row.optimizer) &&
        same_metric(row.target_metric, workload.target_metric)) {
      runs_by_batch[row.batch_size].emplace_back(row.run, row.target_epoch);
    }
  }
  if (runs_by_batch.empty()) {
    return fail(ErrorCode::kInvalidArgument, what + ": the training trace has no run with target metric " +
                                                 std::to_string(workload.target_metric));
  }
  std::map<int, std::map<double, const PowerRow*>> power_by_batch;
  std::set<double> limits;
  for (const PowerRow& row : power) {
    trace.max_power_w = std::max(trace.max_power_w, row.power_limit_w);
    if (!matches(workload, row.dataset, row.network, row.optimizer)) continue;
    if (!runs_by_batch.count(row.batch_size)) continue;
    auto [it, inserted] = power_by_batch[row.batch_size].emplace(row.power_limit_w, &row);
    if (!inserted) {
      return fail(ErrorCode::kInvalidArgument, what + ": the power trace has two rows for batch size " +
                                                   std::to_string(row.batch_size) + " at " +
                                                   std::to_string(row.power_limit_w) + " W");
    }
    limits.insert(row.power_limit_w);
  }
  if (power_by_batch.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                what + ": no batch size is present in both the training and the power trace");
  }
  trace.power_limits_w.assign(limits.begin(), limits.end());
  if (std::all_of(power_by_batch.begin(), power_by_batch.end(),
                  [&](const auto& entry) { return entry.second.size() != limits.size(); })) {
    return fail(ErrorCode::kInvalidArgument,
                what + ": no batch size has a power row for every power limit of the grid");
  }
  for (auto& [batch, by_limit] : power_by_batch) {
    if (by_limit.size() != limits.size()) {
      // Measured at only some limits (e.g. rtx6000 movielens-1m b=4): it cannot be profiled
      // across the grid, so it is left out of the replay.
      trace.dropped_batch_sizes.push_back(batch);
      log_info(what + ": batch size " + std::to_string(batch) +
               " lacks power rows for some limits of the grid; left out");
      continue;
    }
    trace.batch_sizes.push_back(batch);
    auto runs = runs_by_batch[batch];
    std::sort(runs.begin(), runs.end());
    std::vector<int> epochs;
    for (const auto& [run, epoch] : runs) epochs.push_back(epoch);
    trace.paths.push_back(std::move(epochs));
    for (const auto& [limit, row] : by_limit) {
      trace.time_per_epoch_table_s.push_back(row->time_per_epoch_s);
      trace.average_power_table_w.push_back(row->average_power_w);
    }
  }
  // b0: the default batch size, capped at the largest batch size of this GPU's trace.
  int b0 = 0;
  for (int i = 0; i < trace.num_batch_sizes(); ++i) {
    if (trace.batch_sizes[static_cast<std::size_t>(i)] <= workload.default_batch_size) b0 = i;
  }
  trace.default_b = b0;
  trace.workload.default_batch_size = trace.batch_sizes[static_cast<std::size_t>(b0)];
  return trace;
}

Result<std::string> read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return fail(ErrorCode::kNotFound, "cannot open " + path.string() + " (check the path or pass --data DIR)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<WorkloadTrace> load_workload_trace(const std::filesystem::path& data_dir, std::string_view gpu,
                                          std::string_view workload_name) {
  auto traces = load_workload_traces(data_dir, gpu, {std::string(workload_name)});
  if (!traces) return fail(traces.error());
  return std::move(traces->front());
}

Result<std::vector<WorkloadTrace>> load_workload_traces(const std::filesystem::path& data_dir,
                                                        std::string_view gpu,
                                                        const std::vector<std::string>& workload_names) {
  std::vector<Workload> workloads;
  for (const std::string& name : workload_names) {
    auto workload = find_workload(name);
    if (!workload) return fail(workload.error());
    workloads.push_back(*workload);
  }
  if (workload_names.empty()) workloads = paper_workloads();
  return load_traces_of(data_dir, gpu, workloads);
}

Result<std::vector<WorkloadTrace>> load_traces_of(const std::filesystem::path& data_dir, std::string_view gpu,
                                                  const std::vector<Workload>& workloads) {
  if (std::find(known_gpus().begin(), known_gpus().end(), gpu) == known_gpus().end()) {
    return fail(ErrorCode::kInvalidArgument,
                "unknown GPU '" + std::string(gpu) + "' (known GPUs: v100, a40, rtx6000, p100)");
  }
  const auto train_path = data_dir / "summary_train.csv";
  const auto power_path = data_dir / ("summary_power_" + std::string(gpu) + ".csv");
  auto train_text = read_text_file(train_path);
  if (!train_text) return fail(train_text.error());
  auto power_text = read_text_file(power_path);
  if (!power_text) return fail(power_text.error());
  auto train = parse_train_trace(*train_text, train_path.string());
  if (!train) return fail(train.error());
  auto power = parse_power_trace(*power_text, power_path.string());
  if (!power) return fail(power.error());
  std::vector<WorkloadTrace> traces;
  for (const Workload& workload : workloads) {
    auto trace = join_trace(*train, *power, workload, gpu);
    if (!trace) return fail(trace.error());
    traces.push_back(std::move(*trace));
  }
  return traces;
}

}  // namespace zeus::sim
