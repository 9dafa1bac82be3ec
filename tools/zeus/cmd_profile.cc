// zeus profile: the energy of a command over repeated trials, the command line's zeus.profile.
//
// The command is one iteration of the workload: each trial idles for --cooldown, then runs the
// command once inside a measurement window (so iterations = 1 and energy_per_iter is the
// command's GPU energy), reading the GPUs' mean temperature before and after. --warmup-trials
// runs it unmeasured first, without cool-down (upstream's warm-up trials). The summary is the
// sweep statistics of zeus/monitor/profile_sweep.h: mean and sample standard deviation of the
// energy,
// valid when the deviation is below --threshold joules.
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "child_process.h"
#include "cli_util.h"
#include "commands.h"
#include "zeus/common/clock.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/monitor/profile_sweep.h"

namespace zeus::cli {
namespace {

struct ProfileArgs {
  std::optional<std::vector<int>> gpus;
  int trials = 3;
  int warmup_trials = 1;
  double cooldown_s = 0;
  std::optional<double> threshold_j;
  bool json = false;
  std::vector<std::string> command;
};

// Mean temperature (C) of the measured GPUs.
double mean_temperature(Devices& devices, const std::vector<int>& indices) {
  double sum = 0;
  for (int i : indices) {
    sum += value_or_die(devices.gpus[static_cast<size_t>(i)]->temperature_c(),
                        "reading GPU " + std::to_string(i) + "'s temperature");
  }
  return sum / static_cast<double>(indices.size());
}

// One trial: cool-down, then the command in a window. nullopt when the command failed.
std::optional<TrialResult> run_trial(const ProfileArgs& args, Devices& devices,
                                     EnergyMonitor& monitor, int& exit_code) {
  if (args.cooldown_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(args.cooldown_s));
  const double before = mean_temperature(devices, monitor.gpu_indices());
  value_or_die(monitor.begin_window("zeus_profile"));
  exit_code = run_command_or_die(args.command);
  Measurement m = value_or_die(monitor.end_window("zeus_profile"), "reading the energy");
  if (exit_code != 0) return std::nullopt;
  const double after = mean_temperature(devices, monitor.gpu_indices());
  double energy_j = 0;
  for (const auto& [index, joules] : m.gpu_energy_j) energy_j += joules;
  return value_or_die(combine_ranks({{energy_j, m.time_s, before, after}}, 1));
}

nlohmann::json trial_json(const TrialResult& t) {
  return {{"energy_per_iter", t.energy_per_iter_j}, {"time_per_iter", t.time_per_iter_s},
          {"total_energy", t.total_energy_j},       {"total_time", t.total_time_s},
          {"iterations", t.iterations},             {"temperature_before", t.temperature_before_c},
          {"temperature_after", t.temperature_after_c}};
}

nlohmann::json report_json(const ProfileArgs& args, const std::vector<TrialResult>& trials,
                           const std::optional<SweepResult>& summary, int exit_code) {
  nlohmann::json j = {{"command", args.command}, {"exit_code", exit_code},
                      {"cooldown_duration", args.cooldown_s},
                      {"warmup_trials", args.warmup_trials}, {"trials", nlohmann::json::array()}};
  for (const TrialResult& t : trials) j["trials"].push_back(trial_json(t));
  if (summary) {
    j["energy_mean"] = summary->energy_mean_j;
    j["energy_std"] = summary->energy_std_j;
    j["avg_temperature_before"] = summary->avg_temperature_before_c;
    j["avg_temperature_after"] = summary->avg_temperature_after_c;
    j["avg_total_time"] = summary->avg_total_time_s;
    j["avg_total_energy"] = summary->avg_total_energy_j;
    if (args.threshold_j) j["is_valid"] = summary->is_valid;
  }
  return j;
}

void print_text(const ProfileArgs& args, const std::vector<TrialResult>& trials,
                const std::optional<SweepResult>& summary) {
  std::string line;
  for (const auto& a : args.command) line += (line.empty() ? "" : " ") + a;
  std::cerr << "\nzeus profile: " << line << "\n";
  std::cerr << "  trial    energy (J)   time (s)   temp before (C)  temp after (C)\n";
  for (size_t i = 0; i < trials.size(); ++i) {
    const TrialResult& t = trials[i];
    std::cerr << pad_left(std::to_string(i + 1), 7) << pad_left(format_fixed(t.total_energy_j, 3), 14)
              << pad_left(format_fixed(t.total_time_s, 3), 11)
              << pad_left(format_fixed(t.temperature_before_c, 1), 18)
              << pad_left(format_fixed(t.temperature_after_c, 1), 16) << "\n";
  }
  if (!summary) return;
  std::cerr << "  energy   mean " << format_fixed(summary->energy_mean_j, 3) << " J, std "
            << format_fixed(summary->energy_std_j, 3) << " J";
  if (args.threshold_j) {
    std::cerr << (summary->is_valid ? "  [VALID]" : "  [INVALID]") << " (threshold "
              << format_fixed(*args.threshold_j, 3) << " J)";
  }
  std::cerr << "\n  time     mean " << format_fixed(summary->avg_total_time_s, 3) << " s\n";
}

void run_profile(const ProfileArgs& args) {
  if (args.command.empty()) die("no command to profile: write it after --, e.g. zeus profile -- ./bench");
  Devices devices = discover_or_die(true, false);
  if (devices.gpus.empty()) {
    die("zeus profile measures GPU energy and temperature, but no GPU was found (" +
            gpu_backend_reasons(devices) + "); the command was not run",
        kNothingToMeasureExit);
  }
  EnergyMonitorOptions options;
  options.gpu_indices = args.gpus;
  options.cpu_indices = std::vector<int>{};
  SystemClock clock;
  auto monitor = value_or_die(EnergyMonitor::create(devices, clock, options));
  int exit_code = 0;
  for (int i = 0; i < args.warmup_trials; ++i) {
    exit_code = run_command_or_die(args.command);
    if (exit_code != 0) {
      if (args.json) std::cout << report_json(args, {}, std::nullopt, exit_code).dump() << "\n";
      die("warm-up trial " + std::to_string(i + 1) + " failed: the command exited " +
              std::to_string(exit_code) + "; nothing was measured",
          exit_code);
    }
  }
  std::vector<TrialResult> trials;
  for (int i = 0; i < args.trials; ++i) {
    auto trial = run_trial(args, devices, *monitor, exit_code);
    if (!trial) break;
    trials.push_back(*trial);
  }
  std::optional<SweepResult> summary;
  if (!trials.empty()) {
    const double mean_time = [&] {
      double sum = 0;
      for (const TrialResult& t : trials) sum += t.total_time_s;
      return sum / static_cast<double>(trials.size());
    }();
    summary = value_or_die(
        summarize_sweep(mean_time, args.cooldown_s, trials, args.threshold_j.value_or(0.0)));
  }
  if (args.json) {
    std::cout << report_json(args, trials, summary, exit_code).dump() << "\n";
  } else {
    print_text(args, trials, summary);
  }
  if (exit_code != 0) {
    std::cerr << "zeus: trial " << trials.size() + 1 << " failed: the command exited "
              << exit_code << "\n";
    throw CLI::RuntimeError(exit_code);
  }
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto args = std::make_shared<ProfileArgs>();
  auto* cmd = app.add_subcommand(
      "profile", "Run a command repeatedly and report its energy per run, with cool-downs");
  add_parsed_option(
      *cmd, "--gpus", args->gpus,
      [](const std::string& text) { return parse_int_list(text, "--gpus", kGpuIndices); },
      "GPU indices to measure, e.g. 0,1 (default: all visible)")
      ->type_name("LIST");
  cmd->add_option("--trials", args->trials, "Measured runs of the command (default 3)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--warmup-trials", args->warmup_trials,
                  "Unmeasured runs first, without cool-down (default 1)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--cooldown", args->cooldown_s,
                  "Seconds to idle before each measured run (default 0)")
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--threshold", args->threshold_j,
                  "Joules: mark the runs VALID when the standard deviation of their energy is "
                  "below it")
      ->check(CLI::Range(0.0, 1e12));
  cmd->add_flag("--json", args->json,
                "Print one JSON object on stdout: command, exit_code, cooldown_duration, "
                "warmup_trials, trials [{energy_per_iter, time_per_iter, total_energy, "
                "total_time, iterations, temperature_before, temperature_after}], energy_mean, "
                "energy_std, avg_temperature_before, avg_temperature_after, avg_total_time, "
                "avg_total_energy, is_valid (with --threshold)");
  cmd->add_option("command", args->command, "The command to run, after --")->expected(-1);
  cmd->footer(
      "Each measured run (trial) idles --cooldown seconds, then runs the command once in a\n"
      "measurement window: its GPU energy (summed over the GPUs), time, and the GPUs' mean\n"
      "temperature before and after. The summary gives the mean and standard deviation of the\n"
      "energy over the trials. The report goes to stderr; --json prints to stdout. When a run\n"
      "fails, zeus stops, reports the trials before it and exits with the command's status.\n"
      "zeus exits 69 when no GPU is found (the command is not run), 126/127 when the command\n"
      "cannot be executed / is not found. For a workload in Python, zeus_cpp.profile.measure and\n"
      "profile_parameters time iterations within one process instead. Examples:\n"
      "  zeus profile --trials 5 --cooldown 10 -- python bench.py\n"
      "  zeus profile --json --threshold 50 -- ./infer --batch 8 | jq .energy_std");
  cmd->callback([args] { run_profile(*args); });
}

}  // namespace zeus::cli
