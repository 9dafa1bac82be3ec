// zeus plo: the power-limit optimizer's selection, offline: `replay` a monitor log of a JIT
// profiling run, or `show` a saved profile, and print the chosen limit with the table of energy,
// time and cost per limit.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "commands.h"
#include "zeus/optimizer/power_limit_selector.h"
#include "zeus/optimizer/power_profile.h"

namespace zeus::cli {
namespace {

struct PloArgs {
  std::string path;
  std::string selector = "zeus";
  double eta = 0.5;
  bool json = false;
};

void add_selection_options(CLI::App& command, PloArgs& args) {
  command.add_option("--selector", args.selector,
                     "zeus (eta*E + (1-eta)*MaxPower*T), energy, time, or slowdown:<factor> "
                     "(lowest limit at most <factor> x slower than the maximum)")
      ->capture_default_str();
  command.add_option("--eta", args.eta, "the zeus cost's knob in [0, 1]: 0 = fastest, 1 = least "
                                        "energy")
      ->capture_default_str();
  command.add_flag("--json", args.json,
                   "print {\"optimal_power_limit_w\", \"selector\", \"measurements\": "
                   "[{\"power_limit_w\", \"energy_j\", \"time_s\", \"cost\"}]}");
}

void print_selection(const PowerProfile& profile, const PloArgs& args, CLI::App& command,
                     const std::string& source) {
  if (command.count("--eta") > 0 && args.selector.rfind("zeus:", 0) == 0) {
    die("the eta is given twice, in --selector " + echo_value(args.selector) + " and in --eta: "
            "give one (--selector zeus --eta E, or --selector zeus:E)",
        2);
  }
  if (command.count("--eta") > 0 && args.selector != "zeus") {
    die("--eta applies to --selector zeus only (got --selector " + echo_value(args.selector) + ")",
        2);
  }
  const PowerLimitSelector selector =
      value_or_die(PowerLimitSelector::parse(args.selector, args.eta));
  const double max_power_w = profile_max_power_w(profile);
  const bool power = profile.knob == OptimizerKnob::kPowerLimit;
  if (selector.kind() == PowerLimitSelector::Kind::kZeusCost && !(max_power_w > 0)) {
    die("this SM-clock profile has no max_power_w, which the zeus cost needs (use --selector "
        "energy, time or slowdown:<factor>)");
  }
  const auto costs = value_or_die(selector.costs(profile.measurements, max_power_w));
  // Each row is finite, but a cost can still overflow (1e308 J, or 1e-308 s as the fastest
  // time); choosing among infinities would be no choice.
  for (size_t i = 0; i < costs.size(); ++i) {
    if (!std::isfinite(costs[i])) {
      const KnobMeasurement& m = profile.measurements[i];
      char numbers[96];
      std::snprintf(numbers, sizeof(numbers), "%g J, %g s", m.energy_j, m.time_s);
      die("the " + std::string(selector.name()) + " cost of setting " + std::to_string(m.setting) +
          " (" + numbers + ") is not a finite number; check the measurements of " + source);
    }
  }
  const uint32_t optimum = value_or_die(selector.select(profile.measurements, max_power_w));
  const std::string setting_key = power ? "power_limit_w" : "sm_clock_mhz";

  if (args.json) {
    nlohmann::json out;
    out[power ? "optimal_power_limit_w" : "optimal_sm_clock_mhz"] = optimum;
    out["selector"] = selector.name();
    out["knob"] = std::string(knob_name(profile.knob));
    if (max_power_w > 0) out["max_power_w"] = max_power_w;
    out["measurements"] = nlohmann::json::array();
    for (size_t i = 0; i < profile.measurements.size(); ++i) {
      const KnobMeasurement& m = profile.measurements[i];
      out["measurements"].push_back({{setting_key, m.setting},
                                     {"energy_j", m.energy_j},
                                     {"time_s", m.time_s},
                                     {"cost", costs[i]}});
    }
    std::cout << out.dump() << std::endl;
    return;
  }
  const std::string gpus = profile.gpu_count > 0 ? std::to_string(profile.gpu_count) : "1";
  std::cout << "selector " << selector.name();
  if (selector.kind() == PowerLimitSelector::Kind::kZeusCost) {
    std::cout << ", MaxPower " << format_fixed(max_power_w, 0) << " W (" << gpus << " GPU"
              << (gpus == "1" ? "" : "s") << ")";
  }
  if (!profile.gpu_model.empty()) std::cout << ", " << profile.gpu_model;
  std::cout << "\n\n";
  const char* cost_name = selector.kind() == PowerLimitSelector::Kind::kMaxSlowdown
                              ? "slowdown"
                              : "cost";
  std::cout << pad_left(power ? "limit_w" : "sm_mhz", 9) << pad_left("energy_j", 12)
            << pad_left("time_s", 10) << pad_left(cost_name, 12) << "\n";
  for (size_t i = 0; i < profile.measurements.size(); ++i) {
    const KnobMeasurement& m = profile.measurements[i];
    const int decimals = selector.kind() == PowerLimitSelector::Kind::kMaxSlowdown ? 3 : 2;
    std::cout << pad_left(std::to_string(m.setting), 9) << pad_left(format_fixed(m.energy_j, 2), 12)
              << pad_left(format_fixed(m.time_s, 3), 10)
              << pad_left(format_fixed(costs[i], decimals), 12)
              << (m.setting == optimum ? "  <- optimal" : "") << "\n";
  }
  std::cout << "\noptimal " << (power ? "power limit: " : "SM clock: ") << optimum
            << (power ? " W" : " MHz") << "\n";
}

}  // namespace

void add_plo_command(CLI::App& app) {
  CLI::App* plo = app.add_subcommand(
      "plo", "Power-limit optimizer: choose the best GPU power limit from a JIT profile");
  plo->require_subcommand(1);
  plo->footer(
      "The optimizer profiles each power limit for a few steps of the first epoch, then runs the\n"
      "job at the limit that minimises the chosen cost. These commands redo that choice offline.\n"
      "\nExamples:\n"
      "  zeus plo replay --log 'A40+resnet50+gpu0.csv'            # zeus cost, eta = 0.5\n"
      "  zeus plo replay --log run.csv --selector zeus --eta 0.8  # favour energy more\n"
      "  zeus plo replay --log run.csv --selector slowdown:1.1    # at most 10% slower\n"
      "  zeus plo show ~/.cache/zeus/resnet50.json --selector energy --json");

  auto replay_args = std::make_shared<PloArgs>();
  CLI::App* replay = plo->add_subcommand(
      "replay", "Choose the limit from a monitor CSV log (start_time,window_name,elapsed_time,"
                "gpu0_energy,...; window names end in _<limit W>)");
  replay->add_option("--log", replay_args->path, "the monitor's CSV log of a profiling run")
      ->required();
  add_selection_options(*replay, *replay_args);
  replay->footer("Example:\n  zeus plo replay --log 'V100+bert-base-uncased+gpu0.csv' --selector "
                 "time --json");
  replay->callback([replay_args, replay] {
    die_if_directory(replay_args->path, "--log", "give the monitor's CSV log file");
    const PowerProfile profile =
        value_or_die(power_profile_from_monitor_log(replay_args->path));
    print_selection(profile, *replay_args, *replay, "'" + echo_value(replay_args->path) + "'");
  });

  auto show_args = std::make_shared<PloArgs>();
  CLI::App* show = plo->add_subcommand(
      "show", "Choose the limit from a saved profile ({\"measurements\": [{\"power_limit\", "
              "\"energy\", \"time\"}]}, as the optimizer writes to its profile path)");
  show->add_option("profile", show_args->path, "the profile JSON file")->required();
  add_selection_options(*show, *show_args);
  show->footer("Example:\n  zeus plo show profile.json --selector slowdown:1.05");
  show->callback([show_args, show] {
    die_if_directory(show_args->path, "the profile", "give the profile JSON file");
    const PowerProfile profile = value_or_die(load_power_profile(show_args->path));
    print_selection(profile, *show_args, *show, "'" + echo_value(show_args->path) + "'");
  });
}

}  // namespace zeus::cli
