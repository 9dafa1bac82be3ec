// libFuzzer target: what `zeus proxy` reads in an upstream's answer, which it does not control.
// For any bytes: no crash or leak; read_answer_json (the SAX handler) reads exactly what the
// parsed document gives (answer_json_reference.h); an SSE stream fed to SseScanner in pieces
// split anywhere (the split points taken from the input) passes through byte for byte — what
// the relay takes with its [DONE] line held back, then releases, is the input — and counts the
// same tokens, usage and model as the stream fed whole. The same bytes read as an engine's
// /metrics page (serving/governor/engine_signals.h, which the governor scrapes) give signals
// that are finite and within their ranges, or a clear refusal.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "proxy/answer_json.h"
#include "proxy/answer_json_reference.h"
#include "proxy/sse_scan.h"
#include "serving/governor/engine_signals.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zeus::proxy;
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  Usage sax_usage, dom_usage;
  std::string sax_model, dom_model, sax_id, dom_id, sax_text, dom_text;
  const int64_t sax = read_answer_json(text, &sax_usage, &sax_model, &sax_id, &sax_text);
  const int64_t dom =
      reference::reference_read(text, &dom_usage, &dom_model, &dom_id, &dom_text);
  require(sax == dom && sax_model == dom_model && sax_id == dom_id && sax_text == dom_text);
  require(sax_usage.prompt_tokens == dom_usage.prompt_tokens &&
          sax_usage.completion_tokens == dom_usage.completion_tokens);

  SseScanner whole(/*keep_lines=*/false);
  const int64_t whole_tokens = whole.feed(text);
  SseScanner pieces(/*keep_lines=*/true);
  int64_t piece_tokens = 0;
  std::string relayed;
  size_t at = 0;
  for (size_t k = 0; at < size; ++k) {
    const size_t step = 1 + data[k % size] % 17;  // split points from the input itself
    piece_tokens += pieces.feed(text.substr(at, step));
    relayed += pieces.take_lines(/*hold_done=*/true);
    at += step;
  }
  relayed += pieces.release_done();
  require(relayed == text);
  require(piece_tokens == whole_tokens && pieces.chunks() == whole.chunks());
  require(pieces.model() == whole.model() && pieces.id() == whole.id());
  require(pieces.usage().prompt_tokens == whole.usage().prompt_tokens &&
          pieces.usage().completion_tokens == whole.usage().completion_tokens);

  if (auto signals = zeus::read_engine_signals(text); signals) {
    require(!signals->engine.empty() && (signals->running >= 0 || signals->waiting >= 0));
    for (double v : {signals->running, signals->waiting}) require(v == -1 || (std::isfinite(v) && v >= 0));
    require(signals->kv_cache_usage == -1 ||
            (signals->kv_cache_usage >= 0 && signals->kv_cache_usage <= 1));
  } else {
    require(!signals.error().message.empty());
  }
  return 0;
}
