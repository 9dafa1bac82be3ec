// Fuzzes the zeus CLI's readers of option values (tools/zeus/cli_parse.h): any bytes give a value
// within the reader's rules or an error whose echo of the input is bounded, never a crash, a
// saturated count, or a non-finite or negative duration.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cli_parse.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

// Every error message repeats at most kEchoBytes of the input (plus the option and the text).
void require_bounded(const zeus::Error& error) { require(error.message.size() < 400); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zeus::cli;
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  if (auto n = parse_number(text, "--eta")) {
    require(std::isfinite(*n));
  } else {
    require_bounded(n.error());
  }
  if (auto c = parse_count(text, "--seeds", 1, 1000)) {
    require(*c >= 1 && *c <= 1000);
  } else {
    require_bounded(c.error());
  }
  if (auto s = parse_seconds(text, "--duration", {0.01, true})) {
    require(std::isfinite(*s) && (*s == 0 || *s >= 0.01));
  } else {
    require_bounded(s.error());
  }
  if (auto list = parse_int_list(text, "--gpus", "GPU indices like 0,1")) {
    require(!list->empty());
    for (int i : *list) require(i >= 0);
  } else {
    require_bounded(list.error());
  }
  require(echo_value(text).size() <= kEchoBytes + 32);
  require(bound_message(text, 2048).size() <= 2048 + 32);
  return 0;
}
