// Perseus planner speed: the whole iteration time-energy frontier (fit + every Phillips-Dessouky
// step) for the paper's emulated pipelines (8 stages), and plans per second. The authors'
// pure-Python planner (networkx Edmonds-Karp) took, on a 2-core machine: GPT-3 A100 8 x 12 at
// 1 ms: 23 s for 639 plans; Bloom A100 8 x 12: 40 s; GPT-3 A100 8 x 24: 361 s; GPT-3 A40 8 x 12
// at 0.1 ms: 932 s for 11,832 plans (docs/perseus.md). Compare plans/s across rows of one run.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "zeus/perseus/pfo_planner.h"

namespace {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("ZEUS_DATA_DIR"); env && *env) return env;
  return std::filesystem::path(ZEUS_SOURCE_DIR) / "data";
}

zeus::pfo::StageProfile profile(const std::string& name) {
  std::ifstream in(data_dir() / "perseus" / "stage_profile" / (name + ".csv"));
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = zeus::pfo::parse_stage_profile(text.str(), name);
  if (!parsed) {
    std::fprintf(stderr, "pfo_bench: %s\n", parsed.error().to_string().c_str());
    std::exit(1);
  }
  return *parsed;
}

// args: model (0 gpt3, 1 bloom), gpu (0 a100_sxm, 1 a40), microbatches.
void BM_Frontier(benchmark::State& state) {
  const bool bloom = state.range(0) == 1;
  const bool a40 = state.range(1) == 1;
  const auto stage_profile = profile(std::string(bloom ? "bloom" : "gpt3-175b") + "+" +
                                     (a40 ? "a40" : "a100_sxm") + "_bf16");
  zeus::pfo::PlannerOptions options;
  options.num_stages = 8;
  options.num_microbatches = static_cast<int>(state.range(2));
  options.p2p_power_w = a40 ? 70.38 : 83.64;
  options.unit_time_s = a40 ? 0.0001 : 0.001;
  int64_t plans = 0;
  for (auto _ : state) {
    auto frontier = zeus::pfo::plan_frontier(stage_profile, options);
    if (!frontier) {
      state.SkipWithError(frontier.error().message.c_str());
      return;
    }
    plans += static_cast<int64_t>(frontier->points().size());
    state.counters["plans"] = static_cast<double>(frontier->points().size());
  }
  state.counters["plans/s"] =
      benchmark::Counter(static_cast<double>(plans), benchmark::Counter::kIsRate);
  state.SetLabel(std::string(bloom ? "bloom" : "gpt3") + (a40 ? " a40 0.1ms" : " a100 1ms"));
}
BENCHMARK(BM_Frontier)
    ->ArgsProduct({{0, 1}, {0, 1}, {12, 24, 48, 96}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
