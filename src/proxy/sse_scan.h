// What the proxy reads in an OpenAI-compatible answer, without changing it: the output tokens of a
// Server-Sent Events stream (one non-empty choices[].delta.content / .text / .reasoning_content
// chunk = one token, unless usage says otherwise), its usage counts and model, and where its
// "data: [DONE]" line is. Pure: bytes in, counts out; fed piece by piece as they arrive, split
// anywhere. Memory is bounded whatever the stream's length: lines are kept only when the caller
// takes them (keep_lines), and a line longer than kMaxLineBytes is passed on unread (its tokens
// are not counted).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "proxy/answer_json.h"

namespace zeus::proxy {

class SseScanner {
 public:
  static constexpr size_t kMaxLineBytes = 1 << 20;
  static constexpr size_t kMaxTextBytes = 1 << 20;
  // keep_lines: the scanned lines are kept for take_lines()/release_done() (a relay that edits
  // the stream); without, they are dropped once scanned (a relay that forwards the bytes as
  // they come) and take_lines() answers nothing. keep_text: the answer's text (the chunks'
  // content) is kept for take_text() (the Colosseum shows it); at most kMaxTextBytes of it wait
  // between two calls, the rest is dropped.
  explicit SseScanner(bool keep_lines = true, bool keep_text = false)
      : keep_lines_(keep_lines), keep_text_(keep_text) {}
  // Scans `bytes`; answers the tokens seen in the lines it completed.
  int64_t feed(std::string_view bytes);
  // The complete lines fed so far that were not taken yet (each with its "\n"); with
  // hold_done, a "data: [DONE]" line and what follows stay back until release_done().
  std::string take_lines(bool hold_done);
  std::string release_done();  // the held [DONE] line and the rest, then the unfinished line
  // The answer's text (the chunks' content) fed since the last call; "" without keep_text.
  std::string take_text();
  bool saw_done() const { return saw_done_; }
  const Usage& usage() const { return usage_; }
  const std::string& model() const { return model_; }
  const std::string& id() const { return id_; }  // the answer's "id", "" when none
  int64_t chunks() const { return chunks_; }
  // Bytes the scanner holds now (the line being received and the kept lines).
  size_t buffered_bytes() const {
    return partial_.size() + complete_.size() + held_.size() + text_.size();
  }

 private:
  void keep(std::string_view bytes);

  bool keep_lines_;
  bool keep_text_;
  bool skipping_line_ = false;  // the line being received is over kMaxLineBytes: passed unread
  std::string partial_;         // the line being received
  std::string complete_;        // complete lines not taken yet
  std::string held_;            // from "data: [DONE]" on
  bool saw_done_ = false;
  Usage usage_;
  std::string model_;
  std::string id_;
  int64_t chunks_ = 0;
  std::string text_;  // not taken yet
};

}  // namespace zeus::proxy
