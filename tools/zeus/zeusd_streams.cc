#include "zeusd_streams.h"

#include <cstdlib>

namespace zeus::cli {

CLI::Option* add_zeusd_from_option(CLI::App& cmd, std::vector<std::string>& from,
                                   const std::string& purpose, const std::string& effect) {
  return cmd
      .add_option("--from", from,
                  purpose +
                      ", comma-separated: HOST:PORT (zeusd --tcp), unix:/path or /path (its "
                      "socket); a zeusd that checks tokens gets ZEUSD_TOKEN's. " +
                      effect)
      ->delimiter(',')
      ->type_name("LIST");
}

std::vector<PowerStreamTarget> zeusd_stream_targets(const std::vector<std::string>& from,
                                                    const std::optional<std::vector<int>>& gpus) {
  const char* token = std::getenv("ZEUSD_TOKEN");
  std::vector<PowerStreamTarget> targets;
  for (const std::string& address : from) {
    targets.push_back({address, gpus, {}, token != nullptr ? token : ""});
  }
  return targets;
}

}  // namespace zeus::cli
