#include "proxy/sse_scan.h"

namespace zeus::proxy {

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
