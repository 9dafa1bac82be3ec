// zeus_load: a load generator for `zeus serve` — many client threads running whole job
// lifecycles (ask for a batch size, report each epoch until told to stop) against one or more
// server replicas, logging every answered request as a JSON line so a checker can compare the
// log with the database. Used by test/e2e/serve_*.sh and the server benchmark.
//
//   zeus_load --url http://127.0.0.1:8000,http://127.0.0.1:8001 --threads 32 --jobs 4
//       --lifecycles 5 --log answered.jsonl
//
// Thread i talks to replica i % replicas about job i % jobs. The made-up training converges for
// some batch sizes and not others (so pruning has work to do); time and energy are multiples of
// 0.5 s and 125 J, exact in any database. With --retry-s > 0, a request that got no answer (a
// server killed and restarting) is sent again until answered or the time is up; without it, the
// first transport error ends the thread. Exit status: 0 when every lifecycle finished with only
// 2xx answers; 1 otherwise (the summary on stdout says what failed).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http/client.h"
#include "http/url.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string urls;
  int threads = 8;
  int jobs = 2;
  int lifecycles = 5;
  double duration_s = 0;  // > 0: run lifecycles until this much time has passed instead
  double retry_s = 0;
  std::string log_path;
  std::string job_prefix = "load";
  std::string token;
  int max_epochs = 5;
};

// Appends JSON lines to the log, one write and flush per line (a line is never torn, and a
// line written is on disk even if this process is killed later).
class Log {
 public:
  explicit Log(const std::string& path) {
    if (!path.empty()) file_ = std::fopen(path.c_str(), "a");
  }
  ~Log() {
    if (file_) std::fclose(file_);
  }
  bool ok(const std::string& path) const { return path.empty() || file_ != nullptr; }
  void write(const json& line) {
    if (!file_) return;
    const std::string text = line.dump() + "\n";
    std::lock_guard<std::mutex> lock(mu_);
    std::fwrite(text.data(), 1, text.size(), file_);
    std::fflush(file_);
  }

 private:
  std::FILE* file_ = nullptr;
  std::mutex mu_;
};

struct Stats {
  std::atomic<long> pairs{0};    // next-batch-size answers
  std::atomic<long> reports{0};  // answered reports
  std::atomic<long> http_errors{0};
  std::atomic<long> transport_errors{0};  // requests that got no answer (retried or not)
  std::atomic<long> gave_up{0};
  std::mutex latency_mu;
  std::vector<double> latencies_s;  // of answered requests
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      if (i > start) out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

json job_spec(const Options& o, int k) {
  return {{"job_id", o.job_prefix + "_" + std::to_string(k)},
          {"job_id_prefix", o.job_prefix},
          {"batch_sizes", {16, 32, 64, 128}},
          {"default_batch_size", 32},
          {"eta_knob", 0.5},
          {"beta_knob", 2.0},
          {"target_metric", 0.9},
          {"higher_is_better_metric", true},
          {"max_epochs", o.max_epochs},
          {"num_pruning_rounds", 2},
          {"window_size", 0},
          {"mab_prior_mean", 0.0},
          {"mab_prior_precision", 0.0},
          {"mab_num_explorations", 2},
          {"mab_seed", 1000 + k},
          {"max_power", 300.0},
          {"number_of_gpus", 1},
          {"gpu_model", "load-test"}};
}

// Metric gained per epoch: 32 and 64 converge within 5 epochs, 16 barely, 128 never.
double metric_step(int batch_size) {
  switch (batch_size) {
    case 16:
      return 0.19;
    case 32:
      return 0.35;
    case 64:
      return 0.5;
    default:
      return 0.15;
  }
}

class Worker {
 public:
  Worker(const Options& o, const std::string& url, Stats& stats, Log& log)
      : o_(o), stats_(stats), log_(log) {
    zeus::http::ClientOptions options;
    options.timeout_s = 30;
    options.max_idle_connections = 1;
    const zeus::Result<zeus::http::HttpUrl> u = zeus::http::parse_http_url(url);
    if (!u) {
      std::cerr << "zeus_load: --url '" << url << "' " << u.error().message << "\n";
      std::exit(2);
    }
    client_ = std::move(*zeus::http::HttpClient::tcp(u->host, u->port, options));
    if (!o.token.empty()) headers_.emplace_back("Authorization", "Bearer " + o.token);
  }

