// Helpers shared by the `zeus` subcommands: one-line errors, index lists, device discovery,
// number formatting.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "zeus/device.h"
#include "zeus/result.h"

namespace zeus::cli {

// Prints "zeus: <message>" on stderr and ends the command with `exit_code`.
[[noreturn]] void die(const std::string& message, int exit_code = 1);

// The value of a Result, or die() with its error.
template <typename T>
T value_or_die(Result<T> result, const std::string& context = "") {
  if (!result) die((context.empty() ? "" : context + ": ") + result.error().message);
  if constexpr (!std::is_void_v<T>) return std::move(*result);
}

// Parses "0,1,3" into indices; die() on anything else.
std::vector<int> parse_index_list(const std::string& text, const std::string& option);

// discover() with the environment's options; die() on a malformed CUDA_VISIBLE_DEVICES etc.
Devices discover_or_die(bool want_gpus = true, bool want_cpus = true);

// Why no GPU backend was used: "nvml: <reason>; amd: <reason>".
std::string gpu_backend_reasons(const Devices& devices);

// "%.3f"-style formatting without iostream state.
std::string format_fixed(double value, int decimals);

// `text` right-aligned in `width` columns (at least one leading space).
std::string pad_left(const std::string& text, size_t width);

}  // namespace zeus::cli
