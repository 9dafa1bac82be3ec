// zeus proxy's cost, measured in one run against direct requests to the same upstream: a small
// OpenAI-compatible upstream on the project's HTTP layer in this process (answers at once: a
// JSON answer with usage, or a stream of N token chunks), the real LlmProxy in front of it
// measuring one fake-NVML GPU (the real NVML backend dlopen'ing testing/fake_nvml), and the
// project's HTTP client. Measured:
//   - one non-streamed request, direct and through the proxy (goal: < 100 us added);
//   - one stream of 1,000 tokens, direct and through the proxy (the cost per streamed token);
//   - requests per second with 32 clients at once (goal: < 5 % fewer through the proxy), with an
//     upstream that answers at once (the proxy's cost laid bare: it does as much HTTP work as
//     the upstream) and one that takes 20 ms per answer (a small model's generation);
//   - the scan of one streamed token's chunk (SseScanner, as the relay runs it);
//   - reading a request body's model and stream, 1, 8 and 80 KB: the SAX handler the proxy uses
//     (read_request_fields) against the filtered document parse it replaced;
//   - the attribution core (EnergyLedger) with 1,000 requests in flight: one reading of the
//     counters with a token from each, and one request's end and settlement once 1,000 others
//     have ended during its life (the proxy reads the counters at every end, so a request's
//     life spans about as many intervals as there are requests in flight).
// Each HTTP benchmark also reports the process's CPU time per request (all threads: client,
// proxy, upstream), which a loaded machine's wall-clock times hide.
// The differences and ratios are printed after the table.
//
//   build/release/bench/proxy_bench --benchmark_min_time=1
//   PROXY_BENCH_IO_THREADS=4 build/release/bench/proxy_bench   # the proxy with 4 loop threads
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "bench/bench_main.h"
#include "device/nvml/nvml_gpu.h"
#include "http/client.h"
#include "http/server.h"
#include "proxy/attribution.h"
#include "proxy/proxy.h"
#include "proxy/request_fields.h"
#include "proxy/sse_scan.h"
#include "zeus/common/log.h"

namespace {

using zeus::http::HttpResponse;

constexpr int kStreamTokens = 1000;
constexpr int kClients = 32;

const std::string kWholeAnswer =
    R"({"id":"cmpl-b","object":"chat.completion","model":"m","choices":[{"index":0,)"
    R"("message":{"role":"assistant","content":"tok0 tok1 tok2 tok3 tok4 tok5 tok6 tok7"},)"
    R"("finish_reason":"length"}],"usage":{"prompt_tokens":7,"completion_tokens":8,)"
    R"("total_tokens":15}})";
const std::string kChunk =
    "data: {\"id\":\"cmpl-b\",\"object\":\"chat.completion.chunk\",\"model\":\"m\","
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok \"}}]}\n\n";
const std::string kWholeBody = R"({"model":"m","max_tokens":8,"messages":[]})";
const std::string kSlowBody = R"({"model":"m","max_tokens":8,"delay_ms":20,"messages":[]})";
const std::string kStreamBody = R"({"model":"m","stream":true,"messages":[]})";

struct Setup {
  zeus::Devices devices;
  std::unique_ptr<zeus::http::HttpServer> upstream;
  std::unique_ptr<zeus::proxy::LlmProxy> proxy;
  std::unique_ptr<zeus::http::HttpClient> direct, proxied;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "proxy_bench: %s\n", what.c_str());
  std::exit(1);
}

std::unique_ptr<zeus::http::HttpClient> client_to(int port) {
  zeus::http::ClientOptions options;
  options.max_idle_connections = 2 * kClients;
  auto client = zeus::http::HttpClient::tcp("127.0.0.1", port, options);
  if (!client) die(client.error().message);
  return std::move(*client);
}

