// Batch-size optimizer operations straight on each Store: next_batch_size + report pairs per
// second on memory, SQLite (WAL, one file) and PostgreSQL (SERIALIZABLE with retries; each
// commit flushed to disk, and "PostgresAsync" with synchronous_commit=off to show the cost
// without that flush), with 1 and 8 threads, each thread on its own job ("own_job") or all on
// one ("one_job": every transaction conflicts; 200 pairs per thread, the history grows). No
// HTTP: this is the store's share of a server request. PostgreSQL: env ZEUS_BENCH_PG_URL, else
// a private cluster started with scripts/pg_cluster.sh (stopped at exit). The ratios to memory
// are printed after the table.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "zeus/optimizer/batch_size_optimizer.h"
#include "zeus/store/postgres_store.h"
#include "zeus/store/sqlite_store.h"

namespace {

const std::filesystem::path kSourceDir =
    std::filesystem::path(__FILE__).parent_path().parent_path();

// A private PostgreSQL cluster for this run, unless ZEUS_BENCH_PG_URL names a server.
class BenchCluster {
 public:
  ~BenchCluster() {
    if (!state_.empty()) {
      std::system(("bash '" + (kSourceDir / "scripts/pg_cluster.sh").string() + "' stop '" +
                   state_.string() + "'")
                      .c_str());
      std::filesystem::remove_all(state_);
    }
  }
  zeus::Result<std::string> url() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!url_.empty()) return url_;
    if (const char* env = std::getenv("ZEUS_BENCH_PG_URL"); env && *env) return url_ = env;
    state_ =
        std::filesystem::temp_directory_path() / ("zeus_store_bench_" + std::to_string(getpid()));
    const std::string cmd = "bash '" + (kSourceDir / "scripts/pg_cluster.sh").string() +
                            "' start '" + state_.string() + "' > /dev/null";
    if (std::system(cmd.c_str()) != 0) {
      return zeus::fail(zeus::ErrorCode::kUnavailable,
                        "could not start a PostgreSQL cluster (scripts/pg_cluster.sh, message "
                        "above); set ZEUS_BENCH_PG_URL to use a running server");
    }
    std::FILE* f = std::fopen((state_ / "url").c_str(), "r");
    char line[512] = {0};
    if (f == nullptr || std::fgets(line, sizeof line, f) == nullptr) {
      if (f) std::fclose(f);
      return zeus::fail(zeus::ErrorCode::kInternal, "pg_cluster.sh wrote no URL");
    }
    std::fclose(f);
    url_ = line;
    while (!url_.empty() && (url_.back() == '\n' || url_.back() == '\r')) url_.pop_back();
    return url_;
  }

 private:
  std::mutex mu_;
  std::string url_;
  std::filesystem::path state_;
};
BenchCluster cluster;

// kPostgresAsync: synchronous_commit=off — a commit is not flushed before the answer (it
// survives a crash of the client, not of the server): the store's CPU cost without the fsync.
enum Kind { kMemory, kSqlite, kPostgres, kPostgresAsync };

// One store per kind for the whole run (threads of a benchmark share it, as a server's do).
zeus::Result<zeus::Store*> store_of(Kind kind) {
  static std::mutex mu;
  static std::map<Kind, std::unique_ptr<zeus::Store>> stores;
  static struct SqliteDir {
    std::filesystem::path path;
    ~SqliteDir() {
      if (!path.empty()) std::filesystem::remove_all(path);
    }
  } sqlite_dir;
  std::lock_guard<std::mutex> lock(mu);
  auto it = stores.find(kind);
  if (it != stores.end()) return it->second.get();
  zeus::Result<std::unique_ptr<zeus::Store>> s = zeus::make_memory_store();
  if (kind == kSqlite) {
    sqlite_dir.path = std::filesystem::temp_directory_path() /
                      ("zeus_store_bench_sqlite_" + std::to_string(getpid()));
    std::filesystem::create_directories(sqlite_dir.path);
    s = zeus::open_sqlite_store((sqlite_dir.path / "bso.db").string());
  } else if (kind == kPostgres || kind == kPostgresAsync) {
    zeus::Result<std::string> url = cluster.url();
    if (!url) return zeus::fail(url.error());
    zeus::PostgresStoreOptions options;
    options.pool_size = 8;
    options.schema = "bench_" + std::to_string(getpid());
    const std::string async = std::string(url->find('?') == std::string::npos ? "?" : "&") +
                              "options=-csynchronous_commit%3Doff";
    s = zeus::open_postgres_store(kind == kPostgres ? *url : *url + async, options);
  }
  if (!s) return zeus::fail(s.error());
  return (stores[kind] = std::move(*s)).get();
}

