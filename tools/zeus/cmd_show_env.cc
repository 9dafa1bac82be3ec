// zeus show-env: versions, libraries, devices, RAPL and zeusd as Zeus sees them, for a bug report
// (the report of zeus/zeusd_client/environment_report.h; `python -m zeus_cpp.show_env` adds
// Python's side).
#include <iostream>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "zeus/zeusd_client/environment_report.h"

namespace zeus::cli {

void add_show_env_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "show-env", "Show versions, GPU/CPU libraries, devices, RAPL and zeusd (for a bug report)");
  cmd->add_flag("--json", *json, "Print the report as one JSON object on stdout");
  cmd->footer(
      "Paste the output into a bug report. Devices are found as every zeus command finds them\n"
      "(ZEUS_NVML_PATH, ZEUS_ROCM_SMI_PATH, ZEUS_POWERCAP_ROOT, CUDA_VISIBLE_DEVICES, through\n"
      "zeusd when ZEUSD_SOCK_PATH is set); a backend that was skipped says why. zeusd is asked\n"
      "GET /discover at ZEUSD_SOCK_PATH or ZEUSD_HOST_PORT (HOST:PORT) when one is set.\n"
      "For Python, torch and its CUDA: python3 -m zeus_cpp.show_env");
  cmd->callback([json] {
    const nlohmann::json report = environment_report(
        nlohmann::json::array({{{"name", "zeus"}, {"version", ZEUS_VERSION}}}));
    if (*json) {
      std::cout << report.dump() << "\n";
    } else {
      std::cout << format_environment_report(report);
    }
  });
}

}  // namespace zeus::cli
