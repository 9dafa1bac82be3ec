// The one line that `zeus` and `zeusd` print for a command line they cannot parse, and the exit
// status they end with. Header-only (CLI11 is header-only too), shared by both programs.
//
// CLI11 counts the `--` separator among the arguments it did not expect ("The following arguments
// were not expected: -- --bogus" for `--bogus -- true`); usage_error_message() lists the
// unexpected arguments without it, on one line (a usage error exits 2).
//
//   } catch (const CLI::ParseError& e) {
//     if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
//     std::cerr << "zeus: " << zeus::cli::usage_error_message(app, e) << "\n";
//     return zeus::cli::kUsageErrorExit;
//   }
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

namespace zeus::cli {

// The exit status of a command line that cannot be parsed (as most Unix tools use): distinct from
// CLI11's 100+ codes and, under `zeus measure`, from the measured command's own status.
inline constexpr int kUsageErrorExit = 2;

// e's message, except that an ExtrasError lists the unexpected arguments of app and of the
// subcommands it parsed without the `--` separator.
// `order`, when given, is the command line as typed: the extras are listed in its order (CLI11
// lists a subcommand's after its parent's, so `zeusd serve --bogus -- x` would read "x --bogus").
inline std::string usage_error_message(const CLI::App& app, const CLI::ParseError& e,
                                       const std::vector<std::string>& order = {}) {
  if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) return e.what();
  std::vector<std::string> extras;
  for (std::string& arg : app.remaining(true)) {
    if (arg != "--") extras.push_back(std::move(arg));
  }
  auto position = [&](const std::string& arg) {
    return std::find(order.begin(), order.end(), arg) - order.begin();
  };
  std::stable_sort(extras.begin(), extras.end(),
                   [&](const std::string& a, const std::string& b) { return position(a) < position(b); });
  if (extras.empty()) return e.what();
  std::string message = extras.size() > 1 ? "The following arguments were not expected:"
                                          : "The following argument was not expected:";
  for (const std::string& arg : extras) message += " " + arg;
  return message;
}

}  // namespace zeus::cli