  // One request with retries on transport errors; the answer, or nullopt when there was none.
  std::optional<zeus::http::HttpResponse> send(const std::string& method, const std::string& path,
                                               const std::string& body) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(o_.retry_s);
    for (;;) {
      const auto start = Clock::now();
      zeus::Result<zeus::http::HttpResponse> r = client_->request(method, path, body, headers_);
      if (r) {
        const double latency_s = std::chrono::duration<double>(Clock::now() - start).count();
        std::lock_guard<std::mutex> lock(stats_.latency_mu);
        stats_.latencies_s.push_back(latency_s);
        return std::move(*r);
      }
      ++stats_.transport_errors;
      if (Clock::now() >= deadline) {
        ++stats_.gave_up;
        return std::nullopt;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // false when the thread must stop (no answer, or an error answer).
  bool lifecycle(const std::string& job_id) {
    auto next = send("GET", "/jobs/batch_size?job_id=" + job_id, "");
    if (!next) return false;
    if (next->status != 200) return http_error("GET /jobs/batch_size", *next);
    const json trial = json::parse(next->body, nullptr, false);
    if (!trial.is_object() || !trial.contains("trial_number")) return http_error("next", *next);
    const int batch_size = trial["batch_size"], trial_number = trial["trial_number"];
    ++stats_.pairs;
    log_.write({{"event", "next"},
                {"job_id", job_id},
                {"trial_number", trial_number},
                {"batch_size", batch_size}});
    for (int epoch = 1; epoch <= o_.max_epochs + 1; ++epoch) {
      const double time_s = epoch * (batch_size / 16) * 0.5, energy_j = time_s * 250;
      const double metric = epoch * metric_step(batch_size);
      const json report = {
          {"job_id", job_id},      {"batch_size", batch_size}, {"trial_number", trial_number},
          {"time", time_s},        {"energy", energy_j},       {"metric", metric},
          {"current_epoch", epoch}};
      auto answer = send("POST", "/report", report.dump());
      if (!answer) return false;
      if (answer->status != 200) return http_error("POST /report", *answer);
      const json decision = json::parse(answer->body, nullptr, false);
      if (!decision.is_object() || !decision.contains("stop_train")) {
        return http_error("report", *answer);
      }
      ++stats_.reports;
      json line = report;
      line["event"] = "report";
      line["stop_train"] = decision["stop_train"];
      line["converged"] = decision["converged"];
      line["message"] = decision["message"];
      log_.write(line);
      if (decision["stop_train"].get<bool>()) return true;
    }
    std::cerr << "zeus_load: trial " << trial_number << " of " << job_id
              << " was never told to stop\n";
    ++stats_.http_errors;
    return false;
  }

 private:
  bool http_error(const std::string& what, const zeus::http::HttpResponse& r) {
    ++stats_.http_errors;
    std::cerr << "zeus_load: " << what << " answered " << r.status << ": " << r.body << "\n";
    return false;
  }

  const Options& o_;
  std::unique_ptr<zeus::http::HttpClient> client_;
  zeus::http::Headers headers_;
  Stats& stats_;
  Log& log_;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * (v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app("zeus_load: concurrent job lifecycles against zeus serve replicas");
  app.add_option("--url", o.urls, "server URLs, comma-separated")->required();
  app.add_option("--threads", o.threads, "client threads")->capture_default_str();
  app.add_option("--jobs", o.jobs, "jobs (registered first)")->capture_default_str();
  app.add_option("--lifecycles", o.lifecycles, "lifecycles per thread")->capture_default_str();
  app.add_option("--duration", o.duration_s, "> 0: run lifecycles for this many seconds instead");
  app.add_option("--retry-s", o.retry_s, "resend unanswered requests for up to this long");
  app.add_option("--log", o.log_path, "append every answered request here (JSON lines)");
  app.add_option("--job-prefix", o.job_prefix, "job ids are PREFIX_k")->capture_default_str();
  app.add_option("--token", o.token, "bearer token");
  app.add_option("--max-epochs", o.max_epochs, "max_epochs of the jobs")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const std::vector<std::string> urls = split(o.urls, ',');
  if (urls.empty() || o.threads < 1 || o.jobs < 1) {
    std::cerr << "zeus_load: need at least one URL, thread and job\n";
    return 2;
  }
  Log log(o.log_path);
  if (!log.ok(o.log_path)) {
    std::cerr << "zeus_load: cannot open log '" << o.log_path << "'\n";
    return 2;
  }
  Stats stats;
  {
    Worker registrar(o, urls[0], stats, log);
    for (int k = 0; k < o.jobs; ++k) {
      auto r = registrar.send("POST", "/jobs", job_spec(o, k).dump());
      if (!r || (r->status != 200 && r->status != 201)) {
        std::cerr << "zeus_load: registering job " << k
                  << " failed: " << (r ? r->body : std::string("no answer")) << "\n";
        return 1;
      }
    }
  }
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(o.duration_s);
  std::atomic<long> lifecycles_done{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < o.threads; ++i) {
    threads.emplace_back([&, i] {
      Worker w(o, urls[static_cast<size_t>(i) % urls.size()], stats, log);
      const std::string job = o.job_prefix + "_" + std::to_string(i % o.jobs);
      for (int k = 0; o.duration_s > 0 ? Clock::now() < end : k < o.lifecycles; ++k) {
        if (!w.lifecycle(job)) return;
        ++lifecycles_done;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  const long requests = static_cast<long>(stats.latencies_s.size());
  const json summary = {{"threads", o.threads},
                        {"replicas", urls.size()},
                        {"lifecycles", lifecycles_done.load()},
                        {"pairs", stats.pairs.load()},
                        {"reports", stats.reports.load()},
                        {"http_errors", stats.http_errors.load()},
                        {"transport_errors", stats.transport_errors.load()},
                        {"gave_up", stats.gave_up.load()},
                        {"elapsed_s", elapsed_s},
                        {"requests_per_s", requests / elapsed_s},
                        {"p50_latency_ms", 1000 * percentile(stats.latencies_s, 0.5)},
                        {"p99_latency_ms", 1000 * percentile(stats.latencies_s, 0.99)}};
  std::cout << summary.dump() << std::endl;
  const bool complete =
      o.duration_s > 0 || lifecycles_done.load() == static_cast<long>(o.threads) * o.lifecycles;
  return stats.http_errors.load() == 0 && stats.gave_up.load() == 0 && complete ? 0 : 1;
}
