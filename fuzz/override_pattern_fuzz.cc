// libFuzzer target: zeusd's matcher of a command override's output against its error_pattern
// (zeusd/output_pattern.h, RE2). The input is a pattern, a newline, then the output. For any
// bytes: no crash, no leak, no stall (libFuzzer's -timeout flags a slow input); a pattern that
// compiles matches consistently (twice the same answer), and a literal pattern (every character
// escaped) matches exactly when the output contains it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "zeusd/output_pattern.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  if (newline == std::string_view::npos) return 0;
  const std::string pattern(input.substr(0, newline));
  const std::string_view output = input.substr(newline + 1);
  if (auto compiled = zeus::zeusd::OutputPattern::compile(pattern)) {
    const bool first = compiled->matches(output);
    require(compiled->matches(output) == first);
  }
  if (pattern.find('\0') == std::string::npos && !pattern.empty()) {
    std::string literal;
    for (const char c : pattern) {
      const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      if (!plain) literal += '\\';
      literal += c;
    }
    if (auto exact = zeus::zeusd::OutputPattern::compile(literal)) {
      require(exact->matches(output) == (output.find(pattern) != std::string_view::npos));
    }
  }
  return 0;
}
