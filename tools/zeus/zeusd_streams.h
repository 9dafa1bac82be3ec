// `--from LIST`: the zeusd daemons whose live power streams a command reads (`zeus power --from`,
// `zeus exporter --from`): the option, and the streaming client's targets (address syntax of
// zeus/client/power_streaming_client.h, the token from ZEUSD_TOKEN).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "zeus/client/power_streaming_client.h"

namespace zeus::cli {

// Registers --from on `cmd`, read into `from` (comma-separated; a repeated --from adds). Its help
// is `purpose`, the accepted address forms and the token's source, then `effect`.
CLI::Option* add_zeusd_from_option(CLI::App& cmd, std::vector<std::string>& from,
                                   const std::string& purpose, const std::string& effect);

// One target per address, streaming `gpus` of each node (nullopt: every GPU) and every CPU. A
// zeusd that checks tokens gets ZEUSD_TOKEN's, as every zeusd client sends it.
std::vector<PowerStreamTarget> zeusd_stream_targets(
    const std::vector<std::string>& from, const std::optional<std::vector<int>>& gpus = {});

}  // namespace zeus::cli
