// The subcommands of the `zeus` CLI. Each add_*_command registers one subcommand (its options,
// help text and callback) on the top-level app; each lives in its own cmd_*.cc file.
// A callback reports failure by throwing CLI::RuntimeError(exit_code) after printing a one-line
// error on stderr ("zeus: <what went wrong> (<fix>)").
#pragma once

#include <CLI/CLI.hpp>

namespace zeus::cli {

// `zeus devices`, `zeus measure -- CMD`, `zeus power`: what is measurable, and measuring it.
void add_devices_command(CLI::App& app);
void add_measure_command(CLI::App& app);
void add_power_command(CLI::App& app);
// `zeus profile -- CMD`: the command's energy over repeated trials with cool-downs (cmd_profile.cc).
void add_profile_command(CLI::App& app);
// `zeus show-env`: versions, devices, RAPL and zeusd, for a bug report (cmd_show_env.cc).
void add_show_env_command(CLI::App& app);
// `zeus plo replay|show`: the power-limit optimizer's selection, offline (cmd_plo.cc).
void add_plo_command(CLI::App& app);
// `zeus pfo plan|choose`: the Perseus pipeline frequency planner (cmd_pfo.cc).
void add_pfo_command(CLI::App& app);
// `zeus pfo serve`: the Perseus pipeline frequency server (cmd_pfo_serve.cc), under `pfo`.
void add_pfo_serve_command(CLI::App& pfo);
// `zeus simulate <experiment>`: the trace-driven simulator (cmd_simulate.cc).
void add_simulate_command(CLI::App& app);
// `zeus serve`: the batch-size optimizer service over HTTP (cmd_serve.cc).
void add_serve_command(CLI::App& app);
// `zeus bso register|next|report|end|show|delete`: its client for the shell (cmd_bso.cc).
void add_bso_command(CLI::App& app);
// `zeus exporter`: GPU/CPU energy and power as Prometheus metrics (cmd_exporter.cc).
void add_exporter_command(CLI::App& app);
// `zeus proxy`: per-request energy in front of an OpenAI-compatible server (cmd_proxy.cc).
void add_proxy_command(CLI::App& app);
// `zeus proxy calibrate` under `proxy_command` (cmd_proxy_calibrate.cc); answers it.
CLI::App* add_proxy_calibrate_command(CLI::App& proxy_command);

}  // namespace zeus::cli
