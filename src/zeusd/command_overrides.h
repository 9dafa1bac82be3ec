// GPU command overrides (`zeusd serve --gpu-command-overrides FILE`, as upstream's zeusd after
// Zeus 0.16): a TOML file maps any of the seven GPU write operations to commands that zeusd runs
// instead of the driver call, so that a site where the daemon cannot be root (sudoers-only
// clusters) still gets GPU control, leases and restores included.
//
//   [set_power_limit]
//   commands = ["sudo /usr/local/bin/set_powercap.sh -value {power_limit_w} -gpu {gpu_id}"]
//   error_pattern = "(?i)error|fail"   # matched on stdout + stderr: a match fails the operation
//   timeout_s = 60                     # per command (default 60)
//
// Operations: set_persistence_mode ({enabled}: 1 or 0), set_power_limit ({power_limit_mw},
// {power_limit_w}), set_gpu_locked_clocks and set_mem_locked_clocks ({min_clock_mhz},
// {max_clock_mhz}), reset_gpu_locked_clocks, reset_mem_locked_clocks, reset_locked_clocks; every
// one has {gpu_id}. Commands are split into words as a POSIX shell would (quotes, backslashes) and
// run directly, without a shell: `$`, backquotes, globs, pipes and redirections are refused (use a
// wrapper script). They run in order and stop at the first failure (a non-zero exit, a timeout,
// or output matching error_pattern); what already ran is not undone. A file that another user
// could have changed (owned by neither root nor zeusd's user, or world-writable) is refused.
// error_pattern has upstream's syntax (Rust's regex crate: `(?i)` for case-insensitive, ...),
// matched in linear time (output_pattern.h): no pattern can crash or stall zeusd on long output.
// Thread-safety: const methods may be called from any thread. Failure: kInvalidArgument naming
// the file and operation for a bad file; kInternal naming the command for a failed run.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/result.h"
#include "zeusd/output_pattern.h"

namespace zeus::zeusd {

enum class GpuOperation {
  kSetPersistenceMode,
  kSetPowerLimit,
  kSetGpuLockedClocks,
  kResetGpuLockedClocks,
  kSetMemLockedClocks,
  kResetMemLockedClocks,
  kResetLockedClocks,
};

// "set_power_limit", ... (the TOML table's name).
const char* operation_name(GpuOperation operation);

// The values a command's placeholders take (unset ones do not occur in that operation).
struct OverrideValues {
  explicit OverrideValues(int gpu = 0) : gpu_id(gpu) {}
  int gpu_id = 0;
  std::optional<bool> enabled;
  std::optional<uint32_t> power_limit_mw;
  std::optional<uint32_t> min_clock_mhz;
  std::optional<uint32_t> max_clock_mhz;
};

class CommandOverrides {
 public:
  // Parses the file's text (`source` names it in messages).
  static Result<CommandOverrides> parse(std::string_view text, std::string_view source);
  // Checks who may have written `path` (see above), then parses it.
  static Result<CommandOverrides> load(const std::string& path);

  bool has(GpuOperation operation) const { return specs_.count(operation) != 0; }
  bool empty() const { return specs_.empty(); }
  // The configured operations' names, in the order of the enum.
  std::vector<std::string> operation_names() const;

  // Runs the operation's commands with `values` substituted. kInternal with "command 'X' exited
  // with code 1; stdout: ...; stderr: ..." when one fails.
  Result<void> run(GpuOperation operation, const OverrideValues& values) const;

 private:
  struct Spec {
    std::vector<std::vector<std::string>> commands;  // words, placeholders not yet substituted
    std::optional<OutputPattern> error_pattern;
    std::chrono::milliseconds timeout{60000};
  };
  std::map<GpuOperation, Spec> specs_;
};

// The words of one command line, split as a POSIX shell would, refusing what needs a shell
// (exposed for tests). kInvalidArgument naming the problem.
Result<std::vector<std::string>> split_command(const std::string& command);

}  // namespace zeus::zeusd