// The upstream, the proxy and a client to each, started once.
Setup& setup() {
  static Setup s = [] {
    Setup out;
    ::unsetenv("ZEUS_FAKE_NVML_STATE");  // one fake H100, its state in memory
    // PROXY_BENCH_FAKE_NVML: the fake's path where the build tree is not (the GPU check kit).
    const char* fake = std::getenv("PROXY_BENCH_FAKE_NVML");
    auto gpus = zeus::open_nvml_gpus(fake != nullptr && *fake != '\0' ? fake : ZEUS_FAKE_NVML_PATH);
    if (!gpus) die(gpus.error().message);
    out.devices.gpus = std::move(*gpus);
    zeus::http::ServerOptions options;
    options.name = "bench upstream";
    options.workers = 4 * kClients;
    auto upstream = zeus::http::HttpServer::start(
        options, zeus::http::HttpServer::on_workers([](const zeus::http::HttpRequest& request,
                                                       const zeus::http::Peer&,
                                                       std::shared_ptr<zeus::http::Reply> reply) {
          if (request.body.find("\"delay_ms\":20") != std::string::npos) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
          if (request.body.find("\"stream\":true") == std::string::npos) {
            reply->send(HttpResponse{200, kWholeAnswer, "application/json", {}, false});
            return;
          }
          zeus::http::StreamHead head;
          head.content_type = "text/event-stream";
          auto stream = reply->start_body(std::move(head));
          if (!stream) return;
          for (int i = 0; i < kStreamTokens && stream->write(kChunk); ++i) {
          }
          stream->write("data: [DONE]\n\n");
          stream->finish({});
        }));
    if (!upstream) die(upstream.error().message);
    out.upstream = std::move(*upstream);
    auto upstream_port = out.upstream->listen_tcp("127.0.0.1", 0);
    if (!upstream_port) die(upstream_port.error().message);
    zeus::proxy::ProxyOptions proxy_options;
    proxy_options.upstream = *zeus::proxy::parse_upstream_url(
        "http://127.0.0.1:" + std::to_string(*upstream_port), "--upstream");
    proxy_options.port = 0;
    proxy_options.gpu_indices = {0};
    // PROXY_BENCH_IO_THREADS=N: the proxy's event-loop threads (--io-threads; default 1).
    if (const char* n = std::getenv("PROXY_BENCH_IO_THREADS")) {
      proxy_options.io_threads = std::atoi(n);
    }
    auto proxy = zeus::proxy::LlmProxy::start(out.devices, proxy_options);
    if (!proxy) die(proxy.error().message);
    out.proxy = std::move(*proxy);
    out.direct = client_to(*upstream_port);
    out.proxied = client_to(out.proxy->port());
    return out;
  }();
  return s;
}

zeus::http::HttpClient& client(bool through_proxy) {
  return through_proxy ? *setup().proxied : *setup().direct;
}

double process_cpu_us() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return 1e6 * static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// The process's CPU time per iteration (every thread), as a counter of the benchmark.
class CpuPerIteration {
 public:
  explicit CpuPerIteration(benchmark::State& state) : state_(state), start_us_(process_cpu_us()) {}
  ~CpuPerIteration() {
    if (state_.thread_index() == 0 && state_.iterations() > 0) {
      state_.counters["process_cpu_us"] = benchmark::Counter(
          (process_cpu_us() - start_us_) / state_.threads(), benchmark::Counter::kAvgIterations);
    }
  }

 private:
  benchmark::State& state_;
  const double start_us_;
};

