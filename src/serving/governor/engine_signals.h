// EngineSignals: what an inference engine says of its own load on its Prometheus `/metrics`
// (requests running, requests waiting, KV-cache usage), read from the text exposition format
// (version 0.0.4) for the engines the clock governor knows:
//   vLLM       vllm:num_requests_running, vllm:num_requests_waiting, vllm:kv_cache_usage_perc
//              (vllm:gpu_cache_usage_perc before v1)
//   SGLang     sglang:num_running_reqs, sglang:num_queue_reqs, sglang:token_usage
//   TGI        tgi_batch_current_size, tgi_queue_size (no KV-cache gauge)
//   llama.cpp  llamacpp:requests_processing, llamacpp:requests_deferred,
//              llamacpp:kv_cache_usage_ratio
// A gauge given for several label sets (models, data-parallel ranks) is summed (the KV usage:
// the largest). The proxy sees only the requests that pass through it; the engine sees all of
// them: the governor takes the larger of the two (docs/proxy.md, "The engine's own signals").
// Only the families above are read; every other line is skipped. No Debian library parses this
// format for C++ (prometheus-cpp only writes it), so this reads the lines itself, strictly: a
// sample line is `name[{labels}] value [timestamp]`; a line it cannot read is skipped, counted,
// and never fatal.
// Pure: text in, signals out. Bounded: at most kMaxBytes of text are read.
#pragma once

#include <string>
#include <string_view>

#include "zeus/common/result.h"

namespace zeus {

struct EngineSignals {
  std::string engine;           // "vLLM", "SGLang", "TGI", "llama.cpp"
  double running = -1;          // -1: not exposed
  double waiting = -1;
  double kv_cache_usage = -1;   // 0-1; -1: not exposed
  int skipped_lines = 0;        // sample lines of the known families that could not be read
  std::string families;         // the gauges read, comma-separated (for the start-up report)
};

inline constexpr size_t kEngineMetricsMaxBytes = 4 << 20;

// Failure: NotFound when the text holds none of the known engines' running or waiting gauges
// (naming what it does hold, e.g. "no known engine's gauges (first metric: process_cpu_seconds_total)");
// InvalidArgument for more than kEngineMetricsMaxBytes.
Result<EngineSignals> read_engine_signals(std::string_view text);

}  // namespace zeus
