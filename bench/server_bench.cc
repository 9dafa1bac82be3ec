// The batch-size service under load: next-batch-size + report pairs per second and the p50/p99
// latency of one pair, through a real BsoServer on 127.0.0.1 and the C++ HTTP client (one
// keep-alive connection per client thread), with 1 and 8 concurrent clients; and the same pair
// called on the optimizer directly (no HTTP) as the baseline the HTTP cost is a ratio of.
//
// Store: --db=URL (or env ZEUS_BENCH_DB): sqlite:///path (default: a fresh file in /tmp),
// postgresql://..., memory://. Each client thread works on its own job and starts a new one
// every kTrialsPerJob trials, so a pair's cost does not grow with an ever longer history.
//
//   build/release/bench/server_bench --db=sqlite:///tmp/b.db --benchmark_min_time=2
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include "server/store_url.h"
#include "zeus/client/bso_http_client.h"
#include "zeus/optimizer/batch_size_optimizer.h"
#include "zeus/server/bso_server.h"

namespace {

constexpr int kTrialsPerJob = 200;

std::string g_db_url;
std::atomic<int> g_job_counter{0};

struct Service {
  std::unique_ptr<zeus::Store> store;
  std::unique_ptr<zeus::BatchSizeOptimizer> direct;
  std::unique_ptr<zeus::BsoServer> server;
};

// The store and server, started once for all benchmarks.
Service& service() {
  static Service s = [] {
    Service out;
    auto store = zeus::server::open_store_url(g_db_url, 16);
    if (!store) {
      std::cerr << "server_bench: " << store.error().message << "\n";
      std::exit(1);
    }
    out.store = std::move(*store);
    out.direct = std::make_unique<zeus::BatchSizeOptimizer>(*out.store);
    zeus::BsoServerOptions options;
    options.port = 0;
    options.workers = 16;
    auto server = zeus::BsoServer::start(*out.store, options);
    if (!server) {
      std::cerr << "server_bench: " << server.error().message << "\n";
      std::exit(1);
    }
    out.server = std::move(*server);
    return out;
  }();
  return s;
}

zeus::JobSpec new_job() {
  zeus::JobSpec spec;
  spec.job_id = "bench-" + std::to_string(getpid()) + "-" + std::to_string(g_job_counter++);
  spec.job_id_prefix = "bench-";
  spec.batch_sizes = {32, 64, 128, 256};
  spec.default_batch_size = 64;
  spec.max_power_w = 300;
  spec.target_metric = 0.9;
  spec.mab_seed = 1;
  return spec;
}

// One client's loop: register a job, then next + report pairs (each report converges and ends
// the trial), timing each pair.
template <typename Svc>
void run_pairs(benchmark::State& state, Svc& svc) {
  std::string job;
  int trials = kTrialsPerJob;
  std::vector<double> latencies_s;
  latencies_s.reserve(1 << 16);
  int64_t errors = 0;
  for (auto _ : state) {
    if (trials == kTrialsPerJob) {
      state.PauseTiming();
      auto registered = svc.register_job(new_job());
      if (!registered) {
        state.SkipWithError(registered.error().message.c_str());
        break;
      }
      job = *registered->job_id;
      trials = 0;
      state.ResumeTiming();
    }
    const auto start = std::chrono::steady_clock::now();
    zeus::Result<zeus::TrialId> t = svc.next_batch_size(job);
    if (!t) {
      ++errors;
      continue;
    }
    zeus::Result<zeus::ReportDecision> d = svc.report(
        {job, t->batch_size, t->trial_number, 10.0, 1000.0 + t->batch_size, 0.95, 1});
    if (!d) ++errors;
    latencies_s.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    ++trials;
  }
  std::sort(latencies_s.begin(), latencies_s.end());
  auto percentile = [&](double p) {
    if (latencies_s.empty()) return 0.0;
    return latencies_s[std::min(latencies_s.size() - 1,
                                static_cast<size_t>(p * static_cast<double>(latencies_s.size())))];
  };
  using benchmark::Counter;
  state.counters["pairs/s"] = Counter(static_cast<double>(state.iterations()), Counter::kIsRate);
  state.counters["p50_ms"] = Counter(percentile(0.50) * 1e3, Counter::kAvgThreads);
  state.counters["p99_ms"] = Counter(percentile(0.99) * 1e3, Counter::kAvgThreads);
  state.counters["errors"] = Counter(static_cast<double>(errors));
}

// Adapts the optimizer to the client's register_job signature.
struct DirectService {
  zeus::BatchSizeOptimizer& bso;
  zeus::Result<zeus::JobSpec> register_job(const zeus::JobSpec& spec) {
    auto r = bso.register_job(spec);
    if (!r) return zeus::fail(r.error());
    return r->job;
  }
  zeus::Result<zeus::TrialId> next_batch_size(const std::string& job) {
    return bso.next_batch_size(job);
  }
  zeus::Result<zeus::ReportDecision> report(const zeus::TrialReport& r) { return bso.report(r); }
};

void BM_PairOverHttp(benchmark::State& state) {
  zeus::BsoHttpClientOptions options;
  options.keep_alive = true;
  auto client = zeus::make_bso_http_client(service().server->url(), options);
  if (!client) {
    state.SkipWithError(client.error().message.c_str());
    return;
  }
  run_pairs(state, **client);
}
BENCHMARK(BM_PairOverHttp)->Threads(1)->Threads(8)->UseRealTime()->MinTime(2.0);

void BM_PairDirect(benchmark::State& state) {
  DirectService direct{*service().direct};
  run_pairs(state, direct);
}
BENCHMARK(BM_PairDirect)->Threads(1)->Threads(8)->UseRealTime()->MinTime(2.0);

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--db=", 0) == 0) {
      g_db_url = a.substr(5);
    } else {
      args.push_back(argv[i]);
    }
  }
  std::filesystem::path temp_dir;
  if (g_db_url.empty()) {
    const char* env = std::getenv("ZEUS_BENCH_DB");
    if (env != nullptr && *env != '\0') {
      g_db_url = env;
    } else {
      temp_dir = std::filesystem::temp_directory_path() /
                 ("zeus_server_bench_" + std::to_string(getpid()));
      g_db_url = "sqlite://" + (temp_dir / "bso.db").string();
    }
  }
  std::cout << "server_bench: store " << g_db_url << std::endl;
  int new_argc = static_cast<int>(args.size());
  benchmark::Initialize(&new_argc, args.data());
  if (benchmark::ReportUnrecognizedArguments(new_argc, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!temp_dir.empty()) {
    service().server->stop();
    std::filesystem::remove_all(temp_dir);
  }
  return 0;
}
