// zeusd's configuration file: TOML, one key per command-line option, read strictly.
//
//   socket = "/run/zeusd/zeusd.sock"
//   socket-group = "zeus"
//   allow = ["gpu-control=@zeus", "gpu-read=*"]
//
// Keys (`-` or `_`): socket, socket-owner, socket-group, socket-mode, tcp, allow, nvml-path,
// powercap-root, log-level, max-connections, max-connections-per-user, request-timeout,
// idle-timeout, lease-journal, lease-session-timeout, upstream-changes, and upstream's names: mode, socket-path, socket-permissions,
// socket-uid, socket-gid, tcp-bind-address, enable, gpu-power-poll-hz, cpu-power-poll-hz,
// signing-key-path, gpu-command-overrides. A typo, a table ([section]), a value of the wrong
// type or a file that is not TOML is an error naming the line, never silently ignored: a daemon
// running as root must not start with a configuration its operator did not mean.
// Thread-safety: pure function. Failure: kInvalidArgument "FILE line N: ...", kNotFound.
//
//   auto args = zeus::zeusd::config_file_arguments("/etc/zeusd.toml");
//   // {"--socket", "/run/zeusd/zeusd.sock", "--allow", "gpu-control=@zeus", ...}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/result.h"

namespace zeus::zeusd {

// The file's settings as command-line arguments ("--key", "value", ...), in file order.
Result<std::vector<std::string>> config_arguments(std::string_view text, std::string_view source);

// Reads `path` and returns config_arguments of it; kNotFound when it cannot be read.
Result<std::vector<std::string>> config_file_arguments(const std::string& path);

}  // namespace zeus::zeusd
