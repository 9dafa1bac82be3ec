// `zeusd serve`'s settings, as upstream zeusd names them (--mode, --socket-path,
// --socket-permissions, --socket-uid, --socket-gid, --tcp-bind-address, --enable,
// --gpu-power-poll-hz, --cpu-power-poll-hz, --signing-key-path, --gpu-command-overrides) plus
// ours (allow-list, config file, lease journal, connection bounds). The old spellings (--socket,
// --socket-owner, --socket-group, --socket-mode, --tcp) are aliases, kept for existing units.
//
//   zeus::zeusd_cli::ServeConfig config;
//   zeus::zeusd_cli::add_serve_options(*serve, config);   // after parsing: run_serve(config)
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace zeus::zeusd_cli {

struct ServeConfig {
  std::string mode = "uds";  // uds: the Unix socket; tcp: TCP only; both
  std::string socket_path = "/run/zeusd/zeusd.sock";
  std::string socket_owner;  // user name or uid
  std::string socket_group;  // group name or gid
  std::string socket_mode = "0660";
  bool allow_unsafe_socket_dir = false;
  std::string tcp_bind_address = "127.0.0.1:4938";
  std::string legacy_tcp;  // old `--tcp ADDR`: the socket and TCP at ADDR
  std::vector<std::string> enable;  // API groups, comma lists; empty: all three
  unsigned gpu_power_poll_hz = 20;  // the power streaming routes' sampling rate
  unsigned cpu_power_poll_hz = 10;  // also /cpu/get_power's window (1 / hz)
  std::string signing_key_path;     // empty: no tokens
  std::string gpu_command_overrides;  // TOML mapping GPU control operations to commands
  std::vector<std::string> allow;
  std::string nvml_path;
  std::string powercap_root;
  std::string log_level;
  size_t max_connections = 1024;
  size_t max_connections_per_user = 256;
  double request_timeout_s = 10;
  double idle_timeout_s = 300;
  double lease_session_timeout_s = 30;  // TCP lease sessions: restored after this much silence
  std::string lease_journal;  // empty: beside the socket; "none": in memory only
  std::string upstream_changes = "lease";  // lease | persist | on-request (zeusd/upstream_routes.h)
};

// Adds every option of `zeusd serve` to `app`, writing into `config`.
void add_serve_options(CLI::App& app, ServeConfig& config);

// Runs the daemon until SIGTERM/SIGINT/SIGHUP; the exit status. Exits with a message on a bad
// setting.
int run_serve(const ServeConfig& config);

// `zeusd token issue`: its options, and printing the token; the exit status.
struct TokenIssueConfig {
  std::string signing_key_path;
  std::string user;
  std::vector<std::string> scope;
  std::string expires;
};
void add_token_issue_options(CLI::App& app, TokenIssueConfig& config);
int run_token_issue(const TokenIssueConfig& config);

}  // namespace zeus::zeusd_cli