zeus::JobSpec spec(const std::string& id) {
  zeus::JobSpec s;
  s.job_id = id;
  s.job_id_prefix = "bench";
  s.batch_sizes = {16, 32, 64, 128};
  s.default_batch_size = 32;
  s.max_power_w = 300;
  s.target_metric = 0.5;
  s.mab_seed = 1;
  return s;
}

std::map<std::string, double> pairs_per_s;  // benchmark name -> pairs/s, for the ratios
std::mutex pairs_mu;

// Each iteration: next_batch_size, then one report that ends the trial. The job is replaced
// every 64 pairs so its history (read by every operation) stays short.
void BM_Pairs(benchmark::State& state, Kind kind, bool one_job) {
  zeus::Result<zeus::Store*> store = store_of(kind);
  if (!store) {
    state.SkipWithError(store.error().to_string().c_str());
    return;
  }
  zeus::BatchSizeOptimizer bso(**store);
  const std::string job = "bench_" + std::to_string(kind) + "_" + std::to_string(state.threads()) +
                          "_" +
                          (one_job ? std::string("one") : std::to_string(state.thread_index()));
  auto fresh_job = [&] {
    (void)bso.delete_job(job);
    return bso.register_job(spec(job));
  };
  if (!one_job || state.thread_index() == 0) {
    if (auto r = fresh_job(); !r) {
      state.SkipWithError(r.error().to_string().c_str());
      return;
    }
  }
  int64_t n = 0;
  for (auto _ : state) {
    zeus::Result<zeus::TrialId> t = bso.next_batch_size(job);
    if (!t) {
      state.SkipWithError(t.error().to_string().c_str());
      break;
    }
    auto d = bso.report({job, t->batch_size, t->trial_number, 10.0, 2000.0, 0.9, 1});
    if (!d) {
      state.SkipWithError(d.error().to_string().c_str());
      break;
    }
    if (!one_job && ++n % 64 == 0) {
      state.PauseTiming();
      (void)fresh_job();
      state.ResumeTiming();
    }
  }
  state.counters["pairs_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void register_all() {
  for (auto [kind, name] :
       {std::pair{kMemory, "Memory"}, std::pair{kSqlite, "Sqlite"},
        std::pair{kPostgres, "Postgres"}, std::pair{kPostgresAsync, "PostgresAsync"}}) {
    for (bool one_job : {false, true}) {
      const std::string bench =
          std::string("BM_Pairs/") + name + (one_job ? "/one_job" : "/own_job");
      auto* b = benchmark::RegisterBenchmark(
          bench.c_str(),
          [kind = kind, one_job](benchmark::State& s) { BM_Pairs(s, kind, one_job); });
      b->Threads(1)->Threads(8)->UseRealTime()->Unit(benchmark::kMicrosecond);
      // One job's history grows with every pair (it cannot be replaced under the other
      // threads), so its runs have a fixed length: 200 pairs per thread.
      if (one_job) {
        b->Iterations(200);
      } else {
        b->MinTime(1.0);
      }
    }
  }
}

// Collects pairs/s per benchmark for the ratio lines.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      auto it = r.counters.find("pairs_per_s");
      if (it != r.counters.end() && !r.error_occurred) pairs_per_s[r.benchmark_name()] = it->second;
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  register_all();
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nnext+report pairs/s, and the share of the memory store's rate:\n");
  for (const auto& [name, rate] : pairs_per_s) {
    std::string memory = name;
    for (const char* kind : {"PostgresAsync", "Postgres", "Sqlite"}) {
      if (auto p = memory.find(kind); p != std::string::npos)
        memory.replace(p, std::string(kind).size(), "Memory");
    }
    auto base = pairs_per_s.find(memory);
    std::printf("  %-45s %10.0f pairs/s", name.c_str(), rate);
    if (base != pairs_per_s.end() && base->second > 0)
      std::printf("  (%.3f of memory)", rate / base->second);
    std::printf("\n");
  }
  benchmark::Shutdown();
  return 0;
}
