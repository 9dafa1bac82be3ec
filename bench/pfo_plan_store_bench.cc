// The compact plan store (plans.bin) on the largest frontier of the emulation: GPT-3 175B on
// A40, 8 stages x 96 microbatches at 0.1 ms (65,844 plans of 1,536 instructions; planning it
// takes about a minute, once). Reports the file's size against the JSON lines the planner used
// to write (measured by encoding every plan as such a line), and the time to write the store,
// open it (header and tables), read one plan (the worst case: the last before a checkpoint),
// and read every plan in one pass.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "zeus/perseus/pfo_plan_store.h"
#include "zeus/perseus/sim_perseus.h"

namespace {

namespace fs = std::filesystem;

struct Largest {
  std::unique_ptr<zeus::pfo::Frontier> frontier;
  std::vector<zeus::pfo::GlobalClockPlan> clocks;
  fs::path dir;
  fs::path path() const { return dir / "plans.bin"; }
};

void die(const std::string& message) {
  std::fprintf(stderr, "pfo_plan_store_bench: %s\n", message.c_str());
  std::exit(1);
}

const Largest& largest() {
  static const Largest* value = [] {
    const char* env = std::getenv("ZEUS_DATA_DIR");
    const fs::path data = env && *env ? fs::path(env) : fs::path(ZEUS_SOURCE_DIR) / "data";
    std::ifstream in(data / "perseus" / "stage_profile" / "gpt3-175b+a40_bf16.csv");
    std::stringstream text;
    text << in.rdbuf();
    auto profile = zeus::pfo::parse_stage_profile(text.str(), "gpt3-175b+a40_bf16.csv");
    if (!profile) die(profile.error().to_string());
    zeus::pfo::PlannerOptions options;
    options.num_stages = 8;
    options.num_microbatches = 96;
    options.p2p_power_w = 70.38;
    options.unit_time_s = 0.0001;
    auto frontier = zeus::pfo::plan_frontier(*profile, options);
    if (!frontier) die(frontier.error().to_string());
    auto* out = new Largest;
    out->frontier = std::make_unique<zeus::pfo::Frontier>(std::move(*frontier));
    auto runs = zeus::sim::global_clock_runs(*profile, out->frontier->schedule(), 70.38);
    if (!runs) die(runs.error().to_string());
    for (const auto& run : *runs) out->clocks.push_back(run.plan);
    out->dir = fs::temp_directory_path() / ("pfo_plan_store_bench_" + std::to_string(getpid()));
    fs::create_directories(out->dir);
    if (auto w = zeus::pfo::write_plan_store(out->path(), *out->frontier, out->clocks); !w)
      die(w.error().to_string());
    std::atexit([] { fs::remove_all(largest().dir); });
    return out;
  }();
  return *value;
}

void BM_PlanStoreWrite(benchmark::State& state) {
  const Largest& l = largest();
  for (auto _ : state) {
    if (auto w = zeus::pfo::write_plan_store(l.dir / "again.bin", *l.frontier, l.clocks); !w) {
      state.SkipWithError(w.error().message.c_str());
      return;
    }
  }
  // The same plans as JSON lines ({"index", "time", "energy", "frequencies"}), as before.
  double json_bytes = 0;
  l.frontier->for_each_plan([&](std::size_t i, const std::vector<std::vector<int>>& clocks) {
    const auto& p = l.frontier->points()[i];
    json_bytes += static_cast<double>(
        nlohmann::json{
            {"index", i}, {"time", p.time_s}, {"energy", p.energy_j}, {"frequencies", clocks}}
            .dump()
            .size() +
        1);
  });
  const double store_bytes = static_cast<double>(fs::file_size(l.path()));
  state.counters["plans"] = static_cast<double>(l.frontier->points().size());
  state.counters["store_MB"] = store_bytes / 1e6;
  state.counters["jsonl_MB"] = json_bytes / 1e6;
  state.counters["jsonl/store"] = json_bytes / store_bytes;
}
BENCHMARK(BM_PlanStoreWrite)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_PlanStoreOpen(benchmark::State& state) {
  const Largest& l = largest();
  for (auto _ : state) {
    auto store = zeus::pfo::PlanStore::open(l.path());
    if (!store) {
      state.SkipWithError(store.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(store->points().size());
  }
}
BENCHMARK(BM_PlanStoreOpen)->Unit(benchmark::kMillisecond);

// arg: which plan — 0 the first, 1 the last before a checkpoint (the most changes to apply),
// 2 the fastest (what a server serves first).
void BM_PlanStoreLoadOnePlan(benchmark::State& state) {
  const Largest& l = largest();
  auto store = zeus::pfo::PlanStore::open(l.path());
  if (!store) die(store.error().to_string());
  const std::size_t n = store->points().size();
  const std::size_t k = store->checkpoint_interval();
  const std::size_t index = state.range(0) == 0   ? 0
                            : state.range(0) == 1 ? (n / 2) / k * k + k - 1
                                                  : n - 1;
  for (auto _ : state) {
    auto clocks = store->clocks_mhz(index);
    if (!clocks) {
      state.SkipWithError(clocks.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(clocks->size());
  }
  state.SetLabel("plan " + std::to_string(index) + " of " + std::to_string(n));
}
BENCHMARK(BM_PlanStoreLoadOnePlan)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

void BM_PlanStoreEveryPlan(benchmark::State& state) {
  const Largest& l = largest();
  auto store = zeus::pfo::PlanStore::open(l.path());
  if (!store) die(store.error().to_string());
  for (auto _ : state) {
    std::size_t seen = 0;
    auto done =
        store->for_each_plan([&](std::size_t, const std::vector<std::vector<int>>&) { ++seen; });
    if (!done) {
      state.SkipWithError(done.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(seen);
  }
}
BENCHMARK(BM_PlanStoreEveryPlan)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
