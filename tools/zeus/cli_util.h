// Helpers shared by the `zeus` subcommands: one-line errors, options read by the parsers of
// cli_parse.h, device discovery, number formatting.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_parse.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"

namespace zeus::cli {

// The most bytes of one error message. die() passes every message through bound_message(), so no
// error repeats unbounded input, even when a library's message quotes it.
inline constexpr std::size_t kMaxErrorBytes = 2048;

// Prints "zeus: <message>" on stderr (through bound_message()) and ends the command with
// `exit_code`.
[[noreturn]] void die(const std::string& message, int exit_code = 1);

// die() when `path` is a directory: "<what> '<path>' is a directory; <fix>" (a directory opens as
// a stream that reads nothing, which would otherwise read as an empty file).
void die_if_directory(const std::string& path, const std::string& what, const std::string& fix);

// Flushes stdout; when a write to it failed (a closed pipe, a full disk), says so on stderr and
// returns true.
bool report_lost_stdout();

// Registers option `name` whose text `parse` (a function of cli_parse.h, bound to its rules)
// reads into `target`. A value it rejects is a usage error: exit 2 with parse's message.
template <typename T, typename Parse>
CLI::Option* add_parsed_option(CLI::App& cmd, const std::string& name, T& target, Parse parse,
                               const std::string& help) {
  return cmd.add_option_function<std::string>(
      name,
      [&target, parse](const std::string& text) {
        auto value = parse(text);
        if (!value) {
          throw CLI::ValidationError(bound_message(value.error().message, kMaxErrorBytes));
        }
        target = std::move(*value);
      },
      help);
}

// "GPU indices like 0,1": what --gpus takes, for parse_int_list().
inline constexpr std::string_view kGpuIndices = "GPU indices like 0,1";

// The value of a Result, or die() with its error.
template <typename T>
T value_or_die(Result<T> result, const std::string& context = "") {
  if (!result) die((context.empty() ? "" : context + ": ") + result.error().message);
  if constexpr (!std::is_void_v<T>) return std::move(*result);
}

// zeus's exit status when nothing can be measured (EX_UNAVAILABLE: no GPU, no readable RAPL);
// the command is not run.
inline constexpr int kNothingToMeasureExit = 69;

// discover() with the environment's options; die() on a malformed CUDA_VISIBLE_DEVICES etc.
Devices discover_or_die(bool want_gpus = true, bool want_cpus = true);

// Why no GPU backend was used: "nvml: <reason>; amd: <reason>".
std::string gpu_backend_reasons(const Devices& devices);

// "%.3f"-style formatting without iostream state; a value that rounds to zero prints without a
// minus sign.
std::string format_fixed(double value, int decimals);

// `text` right-aligned in `width` columns (at least one leading space).
std::string pad_left(const std::string& text, size_t width);

}  // namespace zeus::cli
