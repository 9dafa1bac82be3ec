// The main() of a benchmark program whose reporter prints ratios after the table: quiet logs,
// Google Benchmark's flags, the runs, then the reporter's Finalize().
//
//   int main(int argc, char** argv) { MyReporter r; return zeus::bench::run_all(argc, argv, r); }
#pragma once

#include <benchmark/benchmark.h>

#include "zeus/common/log.h"

namespace zeus::bench {

inline int run_all(int argc, char** argv, benchmark::BenchmarkReporter& reporter) {
  // Warnings a user would see (windows too short to read energy) are not what is measured.
  zeus::set_log_level(zeus::LogLevel::kError);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}

}  // namespace zeus::bench
