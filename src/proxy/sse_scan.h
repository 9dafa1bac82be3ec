// What the proxy reads in an OpenAI-compatible answer, without changing it: the output tokens of a
// Server-Sent Events stream (one non-empty choices[].delta.content / .text / .reasoning_content
// chunk = one token, unless usage says otherwise), its usage counts and model, and where its
// "data: [DONE]" line is. Pure: bytes in, counts out; fed piece by piece as they arrive, split
// anywhere.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace zeus::proxy {

struct Usage {
  int64_t prompt_tokens = -1;  // -1: not given
  int64_t completion_tokens = -1;
};

// Reads one JSON object (a chunk or a whole answer): usage and model where present; returns the
// token chunks in it (non-empty content or text in choices[]), and appends their text to *text
// when text is set. Not JSON: 0, nothing read.
int64_t read_answer_json(std::string_view json, Usage* usage, std::string* model,
                         std::string* text = nullptr);

class SseScanner {
 public:
  // Scans `bytes`; answers the tokens seen in the lines it completed.
  int64_t feed(std::string_view bytes);
  // The complete lines fed so far that were not taken yet (each with its "\n"); with
  // hold_done, a "data: [DONE]" line and what follows stay back until release_done().
  std::string take_lines(bool hold_done);
  std::string release_done();  // the held [DONE] line and the rest, then the unfinished line
  // The answer's text (the chunks' content) fed since the last call.
  std::string take_text();
  bool saw_done() const { return saw_done_; }
  const Usage& usage() const { return usage_; }
  const std::string& model() const { return model_; }
  int64_t chunks() const { return chunks_; }

 private:
  std::string partial_;   // the line being received
  std::string complete_;  // complete lines not taken yet
  std::string held_;      // from "data: [DONE]" on
  bool saw_done_ = false;
  Usage usage_;
  std::string model_;
  int64_t chunks_ = 0;
  std::string text_;  // not taken yet
};

}  // namespace zeus::proxy
