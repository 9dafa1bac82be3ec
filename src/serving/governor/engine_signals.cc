#include "serving/governor/engine_signals.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <cstdlib>
#include <string>

namespace zeus {
namespace {

struct EngineFamilies {
  const char* engine;
  const char* running;
  const char* waiting;
  const char* kv[2];  // the KV-cache usage gauge (0-1), by version; nullptr: none
};

constexpr double kMostValue = 1e9;

constexpr EngineFamilies kEngines[] = {
    {"vLLM", "vllm:num_requests_running", "vllm:num_requests_waiting",
     {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}},
    {"SGLang", "sglang:num_running_reqs", "sglang:num_queue_reqs", {"sglang:token_usage", nullptr}},
    {"TGI", "tgi_batch_current_size", "tgi_queue_size", {nullptr, nullptr}},
    {"llama.cpp", "llamacpp:requests_processing", "llamacpp:requests_deferred",
     {"llamacpp:kv_cache_usage_ratio", nullptr}},
};

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
bool name_char(char c) { return name_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

// One sample line: its metric name and value. False for a line that is not one.
bool read_sample(std::string_view line, std::string_view& name, double& value) {
  size_t i = 0;
  if (line.empty() || !name_start(line[0])) return false;
  while (i < line.size() && name_char(line[i])) ++i;
  name = line.substr(0, i);
  if (i < line.size() && line[i] == '{') {
    // Labels: name="value" pairs; a value may hold escaped quotes and braces.
    bool quoted = false;
    for (++i; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted) {
        if (c == '\\') {
          ++i;
        } else if (c == '"') {
          quoted = false;
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == '}') {
        break;
      }
    }
    if (i >= line.size()) return false;  // no closing brace
    ++i;
  }
  if (i >= line.size() || (line[i] != ' ' && line[i] != '\t')) return false;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  size_t end = i;
  while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
  const std::string token(line.substr(i, end - i));
  if (token.empty() || token.size() > 64) return false;
  char* stop = nullptr;
  value = std::strtod(token.c_str(), &stop);
  return stop == token.c_str() + token.size();
}

}  // namespace

Result<EngineSignals> read_engine_signals(std::string_view text) {
  if (text.size() > kEngineMetricsMaxBytes) {
    return fail(ErrorCode::kInvalidArgument,
                "the metrics page is " + std::to_string(text.size()) + " bytes; at most " +
                    std::to_string(kEngineMetricsMaxBytes) + " are read");
  }
  struct Sum {
    double value = 0;
    bool seen = false;
  };
  constexpr size_t kCount = std::size(kEngines);
  Sum running[kCount], waiting[kCount], kv[kCount];
  int skipped[kCount] = {};
  std::string first_metric;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    std::string_view name;
    double value = 0;
    const bool ok = read_sample(line, name, value);
    if (first_metric.empty() && !name.empty()) first_metric = std::string(name.substr(0, 80));
    for (size_t e = 0; e < kCount; ++e) {
      const EngineFamilies& f = kEngines[e];
      Sum* into = nullptr;
      bool is_kv = false;
      if (name == f.running) into = &running[e];
      if (name == f.waiting) into = &waiting[e];
      for (const char* k : f.kv) {
        if (k && name == k) {
          into = &kv[e];
          is_kv = true;
        }
      }
      if (!into) continue;
      // No engine holds a billion requests: such a value is a broken page (and sums stay finite).
      if (!ok || !std::isfinite(value) || value < 0 || value > kMostValue) {
        ++skipped[e];
        continue;
      }
      into->value = is_kv ? std::max(into->value, value) : into->value + value;
      into->seen = true;
    }
  }
  for (size_t e = 0; e < kCount; ++e) {
    if (!running[e].seen && !waiting[e].seen) continue;
    const EngineFamilies& f = kEngines[e];
    EngineSignals s;
    s.engine = f.engine;
    s.skipped_lines = skipped[e];
    auto add = [&](const Sum& sum, double& into, const char* family) {
      if (!sum.seen) return;
      into = sum.value;
      s.families += (s.families.empty() ? "" : ", ") + std::string(family);
    };
    add(running[e], s.running, f.running);
    add(waiting[e], s.waiting, f.waiting);
    if (kv[e].seen) {
      s.kv_cache_usage = std::min(1.0, kv[e].value);
      s.families += ", KV-cache usage";
    }
    return s;
  }
  return fail(ErrorCode::kNotFound,
              first_metric.empty()
                  ? std::string("no metric at all")
                  : "no known engine's gauges (first metric: " + first_metric +
                        "); known: vLLM, SGLang, TGI, llama.cpp");
}

}  // namespace zeus
