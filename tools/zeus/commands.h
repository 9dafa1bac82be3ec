// The subcommands of the `zeus` CLI. Each add_*_command registers one subcommand (its options,
// help text and callback) on the top-level app; each lives in its own cmd_*.cc file.
// A callback reports failure by throwing CLI::RuntimeError(exit_code) after printing a one-line
// error on stderr ("zeus: <what went wrong> (<fix>)").
#pragma once

#include <CLI/CLI.hpp>

namespace zeus::cli {


}  // namespace zeus::cli
