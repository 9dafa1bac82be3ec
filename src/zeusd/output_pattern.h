// A command override's error_pattern (command_overrides.h): upstream's regex syntax (Rust's regex
// crate, `(?i)` and the other inline flags included), read and matched by RE2 in time linear in
// the output's size and in bounded memory, whatever the pattern: no pattern and no output can
// crash or stall zeusd (std::regex backtracks, recursing once per character).
// Thread-safety: a compiled pattern is immutable; matches() may run on many threads.
//
//   Result<OutputPattern> p = OutputPattern::compile("(?i)error|fail");
//   p->matches("ERROR: not permitted")   // true
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "zeus/common/result.h"

namespace re2 {
class RE2;
}

namespace zeus::zeusd {

class OutputPattern {
 public:
  // kInvalidArgument with RE2's reason for a pattern it cannot read.
  static Result<OutputPattern> compile(const std::string& text);
  // True when the pattern matches anywhere in `output`.
  bool matches(std::string_view output) const;
  const std::string& text() const { return text_; }

 private:
  std::shared_ptr<const re2::RE2> re_;
  std::string text_;
};

}  // namespace zeus::zeusd
