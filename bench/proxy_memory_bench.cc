// zeus proxy's memory over a long run: the meter's per-run state (the EnergyLedger and the
// RunWindow that feeds the steady-state method and --report) driven as the meter drives them,
// by a simulated batched server (32 requests at once, 100 streamed tokens each, a reading every
// 0.1 s and at every end), for N requests. Reported per run: the heap in use after the run
// (mallinfo2, the allocator's own count), the process's RSS, and what the window holds.
// "window:0" keeps every request (what the meter did before the bound); "window:10000" is the
// default --steady-state-window.
//
//   build/release/bench/proxy_memory_bench
#include <benchmark/benchmark.h>

#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <vector>

#include "bench/bench_main.h"
#include "proxy/attribution.h"
#include "proxy/run_window.h"

namespace {

using zeus::proxy::EnergyLedger;
using zeus::proxy::RequestEnergy;
using zeus::proxy::RequestId;
using zeus::proxy::RunWindow;

constexpr int kInFlight = 32;
constexpr int kTokens = 100;

double heap_mb() { return static_cast<double>(mallinfo2().uordblks) / (1 << 20); }

double rss_mb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

// One run of `requests` requests; answers the number finished.
int64_t simulate(EnergyLedger& ledger, RunWindow& window, int64_t requests) {
  struct Open {
    int age = 0;
  };
  std::map<RequestId, Open> open;
  RequestId next = 1;
  int64_t finished = 0, steps = 0;
  double t = 0, energy = 0;
  const auto read = [&] {
    ledger.sample(t, energy);
    window.reading(t, energy);
  };
  read();
  while (finished < requests) {
    while (static_cast<int>(open.size()) < kInFlight && static_cast<int64_t>(next) <= requests) {
      // Staggered starts keep the batch full as requests end at different times.
      ledger.start(next, t, true);
      window.begin(next, t);
      open[next].age = -static_cast<int>(next % 7);
      ++next;
    }
    t += 0.01;
    energy += 3;
    std::vector<RequestId> done;
    for (auto& [id, request] : open) {
      if (++request.age <= 0) continue;
      ledger.tokens(id, t, 1);
      window.tokens(id, t, 1);
      if (request.age == kTokens) done.push_back(id);
    }
    for (RequestId id : done) {
      ledger.end(id, t);
      window.end(id, t);
      read();
      for (const RequestEnergy& r : ledger.take_finished()) {
        window.finish({r.id, "meta-llama/Llama-3.1-8B-Instruct", r.output_tokens, r.energy_j,
                       r.method});
      }
      open.erase(id);
      ++finished;
    }
    if (++steps % 10 == 0) read();
  }
  return finished;
}

void BM_RunMemory(benchmark::State& state) {
  const auto window_size = state.range(0) == 0 ? std::numeric_limits<size_t>::max()
                                               : static_cast<size_t>(state.range(0));
  const int64_t requests = state.range(1);
  for (auto _ : state) {
    malloc_trim(0);
    const double heap_before = heap_mb();
    const double rss_before = rss_mb();
    EnergyLedger ledger;
    RunWindow window(window_size);
    if (simulate(ledger, window, requests) != requests) state.SkipWithError("a request was lost");
    const RunWindow::Sizes sizes = window.sizes();
    state.counters["heap_mb"] = heap_mb() - heap_before;
    state.counters["rss_mb"] = rss_mb() - rss_before;
    state.counters["kept_requests"] = static_cast<double>(sizes.requests);
    state.counters["kept_readings"] = static_cast<double>(sizes.readings);
    state.counters["token_times"] = static_cast<double>(sizes.token_times);
    state.counters["ledger_intervals"] = static_cast<double>(ledger.intervals_held());
    benchmark::DoNotOptimize(window.steady_state());
  }
}
BENCHMARK(BM_RunMemory)
    ->ArgNames({"window", "requests"})
    ->Args({0, 10000})
    ->Args({0, 100000})
    ->Args({10000, 10000})
    ->Args({10000, 100000})
    ->Args({10000, 300000})
    ->Args({1000, 300000})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::ConsoleReporter reporter;
  return zeus::bench::run_all(argc, argv, reporter);
}
