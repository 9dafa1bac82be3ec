// The `zeus` CLI's readers of option values: numbers, counts, durations and index lists, and the
// one rule for echoing a user's value inside an error message. Pure functions (no I/O, no exit):
// the subcommands bind them to options through add_parsed_option() (cli_util.h), and
// fuzz/cli_parse_fuzz.cc feeds them arbitrary bytes.
//
// Every error message names the option and echoes the offending value through echo_value(), so
// a 100 KB argument never comes back in full (its first 80 bytes and its size).
//
//   auto n = parse_count("12", "--seeds", 1, 1000);        // 12
//   auto t = parse_seconds("500ms", "--interval", {0.01});  // 0.5
//   auto g = parse_int_list("0,2", "--gpus", "GPU indices like 0,1");
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/result.h"

namespace zeus::cli {

// The most bytes of a user's value that an error message repeats.
inline constexpr std::size_t kEchoBytes = 80;

// `value` as an error message may show it: unchanged up to `max_bytes`, else its first
// `max_bytes` bytes (never half a UTF-8 character) followed by "…(N bytes)".
std::string echo_value(std::string_view value, std::size_t max_bytes = kEchoBytes);

// An error message made safe to print: each '...'-quoted span (how Zeus's messages quote a
// user's value) goes through echo_value(), and the whole through echo_value(.., max_bytes).
// For messages that come from the library, which quotes what it was given in full.
std::string bound_message(std::string_view message, std::size_t max_bytes);

// A finite decimal number ("2", "0.5", "1e3"); no spaces, no hex, no nan or inf.
Result<double> parse_number(std::string_view text, std::string_view option);

// A whole number in [min, max] written in decimal digits only; a value past `max` (or past
// 2^64 - 1) is an error naming the maximum, never saturated.
Result<uint64_t> parse_count(std::string_view text, std::string_view option, uint64_t min,
                             uint64_t max);

// What parse_seconds() accepts.
struct SecondsRule {
  double min_s = 0.0;         // smallest accepted value other than 0
  bool zero_allowed = false;  // whether "0" is accepted (e.g. "0 = until Ctrl-C")
  // Largest accepted value: a day by default (an interval, a period, a timeout); a duration of
  // work, or an interval its command cuts at its own deadline, may allow more. Never past 1e9 s:
  // waits convert to nanoseconds, which overflow at about 9.2e9 s (a wait that overflows spins).
  double max_s = 86400.0;
};

// A duration: a finite number of seconds, optionally with a unit (ms, s, m, h): "10", "2.5s",
// "500ms", "2m", "1h". Negative, nan and inf are errors.
Result<double> parse_seconds(std::string_view text, std::string_view option, SecondsRule rule);

// A comma-separated list of non-negative integers ("0,1,3"). `items` says what the list holds
// for the error ("GPU indices like 0,1"). Empty text and empty items ("8,,16") are errors.
Result<std::vector<int>> parse_int_list(std::string_view text, std::string_view option,
                                        std::string_view items);

// "NAME=VALUE" split where `value_start` begins after a '=' (e.g. "=http://" for
// "--upstream llama=http://127.0.0.1:8000"): the name before, the value after the '='. Text
// without it is a value with an empty name. A named value with an empty name ("=http://...") is
// an error.
struct NamedValue {
  std::string name;
  std::string value;
};
Result<NamedValue> parse_named_value(std::string_view text, std::string_view option,
                                     std::string_view value_start);

}  // namespace zeus::cli
