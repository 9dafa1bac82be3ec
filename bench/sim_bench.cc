// Simulator throughput: recurrences simulated per second in both fidelities — epoch (closed form)
// and step (the real PowerLimitOptimizer and EnergyMonitor on a ReplayGpu, iteration by
// iteration) — per policy, on the bundled V100 traces, and the whole `zeus simulate headline`
// (6 workloads x 4 policies x 10 seeds). Compare the recurrences/s counters of one run.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>

#include "zeus/sim/sim_experiments.h"
#include "zeus/sim/simulator.h"

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

// One iteration = every paper workload once under the policy, at the given fidelity.
void run_fidelity(benchmark::State& state, zeus::sim::Fidelity fidelity) {
  const auto policy = static_cast<zeus::sim::PolicyKind>(state.range(0));
  zeus::sim::SimOptions options;
  options.fidelity = fidelity;
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
void BM_EpochFidelity(benchmark::State& state) { run_fidelity(state, zeus::sim::Fidelity::kEpoch); }
void BM_StepFidelity(benchmark::State& state) { run_fidelity(state, zeus::sim::Fidelity::kStep); }
BENCHMARK(BM_EpochFidelity)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_StepFidelity)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

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
