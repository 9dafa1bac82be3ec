// `zeus power --from HOST:PORT,unix:/path,...`: live power of many machines from their zeusd
// daemons' power streams (zeus/client/power_streaming_client.h) instead of this machine's GPUs.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

namespace zeus::cli {

struct RemotePowerArgs {
  std::vector<std::string> from;         // daemon addresses
  std::optional<std::vector<int>> gpus;  // on every node; unset: all
  double interval_s = 1.0;
  double duration_s = 0.0;  // 0: until Ctrl-C
  bool json = false;
  bool events = false;  // --json: also one line per reading as it arrives
};

// Prints a row per interval (per node and cluster power, energy), then totals; stops when `stop`
// turns true (the SIGINT/SIGTERM handlers set it) or after duration_s.
void run_remote_power(const RemotePowerArgs& args, const std::atomic<bool>& stop);

}  // namespace zeus::cli
