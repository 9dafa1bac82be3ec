#include "cli_parse.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace zeus::cli {
namespace {

std::string quoted(std::string_view option, std::string_view text) {
  return std::string(option) + " '" + echo_value(text) + "'";
}

tl::unexpected<Error> usage(std::string message) {
  return fail(ErrorCode::kInvalidArgument, std::move(message));
}

bool all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

std::string echo_value(std::string_view value, std::size_t max_bytes) {
  if (value.size() <= max_bytes) return std::string(value);
  std::size_t cut = max_bytes;
  // Back off to the start of a UTF-8 character (continuation bytes are 10xxxxxx).
  while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;
  return std::string(value.substr(0, cut)) + "\u2026(" + std::to_string(value.size()) + " bytes)";
}

std::string bound_message(std::string_view message, std::size_t max_bytes) {
  std::string bounded;
  std::size_t at = 0;
  // A quote opens after a non-letter and closes before one; an apostrophe ("server's") does not.
  auto is_word = [&message](std::size_t i) {
    return i < message.size() && std::isalnum(static_cast<unsigned char>(message[i])) != 0;
  };
  auto find_quote = [&](std::size_t from, bool opening) {
    for (std::size_t i = message.find('\'', from); i != std::string_view::npos;
         i = message.find('\'', i + 1)) {
      if (opening ? !(i > 0 && is_word(i - 1)) : !is_word(i + 1)) return i;
    }
    return std::string_view::npos;
  };
  while (at < message.size()) {
    const std::size_t open = find_quote(at, true);
    const std::size_t close = open == std::string_view::npos ? open : find_quote(open + 1, false);
    if (close == std::string_view::npos) break;
    bounded.append(message.substr(at, open + 1 - at));
    // A span already cut by echo_value() ("…(N bytes)" adds at most 24 bytes) stays as it is.
    const std::string_view span = message.substr(open + 1, close - open - 1);
    bounded += span.size() <= kEchoBytes + 24 ? std::string(span) : echo_value(span);
    bounded += '\'';
    at = close + 1;
  }
  bounded.append(message.substr(std::min(at, message.size())));
  return echo_value(bounded, max_bytes);
}

Result<double> parse_number(std::string_view text, std::string_view option) {
  double value = 0;
  const char* end = text.data() + text.size();
  // from_chars takes no leading '+' or spaces, and reads no hex without std::chars_format::hex.
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || stop != end || error == std::errc::invalid_argument) {
    return usage(quoted(option, text) + " is not a number");
  }
  if (error == std::errc::result_out_of_range || !std::isfinite(value)) {
    return usage(quoted(option, text) + " is not a finite number");
  }
  return value;
}

Result<uint64_t> parse_count(std::string_view text, std::string_view option, uint64_t min,
                             uint64_t max) {
  if (!all_digits(text)) return usage(quoted(option, text) + " is not a whole number");
  uint64_t value = 0;
  const auto [stop, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range || value > max) {
    return usage(quoted(option, text) + " is too large: at most " + std::to_string(max));
  }
  if (stop != text.data() + text.size())
    return usage(quoted(option, text) + " is not a whole number");
  if (value < min) {
    return usage(quoted(option, text) + " is too small: at least " + std::to_string(min));
  }
  return value;
}

Result<double> parse_seconds(std::string_view text, std::string_view option, SecondsRule rule) {
  std::string_view number = text;
  double scale = 1.0;
  // The unit, if any: the longest suffix first ("ms" before "s").
  for (const auto& [suffix, factor] :
       {std::pair<std::string_view, double>{"ms", 1e-3}, {"s", 1.0}, {"m", 60.0}, {"h", 3600.0}}) {
    if (number.size() > suffix.size() && number.substr(number.size() - suffix.size()) == suffix) {
      number.remove_suffix(suffix.size());
      scale = factor;
      break;
    }
  }
  Result<double> value = parse_number(number, option);
  const std::string forms = "seconds, or with a unit: 500ms, 10s, 2m, 1h";
  if (!value) return usage(quoted(option, text) + " is not a duration (" + forms + ")");
  const double seconds = *value * scale;
  if (!std::isfinite(seconds)) return usage(quoted(option, text) + " is too long");
  if (seconds < 0) return usage(quoted(option, text) + " must not be negative");
  if (seconds == 0 && rule.zero_allowed) return 0.0;
  if (seconds == 0 || seconds < rule.min_s) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%g", rule.min_s);
    return usage(quoted(option, text) + " is too short: at least " + buffer + " s" +
                 (rule.zero_allowed ? " (or 0)" : ""));
  }
  const double most = std::min(rule.max_s, 1e9);  // 31 years: below the overflow near 9.2e9 s
  if (seconds > most) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%g", most);
    return usage(quoted(option, text) + " is too long: at most " + buffer + " s" +
                 (most == 86400.0 ? " (a day)" : ""));
  }
  return seconds;
}

Result<std::vector<int>> parse_int_list(std::string_view text, std::string_view option,
                                        std::string_view items) {
  if (text.empty()) {
    return usage(std::string(option) + " is empty: give " + std::string(items) +
                 " (or leave it out)");
  }
  std::vector<int> values;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = text.substr(start, comma - start);
    int value = 0;
    const auto [stop, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (!all_digits(item) || error != std::errc() || stop != item.data() + item.size()) {
      return usage(quoted(option, text) + " is not a list of " + std::string(items));
    }
    values.push_back(value);
    start = comma + 1;
  }
  return values;
}

Result<NamedValue> parse_named_value(std::string_view text, std::string_view option,
                                     std::string_view value_start) {
  const std::size_t at = text.find(value_start);
  if (at == std::string_view::npos) return NamedValue{"", std::string(text)};
  if (at == 0) {
    return usage(quoted(option, text) + " has no name before '=': write NAME" +
                 std::string(value_start) + "...");
  }
  return NamedValue{std::string(text.substr(0, at)), std::string(text.substr(at + 1))};
}

}  // namespace zeus::cli
