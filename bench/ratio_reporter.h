// RatioReporter: Google Benchmark's console table, then a summary the program computes from the
// times of the run (ratios between benchmarks measured in one run, as bench/ programs print).
// Times are per iteration, in each benchmark's own unit; a benchmark that failed or was skipped
// has none (find() answers -1).
//
//   int main(int argc, char** argv) {
//     return zeus::bench::run_with_ratios(argc, argv, [](const zeus::bench::RunTimes& t) {
//       std::printf("%.2f x\n", t.find("BM_A").cpu / t.find("BM_B").cpu); });
//   }
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_main.h"

namespace zeus::bench {

struct Times {
  double cpu = -1.0;
  double real = -1.0;
};

struct RunTimes {
  std::map<std::string, Times> by_name;
  Times find(const std::string& name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? Times{} : it->second;
  }
};

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  using Summary = std::function<void(const RunTimes&)>;
  explicit RatioReporter(Summary summary) : summary_(std::move(summary)) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Iteration && !run.error_occurred) {
        times_.by_name[run.benchmark_name()] = {run.GetAdjustedCPUTime(),
                                                run.GetAdjustedRealTime()};
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    if (summary_) summary_(times_);
  }

 private:
  Summary summary_;
  RunTimes times_;
};

// The main() of a benchmark program whose table is followed by `summary` (bench_main.h: quiet
// logs, Google Benchmark's flags, the runs).
inline int run_with_ratios(int argc, char** argv, RatioReporter::Summary summary) {
  RatioReporter reporter(std::move(summary));
  return run_all(argc, argv, reporter);
}

}  // namespace zeus::bench
