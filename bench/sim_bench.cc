// Simulator throughput: recurrences simulated per second at epoch fidelity, per policy, on the
// bundled V100 traces, and the whole `zeus simulate headline` (6 workloads x 4 policies x 10
// seeds). The step fidelity is not built yet; its benchmark will join this file.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>

#include "zeus/sim_experiments.h"
#include "zeus/simulator.h"

namespace {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("ZEUS_DATA_DIR"); env && *env) return env;
  return std::filesystem::path(__FILE__).parent_path().parent_path() / "data";
}

const std::vector<zeus::sim::WorkloadTrace>& traces() {
  static const std::vector<zeus::sim::WorkloadTrace> kTraces = [] {
    auto loaded = zeus::sim::load_workload_traces(data_dir(), "v100", {});
    if (!loaded) {
      std::fprintf(stderr, "sim_bench: %s\n", loaded.error().to_string().c_str());
      std::exit(1);
    }
    return *loaded;
  }();
  return kTraces;
}

// One iteration = every paper workload once under the policy.
void BM_EpochFidelity(benchmark::State& state) {
  const auto policy = static_cast<zeus::sim::PolicyKind>(state.range(0));
  zeus::sim::SimOptions options;
  int64_t recurrences = 0;
  for (auto _ : state) {
    for (const auto& trace : traces()) {
      auto history = zeus::sim::simulate(trace, policy, options);
      benchmark::DoNotOptimize(history);
      recurrences += static_cast<int64_t>(history->recurrences.size());
    }
    ++options.seed;
  }
  state.SetLabel(std::string(zeus::sim::policy_name(policy)));
  state.counters["recurrences/s"] = benchmark::Counter(static_cast<double>(recurrences), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EpochFidelity)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

// The whole headline experiment, trace loading included (the goal: well under 5 s).
void BM_Headline(benchmark::State& state) {
  zeus::sim::ExperimentOptions options;
  options.data_dir = data_dir();
  options.seeds = 10;
  for (auto _ : state) {
    auto result = zeus::sim::run_headline(options);
    if (!result) state.SkipWithError(result.error().message.c_str());
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(BM_Headline)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
