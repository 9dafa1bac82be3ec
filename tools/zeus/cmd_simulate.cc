// zeus simulate: the trace-driven simulator and the paper's evaluation (src/sim/).
//
// Experiments: headline (default), pareto, search-path, eta-sweep, beta-sweep, ablation, gpus,
// drift, concurrent. Output: a text table on stdout, or with --json one JSON document with stable
// keys (simulate_json.h; every key documented in docs/simulate.md). --report DIR writes the
// Markdown/HTML report with CSV data and gnuplot SVG figures. A progress bar is drawn on stderr
// when it is a terminal.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.h"
#include "commands.h"
#include "simulate_json.h"
#include "simulate_serving.h"
#include "zeus/monitor/intensity_provider.h"
#include "zeus/perseus/sim_perseus.h"
#include "zeus/sim/sim_carbon.h"
#include "zeus/sim/sim_drift.h"
#include "zeus/sim/sim_experiments.h"
#include "zeus/sim/sim_report.h"

namespace zeus::cli {
namespace {

struct SimulateArgs {
  std::string experiment = "headline";
  std::string data_dir;
  std::string gpu = "v100";
  std::vector<std::string> workloads;
  double eta = 0.5;
  double beta = 2.0;
  int seeds = 10;
  uint64_t seed = 1;
  int recurrences = 0;
  std::string fidelity = "epoch";
  bool json = false;
  std::string report_dir;
  bool no_early_stop = false, no_pruning = false, no_jit = false;
  std::vector<double> etas, betas, overlaps;
  std::vector<std::string> gpus;
  sim::DriftOptions drift;
  std::vector<std::string> pp_models;
  std::vector<int> microbatches;
  std::vector<double> slowdowns;
  std::string pareto = "measured";
  std::string rules = "zeus";
  std::string early_stop;
  std::string compare_a = "zeus", compare_b = "upstream";
  int threads = 0;
  std::string carbon, price, start;
  // A recurring job's default period when --carbon/--price place the recurrences in time: daily.
  double recurrence_interval_h = 24;
  bool recurrence_interval_given = false;
  ServingArgs serving;
};

constexpr const char* kExperiments[] = {"headline",   "pareto",   "search-path", "eta-sweep",
                                        "beta-sweep", "ablation", "gpus",        "drift",
                                        "concurrent", "perseus",  "compare",     "serving"};

// Bounds of the sizes a run may ask for: a simulation's time and memory grow with
// seeds x recurrences; these allow 100x the defaults and still end in minutes.
constexpr uint64_t kMaxSeeds = 1000;
constexpr uint64_t kMaxRecurrences = 100000;

// Reads a count option into an int within [min, max].
auto count_in(const char* option, uint64_t min, uint64_t max) {
  return [option, min, max](const std::string& text) {
    return parse_count(text, option, min, max).map([](uint64_t v) { return static_cast<int>(v); });
  };
}

// The Zeus rules of --rules, with --early-stop applied on top.
sim::ZeusRules zeus_rules_of(const std::string& text, const std::string& early_stop);

[[noreturn]] void die(const Error& error) { zeus::cli::die(error.message); }

// ZEUS_DATA_DIR, else the data installed beside this binary (<prefix>/share/zeus/data for
// <prefix>/bin/zeus), else the source tree's data/ (a zeus run from its build tree).
std::string default_data_dir() {
  if (const char* env = std::getenv("ZEUS_DATA_DIR"); env && *env) return env;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path installed = exe.parent_path() / ZEUS_INSTALLED_DATA_FROM_BIN;
    if (std::filesystem::is_directory(installed, ec)) return installed.lexically_normal().string();
  }
  return ZEUS_DATA_DIR;
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Progress on stderr: a bar redrawn on a terminal; elsewhere (a log, CI) a line at every tenth of
// the work, so a long run never looks hung.
void print_progress(int done, int total) {
  static const double started_s = steady_seconds();
  if (!isatty(STDERR_FILENO)) {
    // Quiet for the first 5 s (short runs say nothing), then each tenth once.
    static int printed = 0;
    const int step = std::max(1, total / 10);
    const double elapsed = steady_seconds() - started_s;
    if (elapsed >= 5 && done > printed && (done == total || done % step == 0)) {
      printed = done;
      std::fprintf(stderr, "zeus simulate: %d of %d done (%.0f s)\n", done, total, elapsed);
    }
    return;
  }
  const int width = 40;
  const int filled = total > 0 ? done * width / total : width;
  std::fprintf(stderr, "\r[%s%s] %d/%d", std::string(static_cast<std::size_t>(filled), '#').c_str(),
               std::string(static_cast<std::size_t>(width - filled), ' ').c_str(), done, total);
  if (done == total) std::fprintf(stderr, "\r%*s\r", width + 24, "");
  std::fflush(stderr);
}

// `zeus simulate perseus`: the Perseus emulation (zeus/perseus/sim_perseus.h).
void run_perseus(const SimulateArgs& args) {
  sim::PerseusEmulationOptions options;
  options.data_dir = args.data_dir.empty() ? default_data_dir() : args.data_dir;
  if (!args.pp_models.empty()) options.models = args.pp_models;
  if (!args.gpus.empty()) options.gpus = args.gpus;
  if (!args.microbatches.empty()) options.microbatches = args.microbatches;
  if (!args.slowdowns.empty()) options.slowdowns = args.slowdowns;
  if (args.pareto == "effective") options.pareto = pfo::ParetoEnergy::kEffective;
  options.progress = print_progress;
  auto result = sim::run_perseus_emulation(options, steady_seconds);
  if (!result) die(result.error());
  std::filesystem::path report;
  if (!args.report_dir.empty()) {
    auto written = sim::write_perseus_report(*result, options, args.report_dir, {});
    if (!written) die(written.error());
    report = *written;
  }
  if (args.json) {
    std::cout << perseus_json(*result).dump(2) << "\n";
    return;
  }
  std::cout << sim::format_perseus_table(*result);
  if (!report.empty()) std::cout << "report: " << report.string() << "/index.md\n";
}

[[noreturn]] void die(const Error& error);

sim::ZeusRules zeus_rules_of(const std::string& text, const std::string& early_stop) {
  auto rules =
      sim::parse_zeus_rules(early_stop.empty() ? text : text + ",early_stop=" + early_stop);
  if (!rules) die(rules.error());
  return *rules;
}

// --carbon / --price: offline providers only (a replay must be reproducible), and the fixed-interval
// schedule of --start / --recurrence-interval (the hook a carbon-aware scheduler will replace).
sim::ReplayAccounting accounting_of(const SimulateArgs& args) {
  sim::ReplayAccounting accounting;
  if (args.carbon.empty() && args.price.empty()) {
    if (!args.start.empty() || args.recurrence_interval_given) {
      zeus::cli::die("--start and --recurrence-interval place the recurrences in time for --carbon or "
                     "--price: give one of those too",
                     2);
    }
    return accounting;
  }
  auto provider = [](const char* option, const std::string& spec, const char* unit) {
    std::shared_ptr<IntensityProvider> out;
    if (spec.empty()) return out;
    auto made = offline_intensity_provider_from_spec(spec, unit);
    if (!made) zeus::cli::die(std::string(option) + ": " + made.error().message, 2);
    out = std::move(*made);
    return out;
  };
  accounting.carbon = provider("--carbon", args.carbon, "gCO2eq/kWh");
  accounting.price = provider("--price", args.price, "$/kWh");
  double start_s = 0;  // two constants: any time gives the same amounts
  if (!args.start.empty()) {
    auto parsed = parse_iso8601_utc(args.start);
    if (!parsed) zeus::cli::die("--start: " + parsed.error().message, 2);
    start_s = *parsed;
  } else {
    for (const auto& p : {accounting.carbon, accounting.price}) {
      const auto* series = dynamic_cast<const IntensitySeries*>(p.get());
      if (series != nullptr && !series->intervals().empty()) {
        start_s = series->intervals().front().start_s;
        break;
      }
    }
  }
  const double hours = args.recurrence_interval_h;
  if (!(hours > 0) || !std::isfinite(hours)) {
    zeus::cli::die("--recurrence-interval must be a positive number of hours, not " +
                       std::to_string(args.recurrence_interval_h),
                   2);
  }
  accounting.scheduler = std::make_shared<sim::FixedIntervalScheduler>(start_s, hours * 3600);
  return accounting;
}

void run_simulate(const SimulateArgs& args) {
  if (args.seed > UINT64_MAX - static_cast<uint64_t>(args.seeds - 1)) {
    zeus::cli::die("--seed " + std::to_string(args.seed) + " with --seeds " +
                       std::to_string(args.seeds) + " runs past the last seed, " +
                       std::to_string(UINT64_MAX) + ": give a smaller --seed",
                   2);
  }
  if (args.experiment == "perseus") {
    run_perseus(args);
    return;
  }
  if (args.experiment == "serving") {
    ServingArgs serving = args.serving;
    serving.report_dir = args.report_dir;
    run_simulate_serving(serving, args.data_dir.empty() ? default_data_dir() : args.data_dir,
                         args.json);
    return;
  }
  sim::ExperimentOptions options;
  options.data_dir = args.data_dir.empty() ? default_data_dir() : args.data_dir;
  options.gpu = args.gpu;
  options.workloads = args.workloads;
  options.seeds = args.seeds;
  options.sim.eta = args.eta;
  options.sim.beta = args.beta;
  options.sim.seed = args.seed;
  options.sim.recurrences = args.recurrences;
  options.sim.early_stopping = !args.no_early_stop;
  options.sim.pruning = !args.no_pruning;
  options.sim.jit_profiling = !args.no_jit;
  options.sim.zeus = zeus_rules_of(args.rules, args.early_stop);
  options.threads = args.threads;
  options.accounting = accounting_of(args);
  auto fidelity = sim::parse_fidelity(args.fidelity);
  if (!fidelity) die(fidelity.error());
  options.sim.fidelity = *fidelity;
  options.progress = print_progress;

  std::string table;
  std::string json;
  Result<std::filesystem::path> report = std::filesystem::path();
  const sim::ReportOptions report_options;
  const bool want_report = !args.report_dir.empty();
  // Runs one experiment: its table, its JSON and (with --report) its report.
  auto run = [&](auto result, auto format, auto to_json, auto write) {
    if (!result) die(result.error());
    table = format(*result);
    json = to_json(*result).dump(2);
    if (want_report) report = write(*result, args.report_dir, report_options);
  };
  const std::string& e = args.experiment;
  if (e == "compare") {
    sim::CompareOptions compare;
    compare.experiment = options;
    compare.a = zeus_rules_of(args.compare_a, args.early_stop);
    compare.b = zeus_rules_of(args.compare_b, "");
    compare.a_label = args.compare_a;
    compare.b_label = args.compare_b;
    run(sim::run_compare(compare), sim::format_compare_table, compare_json,
        sim::write_compare_report);
  } else if (e == "headline") {
    run(sim::run_headline(options), sim::format_headline_table, headline_json,
        sim::write_headline_report);
  } else if (e == "pareto") {
    run(sim::run_pareto(options), sim::format_pareto_table, pareto_json, sim::write_pareto_report);
  } else if (e == "search-path") {
    run(sim::run_search_path(options), sim::format_search_path_table, search_path_json,
        sim::write_search_path_report);
  } else if (e == "eta-sweep") {
    run(sim::run_eta_sweep(options, args.etas), sim::format_sweep_table, sweep_json,
        sim::write_sweep_report);
  } else if (e == "beta-sweep") {
    run(sim::run_beta_sweep(options, args.betas), sim::format_sweep_table, sweep_json,
        sim::write_sweep_report);
  } else if (e == "ablation") {
    run(sim::run_ablation(options), sim::format_sweep_table, sweep_json, sim::write_sweep_report);
  } else if (e == "gpus") {
    run(sim::run_gpus(options, args.gpus), sim::format_sweep_table, sweep_json,
        sim::write_sweep_report);
  } else if (e == "drift") {
    run(sim::run_drift(options, args.drift), sim::format_drift_table, drift_json,
        sim::write_drift_report);
  } else {
    run(sim::run_concurrent(options, args.overlaps), sim::format_concurrent_table, concurrent_json,
        sim::write_concurrent_report);
  }
  if (!report) die(report.error());
  std::cout << (args.json ? json : table) << (args.json ? "\n" : "");
  if (!args.report_dir.empty() && !args.json)
    std::cout << "report: " << report->string() << "/index.md\n";
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Replay the measured traces of the Zeus paper (§6) and compare Default, Grid Search, Zeus "
      "and the\n"
      "Oracle. Experiments: headline (default; Fig. 6/7), pareto (Fig. 2/5), search-path (Fig. "
      "8),\n"
      "eta-sweep (Fig. 11), beta-sweep (Fig. 12), ablation (Fig. 13), gpus (Fig. 14), drift "
      "(§6.4),\n"
      "concurrent (§6.3), perseus (the Perseus paper's emulation: Table 6, Fig. 7), compare (two\n"
      "configurations of Zeus's rules on the same seeds: mean ± standard error and the paired\n"
      "difference's standard error, per workload), serving (an LLM request trace through a model\n"
      "of a continuously batching server under four GPU clock policies: max-clock, best-static,\n"
      "dual-loop, governor; docs/proxy.md \"Saving energy\").\n"
      "Oracles: 'Oracle' is the paper's comparison point, what an exhaustive grid search converges "
      "to:\n"
      "the (b, p) of least expected cost among those whose every training path reaches the "
      "target.\n"
      "'Oracle (expected)' takes the least expected cost over every (b, p), a path that misses "
      "the\n"
      "target charged as a failed run plus a retry (lower or equal; the floor cum_regret is taken "
      "from).\n"
      "Documentation of every output key: docs/simulate.md.\n"
      "Examples:\n"
      "  zeus simulate                          # headline on V100, eta 0.5, beta 2, 10 seeds\n"
      "  zeus simulate headline --json --seeds 3 --workload squad\n"
      "  zeus simulate pareto --gpu a40 --report /tmp/zeus-report\n"
      "  zeus simulate drift --drift-workload cifar100 --drift-targets 0.35 0.6 --window 8\n"
      "  zeus simulate concurrent --overlaps 1 4 16 --workload imagenet\n"
      "  zeus simulate perseus --gpus a100_sxm --microbatches 12 96 --report /tmp/perseus\n"
      "  zeus simulate compare --a zeus --b upstream --seeds 1000\n"
      "  zeus simulate serving --trace data/llm_traces/azure_llm_2023_code.csv --json\n"
      "  zeus simulate compare --a zeus,prune_factor=off --b zeus --seeds 1000\n"
      "  zeus simulate --workload squad --recurrences 20 --recurrence-interval 2 \\\n"
      "      --carbon csv:data/carbon_hist.csv:MISO_MASON_CITY --price const:0.12");
  cmd->add_option("experiment", args->experiment, "the experiment (default headline)")
      ->check(CLI::IsMember(
          std::vector<std::string>(std::begin(kExperiments), std::end(kExperiments))));
  cmd->add_option(
      "--data", args->data_dir,
      "folder with summary_train.csv and summary_power_<gpu>.csv (default: $ZEUS_DATA_DIR, else "
      "the data installed with zeus, <prefix>/share/zeus/data, else the source tree's data/)");
  cmd->add_option("--gpu", args->gpu, "v100 (default), a40, rtx6000 or p100");
  cmd->add_option("--workload", args->workloads,
                  "workload(s): cifar100, imagenet, squad, librispeech, movielens-1m, sentiment140 "
                  "(default: all six)");
  cmd->add_option("--eta", args->eta, "energy/time knob in [0, 1] (default 0.5)");
  cmd->add_option("--beta", args->beta,
                  "early stop at beta x min cost; >= 1, 0 = never (default 2)");
  add_parsed_option(*cmd, "--seeds", args->seeds, count_in("--seeds", 1, kMaxSeeds),
                    "number of seeds, 1 to " + std::to_string(kMaxSeeds) +
                        "; mean and spread over them (default 10)")
      ->type_name("INT");
  add_parsed_option(
      *cmd, "--seed", args->seed,
      [](const std::string& text) { return parse_count(text, "--seed", 0, UINT64_MAX); },
      "first seed, 0 to 2^64 - 1 (default 1)")
      ->type_name("UINT");
  add_parsed_option(*cmd, "--recurrences", args->recurrences,
                    count_in("--recurrences", 0, kMaxRecurrences),
                    "recurrences per workload, at most " + std::to_string(kMaxRecurrences) +
                        " (default 0 = 2 x |B| x |P|)")
      ->type_name("INT");
  cmd->add_option("--fidelity", args->fidelity, "epoch (closed form per epoch; default) or step");
  cmd->add_flag("--json", args->json, "print machine-readable JSON instead of the table");
  cmd->add_option("--report", args->report_dir,
                  "write a Markdown/HTML report with CSV data and SVG figures to DIR");
  cmd->add_flag("--no-early-stop", args->no_early_stop,
                "ablation: no early stopping (Zeus, Grid Search)");
  cmd->add_flag("--no-pruning", args->no_pruning, "ablation: no pruning (Zeus, Grid Search)");
  cmd->add_flag("--no-jit", args->no_jit,
                "ablation: no JIT power profiling (Zeus runs at max power)");
  cmd->add_option(
      "--rules", args->rules,
      "Zeus's rules: zeus (default: ours) or upstream (the original's: early stop before the\n"
      "crossing epoch with its cost known, every survivor re-run, its bandit and bookkeeping), "
      "then\n"
      "optional ,key=value overrides: early_stop=predictive|after-crossing|known-epoch-cost,\n"
      "prune_factor=X|off, pruning_beta=X|off, stop_after_rises=N, mab_min_relative_sd=X,\n"
      "upstream_bookkeeping=0|1");
  cmd->add_option(
         "--early-stop", args->early_stop,
         "Zeus's early stop: predictive (default: stop when the cost so far plus the next epoch's\n"
         "expected cost would exceed beta x min cost; saves the crossing epoch) or after-crossing\n"
         "(Zeus 0.16's server: stop after the epoch that crossed it; never cuts a run that would\n"
         "have converged within the bound, pays up to one extra epoch per early stop)")
      ->check(CLI::IsMember({"predictive", "after-crossing"}));
  cmd->add_option("--a", args->compare_a,
                  "compare: configuration A (a --rules text; default zeus)");
  cmd->add_option("--b", args->compare_b,
                  "compare: configuration B (a --rules text; default upstream)");
  cmd->add_option("--carbon", args->carbon,
                  "headline: charge each policy's energy with carbon intensity, gCO2eq per kWh:\n"
                  "const:VALUE or csv:FILE[:LOCATION] (offline only: a replay is reproducible)");
  cmd->add_option("--price", args->price,
                  "headline: charge each policy's energy with an electricity price, $ per kWh:\n"
                  "const:VALUE or csv:FILE[:LOCATION]");
  cmd->add_option("--start", args->start,
                  "headline: ISO 8601 start of the first recurrence (default: the first series'\n"
                  "first timestamp, --carbon's before --price's)");
  CLI::Option* interval =
      cmd->add_option("--recurrence-interval", args->recurrence_interval_h,
                      "headline: hours between recurrence starts (default 24: a daily job)")
          ->type_name("HOURS");
  cmd->add_option("--threads", args->threads, "threads for the seeds (default 0 = all cores)");
  cmd->add_option("--etas", args->etas, "eta-sweep: the etas (default 0, 0.1, ..., 1)");
  cmd->add_option("--betas", args->betas, "beta-sweep: the betas (default 1.5, 2, ..., 5)");
  cmd->add_option("--gpus", args->gpus,
                  "gpus: the GPUs (default v100 a40 rtx6000 p100); perseus: a100_sxm and/or a40 "
                  "(default both)");
  cmd->add_option("--pp-models", args->pp_models, "perseus: gpt3-175b and/or bloom (default both)");
  cmd->add_option("--microbatches", args->microbatches,
                  "perseus: microbatches per pipeline (default 12 24 48 96)");
  cmd->add_option("--slowdowns", args->slowdowns,
                  "perseus: straggler factors T'/T_min (default 1.05 1.1 1.2 1.3 1.4 1.5)");
  cmd->add_option(
         "--pareto", args->pareto,
         "perseus: the planner's Pareto filter, measured (default; the paper's) or effective "
         "(see zeus pfo plan --help)")
      ->check(CLI::IsMember({"measured", "effective"}));
  cmd->add_option("--overlaps", args->overlaps,
                  "concurrent: mean submissions in flight (default 1 2 4 8)");
  cmd->add_option("--drift-workload", args->drift.workload,
                  "drift: the workload (default imagenet)");
  cmd->add_option("--drift-targets", args->drift.targets,
                  "drift: one target metric per phase (default 0.65 0.5)");
  add_parsed_option(*cmd, "--phase-recurrences", args->drift.phase_recurrences,
                    count_in("--phase-recurrences", 0, kMaxRecurrences),
                    "drift: recurrences per phase, at most " + std::to_string(kMaxRecurrences) +
                        " (default: --recurrences, or 2 x |B| x |P|)")
      ->type_name("INT");
  add_serving_options(*cmd, args->serving);
  cmd->add_option("--window", args->drift.window_size,
                  "drift: window of newest costs for the windowed Zeus (default 5)");
  cmd->callback([args, cmd, interval] {
    args->recurrence_interval_given = interval->count() > 0;
    // An option of some experiments (its help names them: "drift: ...", "gpus: ...; perseus:
    // ...") given to another would be ignored silently: a usage error instead.
    for (const CLI::Option* option : cmd->get_options()) {
      if (option->count() == 0) continue;
      const std::string& help = option->get_description();
      std::string owners;
      bool mine = false;
      for (const char* e : kExperiments) {
        const std::string tag = std::string(e) + ":";
        const size_t at = help.find(tag);
        const bool owns =
            at == 0 || (at != std::string::npos && at >= 2 && help.compare(at - 2, 2, "; ") == 0);
        if (!owns) continue;
        owners += (owners.empty() ? "'zeus simulate " : "' or '") + std::string(e);
        mine = mine || args->experiment == e;
      }
      if (owners.empty() || mine) continue;
      zeus::cli::die(option->get_name() + " applies to " + owners + "' only (this is '" +
                         args->experiment + "'); see zeus simulate --help",
                     2);
    }
    run_simulate(*args);
  });
}

}  // namespace zeus::cli
