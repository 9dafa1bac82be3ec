#include "proxy/sse_scan.h"

#include <nlohmann/json.hpp>

namespace zeus::proxy {
namespace {

using nlohmann::json;

// True when object[key] is a non-empty string; appends it to *text when text is set.
bool non_empty_string(const json& object, const char* key, std::string* text = nullptr) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
    return false;
  }
  if (text) text->append(it->get_ref<const std::string&>());
  return true;
}

}  // namespace

int64_t read_answer_json(std::string_view json_text, Usage* usage, std::string* model,
                         std::string* id, std::string* text) {
  const json doc = json::parse(json_text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return 0;
  if (const auto m = doc.find("model"); m != doc.end() && m->is_string() && model->empty()) {
    *model = m->get<std::string>();
  }
  if (const auto i = doc.find("id"); id && i != doc.end() && i->is_string() && id->empty()) {
    *id = i->get<std::string>();
  }
  if (const auto u = doc.find("usage"); u != doc.end() && u->is_object()) {
    for (const auto& [key, out] : {std::pair{"prompt_tokens", &usage->prompt_tokens},
                                   std::pair{"completion_tokens", &usage->completion_tokens}}) {
      const auto v = u->find(key);
      if (v != u->end() && v->is_number_integer() && v->get<int64_t>() >= 0) {
        *out = v->get<int64_t>();
      }
    }
  }
  int64_t chunks = 0;
  const auto choices = doc.find("choices");
  if (choices == doc.end() || !choices->is_array()) return 0;
  for (const json& choice : *choices) {
    if (!choice.is_object()) continue;
    const auto delta = choice.find("delta");
    const bool produced = non_empty_string(choice, "text", text) ||
                          (delta != choice.end() && delta->is_object() &&
                           (non_empty_string(*delta, "content", text) ||
                            non_empty_string(*delta, "reasoning_content", text)));
    chunks += produced ? 1 : 0;
  }
  return chunks;
}

void SseScanner::keep(std::string_view bytes) {
  if (keep_lines_) (saw_done_ ? held_ : complete_).append(bytes);
}

int64_t SseScanner::feed(std::string_view bytes) {
  int64_t tokens = 0;
  size_t start = 0;
  while (start < bytes.size()) {
    const size_t end = bytes.find('\n', start);
    const std::string_view piece = bytes.substr(
        start, end == std::string_view::npos ? std::string_view::npos : end + 1 - start);
    start = end == std::string_view::npos ? bytes.size() : end + 1;
    if (skipping_line_) {  // the rest of an over-long line: passed on, not read
      keep(piece);
      skipping_line_ = end == std::string_view::npos;
      continue;
    }
    partial_.append(piece);
    if (end == std::string_view::npos) {
      if (partial_.size() > kMaxLineBytes) {
        keep(partial_);
        partial_.clear();
        skipping_line_ = true;
      }
      break;
    }
    std::string_view line(partial_);
    line.remove_suffix(1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, 5) == "data:") {
      std::string_view data = line.substr(5);
      if (!data.empty() && data.front() == ' ') data.remove_prefix(1);
      if (data == "[DONE]") {
        saw_done_ = true;
      } else {
        std::string* text = keep_text_ && text_.size() < kMaxTextBytes ? &text_ : nullptr;
        const int64_t n = read_answer_json(data, &usage_, &model_, &id_, text);
        if (text_.size() > kMaxTextBytes) {  // cut on a character's first byte: stays UTF-8
          size_t cut = kMaxTextBytes;
          while (cut > 0 && (static_cast<unsigned char>(text_[cut]) & 0xC0) == 0x80) --cut;
          text_.resize(cut);
        }
        tokens += n;
        chunks_ += n;
      }
    }
    keep(partial_);
    partial_.clear();
  }
  return tokens;
}

std::string SseScanner::take_lines(bool hold_done) {
  std::string out;
  out.swap(complete_);
  if (!hold_done) {
    out.append(held_);
    held_.clear();
  }
  return out;
}

std::string SseScanner::take_text() {
  std::string out;
  out.swap(text_);
  return out;
}

std::string SseScanner::release_done() {
  std::string out = take_lines(false);
  if (keep_lines_) out.append(partial_);
  partial_.clear();
  return out;
}

}  // namespace zeus::proxy
