// What the live page (/zeus/) adds to the proxy's work: the cost of publishing one finished
// request and one energy reading to the LiveFeed with 0, 1, 8 and 32 pages listening (each event
// formatted once as JSON and handed to every listener), and of the snapshot a page gets when it
// opens, with full ring buffers. The listeners here only count what they get, so the figures are
// the feed's own cost; the HTTP layer's queueing per listener comes on top (bench/http_bench.sh).
#include <benchmark/benchmark.h>

#include <memory>

#include "proxy/live_feed.h"

namespace {

class CountingStream final : public zeus::http::EventStream {
 public:
  bool send(std::string_view data, std::string_view) override {
    bytes += data.size();
    return true;
  }
  bool comment(std::string_view text) override {
    bytes += text.size();
    return true;
  }
  void close() override {}
  bool open() const override { return true; }
  size_t bytes = 0;
};

void BM_PublishFinishedRequest(benchmark::State& state) {
  zeus::proxy::LiveFeed feed(zeus::proxy::LiveFeedLimits{.max_listeners = 64});
  const int source = feed.add_source("proxy", "GPU 0");
  for (int i = 0; i < state.range(0); ++i) feed.subscribe(std::make_shared<CountingStream>());
  uint64_t id = 0;
  for (auto _ : state) {
    ++id;
    feed.started(source, id, "meta-llama/Llama-3.1-8B-Instruct", 1.0 * id);
    feed.finished(source, {id, "meta-llama/Llama-3.1-8B-Instruct", 1.0 * id, 1.0 * id + 2, 123.4,
                           256, 200});
  }
  state.SetLabel("start + end events per request");
}
BENCHMARK(BM_PublishFinishedRequest)->Arg(0)->Arg(1)->Arg(8)->Arg(32);

void BM_PublishEnergyReading(benchmark::State& state) {
  zeus::proxy::LiveFeed feed(
      zeus::proxy::LiveFeedLimits{.max_listeners = 64, .min_power_period_s = 0});
  const int source = feed.add_source("proxy", "GPU 0");
  for (int i = 0; i < state.range(0); ++i) feed.subscribe(std::make_shared<CountingStream>());
  double t = 0;
  for (auto _ : state) {
    t += 0.1;
    feed.energy(source, t, 300 * t);
  }
}
BENCHMARK(BM_PublishEnergyReading)->Arg(0)->Arg(8)->Arg(32);

void BM_SnapshotOfFullBuffers(benchmark::State& state) {
  zeus::proxy::LiveFeed feed;
  const int source = feed.add_source("proxy", "GPU 0");
  for (uint64_t id = 1; id <= 1000; ++id) {
    feed.finished(source, {id, "model-" + std::to_string(id % 8), 1.0 * id, 1.0 * id + 2, 12.5,
                           100, 200});
  }
  for (int i = 0; i < 4000; ++i) feed.energy(source, 0.1 * i, 30.0 * i);
  size_t bytes = 0;
  for (auto _ : state) bytes = feed.snapshot_json().size();
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_SnapshotOfFullBuffers);

}  // namespace

BENCHMARK_MAIN();
