// What the proxy reads in one JSON object of an OpenAI-compatible answer — a whole answer or one
// chunk of a stream: its usage counts, model and id, and the chunks that produced a token (a
// choice with a non-empty "text", or a "delta" with a non-empty "content" or
// "reasoning_content"), with their text. Read by a SAX handler: nothing of the document is
// built, the parser still checks every byte, and the answer is the same as reading the parsed
// document would give (the last of duplicate keys wins; a malformed object reads as nothing).
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace zeus::proxy {

struct Usage {
  int64_t prompt_tokens = -1;  // -1: not given
  int64_t completion_tokens = -1;
};

// Reads one JSON object: usage counts (non-negative integers) where present, model and id where
// *model / *id are still empty; returns the token chunks in it (choices[] with non-empty text,
// delta.content or delta.reasoning_content), and appends their text to *text when text is set
// (per choice the first non-empty of those three). Not a JSON object: 0, nothing read.
int64_t read_answer_json(std::string_view json, Usage* usage, std::string* model,
                         std::string* id = nullptr, std::string* text = nullptr);

}  // namespace zeus::proxy