void BM_Request(benchmark::State& state) {
  zeus::http::HttpClient& c = client(state.range(0) == 1);
  CpuPerIteration cpu(state);
  for (auto _ : state) {
    auto answer = c.request("POST", "/v1/chat/completions", kWholeBody);
    if (!answer || answer->status != 200 || answer->body != kWholeAnswer) {
      state.SkipWithError("a request failed");
      return;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Request)
    ->ArgName("proxy")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_Stream(benchmark::State& state) {
  zeus::http::HttpClient& c = client(state.range(0) == 1);
  const size_t expected = kChunk.size() * kStreamTokens + 14;
  CpuPerIteration cpu(state);
  for (auto _ : state) {
    size_t bytes = 0;
    auto answer = c.stream(
        "POST", "/v1/chat/completions", kStreamBody, {},
        [&](std::string_view piece) {
          bytes += piece.size();
          return true;
        },
        30);
    if (!answer || answer->status != 200 || bytes != expected) {
      // What broke: the answer's error, or a whole-looking answer that was short.
      std::fprintf(stderr, "stream failed: %s, status %d, %zu of %zu bytes\n",
                   answer ? "answered" : answer.error().to_string().c_str(),
                   answer ? answer->status : 0, bytes, expected);
      state.SkipWithError("a stream failed");
      return;
    }
  }
  state.SetItemsProcessed(state.iterations() * kStreamTokens);
}
BENCHMARK(BM_Stream)->ArgName("proxy")->Arg(0)->Arg(1)->UseRealTime()->Unit(
    benchmark::kMicrosecond);

// kClients threads at once: items per second is the throughput. Second argument: the upstream's
// time per answer (0 or 20 ms).
void BM_Clients(benchmark::State& state) {
  zeus::http::HttpClient& c = client(state.range(0) == 1);
  const std::string& body = state.range(1) == 0 ? kWholeBody : kSlowBody;
  for (auto _ : state) {
    auto answer = c.request("POST", "/v1/chat/completions", body);
    if (!answer || answer->status != 200) {
      state.SkipWithError("a request failed");
      return;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Clients)
    ->ArgNames({"proxy", "upstream_ms"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({0, 20})
    ->Args({1, 20})
    ->Threads(kClients)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// The proxy's scan of one streamed token: a chunk as vLLM sends it (with logprobs off) through
// the SseScanner a relay uses (lines not kept), read for its tokens, usage, model and id.
void BM_ScanStreamedToken(benchmark::State& state) {
  const std::string chunk =
      "data: {\"id\":\"chatcmpl-b\",\"object\":\"chat.completion.chunk\",\"created\":1732500000,"
      "\"model\":\"meta-llama/Llama-3.1-8B-Instruct\",\"choices\":[{\"index\":0,\"delta\":"
      "{\"content\":\" token\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
  zeus::proxy::SseScanner scanner(/*keep_lines=*/false);
  int64_t tokens = 0;
  for (auto _ : state) tokens += scanner.feed(chunk);
  if (tokens != state.iterations()) state.SkipWithError("a token was not counted");
}
BENCHMARK(BM_ScanStreamedToken)->Unit(benchmark::kMicrosecond);

// A chat request whose one message is `kb` KB of text (a long prompt), model and stream last.
std::string chat_body(int64_t kb) {
  std::string body = R"({"messages":[{"role":"user","content":")";
  while (body.size() < static_cast<size_t>(kb) * 1024 - 96) {
    body += R"(the prompt's text, with words, \"quotes\" and \u00e9 escapes in it. )";
  }
  return body + R"("}],"max_tokens":64,"model":"meta-llama/Llama-3.1-8B-Instruct","stream":true})";
}

// The proxy's read of a request body: model and stream through the SAX handler (now), or
// through a document parse that discards nested values (before). Argument: the body in KB.
void BM_ReadRequestBody(benchmark::State& state) {
  const std::string body = chat_body(state.range(1));
  const bool sax = state.range(0) == 1;
  for (auto _ : state) {
    bool stream = false;
    std::string model;
    if (sax) {
      zeus::proxy::RequestFields fields = zeus::proxy::read_request_fields(body);
      stream = fields.stream;
      model = std::move(fields.model);
    } else {
      const nlohmann::json doc = nlohmann::json::parse(
          body,
          [](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
            return depth == 0 || (event != nlohmann::json::parse_event_t::object_start &&
                                  event != nlohmann::json::parse_event_t::array_start);
          },
          false);
      stream = doc.is_object() && doc.contains("stream") && doc["stream"] == true;
      if (doc.is_object() && doc.contains("model") && doc["model"].is_string()) model = doc["model"];
    }
    if (!stream || model.empty()) {
      state.SkipWithError("model or stream not read");
      return;
    }
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(body.size()));
}
BENCHMARK(BM_ReadRequestBody)
    ->ArgNames({"sax", "kb"})
    ->ArgsProduct({{0, 1}, {1, 8, 80}})
    ->Unit(benchmark::kMicrosecond);

// 1,000 requests in flight, each producing a token per interval: one reading of the counters.
void BM_LedgerSample1000InFlight(benchmark::State& state) {
  const int in_flight = static_cast<int>(state.range(0));
  zeus::proxy::EnergyLedger ledger;
  double t = 0, energy = 0;
  ledger.sample(t, energy);
  for (int id = 1; id <= in_flight; ++id) ledger.start(id, t, true);
  for (auto _ : state) {
    t += 0.1;
    energy += 30;
    for (int id = 1; id <= in_flight; ++id) ledger.tokens(id, t, 1);
    ledger.sample(t, energy);
  }
  state.counters["in_flight"] = static_cast<double>(ledger.in_flight());
}
BENCHMARK(BM_LedgerSample1000InFlight)->Arg(1000)->Iterations(200)->Unit(benchmark::kMicrosecond);

// 1,000 requests in flight over a window of 20 intervals: one request ends (its shares of the
// intervals it lived in are settled at the next reading) and another starts in its place.
void BM_LedgerEndOf1000InFlight(benchmark::State& state) {
  const int in_flight = static_cast<int>(state.range(0));
  constexpr int kIntervals = 20;
  zeus::proxy::EnergyLedger ledger;
  double t = 0, energy = 0;
  ledger.sample(t, energy);
  uint64_t next_id = 1;
  for (int i = 0; i < in_flight; ++i) ledger.start(next_id++, t, true);
  for (int k = 0; k < kIntervals; ++k) {
    t += 0.1;
    energy += 30;
    for (uint64_t id = next_id - in_flight; id < next_id; ++id) ledger.tokens(id, t, 1);
    ledger.sample(t, energy);
  }
  uint64_t oldest = 1;
  const auto end_one = [&] {
    t += 1e-4;
    energy += 0.03;
    ledger.end(oldest++, t);
    ledger.start(next_id++, t, true);
    ledger.sample(t, energy);
    benchmark::DoNotOptimize(ledger.take_finished());
  };
  for (int i = 0; i < in_flight; ++i) end_one();  // every request now lived through 1,000 ends
  for (auto _ : state) end_one();
  state.counters["in_flight"] = static_cast<double>(ledger.in_flight());
}
BENCHMARK(BM_LedgerEndOf1000InFlight)->Arg(1000)->Iterations(200)->Unit(benchmark::kMicrosecond);

// The table, then the proxy's cost against direct requests from the same run.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const auto items = run.counters.find("items_per_second");
      Times& times = times_[run.benchmark_name()];
      times.real_us = run.GetAdjustedRealTime();
      if (items != run.counters.end()) times.items_per_s = items->second;
      const auto cpu = run.counters.find("process_cpu_us");
      if (cpu != run.counters.end()) times.cpu_us = cpu->second;
    }
    ConsoleReporter::ReportRuns(runs);
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    const Times request_direct = find("BM_Request/proxy:0/real_time");
    const Times request_proxy = find("BM_Request/proxy:1/real_time");
    const Times stream_direct = find("BM_Stream/proxy:0/real_time");
    const Times stream_proxy = find("BM_Stream/proxy:1/real_time");
    const std::string threads = "/real_time/threads:" + std::to_string(kClients);
    if (request_direct.real_us > 0 && request_proxy.real_us > 0) {
      const double added_us = request_proxy.real_us - request_direct.real_us;
      std::printf(
          "one request: %.1f us direct, %.1f us through the proxy: %.1f us added "
          "(goal < 100 us): %s; process CPU %.1f us direct, %.1f us through the proxy "
          "(%.1f us added)\n",
          request_direct.real_us, request_proxy.real_us, added_us,
          added_us < 100 ? "met" : "NOT met", request_direct.cpu_us, request_proxy.cpu_us,
          request_proxy.cpu_us - request_direct.cpu_us);
    }
    if (stream_direct.real_us > 0 && stream_proxy.real_us > 0) {
      std::printf(
          "one stream of %d tokens: %.0f us direct, %.0f us through the proxy: %.2f us "
          "added per token (process CPU %.2f us added per token)\n",
          kStreamTokens, stream_direct.real_us, stream_proxy.real_us,
          (stream_proxy.real_us - stream_direct.real_us) / kStreamTokens,
          (stream_proxy.cpu_us - stream_direct.cpu_us) / kStreamTokens);
    }
    for (const char* upstream_ms : {"0", "20"}) {
      const std::string ms = std::string("/upstream_ms:") + upstream_ms;
      const Times direct = find("BM_Clients/proxy:0" + ms + threads);
      const Times proxied = find("BM_Clients/proxy:1" + ms + threads);
      if (direct.items_per_s <= 0 || proxied.items_per_s <= 0) continue;
      const double loss = 1 - proxied.items_per_s / direct.items_per_s;
      std::printf(
          "%d clients, upstream answering in %s ms: %.0f requests/s direct, %.0f through "
          "the proxy: %.1f %% fewer (goal < 5 %%): %s\n",
          kClients, upstream_ms, direct.items_per_s, proxied.items_per_s, 100 * loss,
          loss < 0.05 ? "met" : "NOT met");
    }
  }

 private:
  struct Times {
    double real_us = -1;
    double items_per_s = -1;
    double cpu_us = -1;
  };
  Times find(const std::string& name) const {
    auto it = times_.find(name);
    return it == times_.end() ? Times{} : it->second;
  }
  std::map<std::string, Times> times_;
};

}  // namespace

int main(int argc, char** argv) {
  RatioReporter reporter;
  return zeus::bench::run_all(argc, argv, reporter);
}
