// What the proxy reads of a request body: the top-level "model" and "stream" of a JSON object,
// nothing else. nlohmann's SAX parser checks the whole body (a malformed one yields nothing) but
// builds no value: nested messages are lexed and skipped, not stored.
// The rules are those of a parsed document read with body["model"] / body["stream"]: the last
// occurrence of a key wins; "model" counts only as a string, "stream" only as the literal true;
// a body that is not a JSON object, or not valid JSON, has neither.
// Pure: text in, fields out.
//
//   RequestFields f = read_request_fields(R"({"model": "m", "stream": true, "messages": []})");
//   // f.model == "m", f.stream == true
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace zeus::proxy {

struct RequestFields {
  std::string model;    // "" when absent or not a string
  bool stream = false;  // "stream": true
};

RequestFields read_request_fields(std::string_view body);

// The most bytes of a client-chosen string (a model name, an X-Request-Id, an answer's id) that
// the proxy keeps, logs or exports: the live page, the steady-state window, the JSONL log and the
// /metrics labels each hold at most this per entry, whatever size a request gave it.
inline constexpr size_t kMaxLabelBytes = 256;

// `text` if it fits kMaxLabelBytes, else its first bytes up to a UTF-8 character's start and
// "..." so that the whole fits (a cut name stays valid UTF-8 and looks cut).
std::string clip_label(std::string_view text);

}  // namespace zeus::proxy
