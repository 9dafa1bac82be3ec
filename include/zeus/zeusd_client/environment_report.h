// What Zeus sees on this machine, for a bug report (`zeus show-env`, `python -m
// zeus_cpp.show_env`): versions, the GPU and CPU libraries found and where, each device with its
// backend, why a backend was skipped, RAPL, and whether zeusd (ZEUSD_SOCK_PATH or
// ZEUSD_HOST_PORT) answers and with which capabilities. Never fails: what cannot be read is
// reported as such.
//
// The report is JSON so the CLI (--json) and Python share it; `packages` is filled by the
// caller (the CLI's version; Python adds Python, zeus_cpp, torch and its CUDA/ROCm):
//   {"packages": [{"name", "version"}], "platform": {"system", "release", "machine"},
//    "environment": {"CUDA_VISIBLE_DEVICES": value or null, ...},
//    "libraries": [{"name", "requested", "path" (null: not found), "error"}],
//    "gpus": [{"index", "physical_index", "name", "uuid", "backend", "energy_counter"}],
//    "cpus": [{"index", "name", "dram", "readable", "error"}],
//    "backends": [{"backend", "used", "detail"}],
//    "rapl": {"available", "detail"},
//    "zeusd": {"configured", "endpoint", "reachable", "error", "gpus", "cpus", "capabilities",
//              "auth_required"}}
//
//   nlohmann::json report = zeus::environment_report({{{"name", "zeus"}, {"version", "0.1.0"}}});
//   std::cout << zeus::format_environment_report(report);
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace zeus {

// Collects the report (device discovery with the environment's options, through zeusd when
// ZEUSD_SOCK_PATH is set; zeusd probed with GET /discover, 2 s timeout). `packages` is copied in.
nlohmann::json environment_report(const nlohmann::json& packages);

// The report as text, one section per topic, for pasting into an issue.
std::string format_environment_report(const nlohmann::json& report);

}  // namespace zeus
