// zeus pfo: the Perseus pipeline frequency planner (src/perseus/planner/).
//   zeus pfo plan    the iteration time-energy frontier of a pipeline from its stage profile
//   zeus pfo choose  one plan of it (no slowdown, a slowdown budget, or a straggler's time),
//                    written as the schedule file the pipeline frequency server serves
//   zeus pfo serve   that server (cmd_pfo_serve.cc)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "cli_util.h"
#include "commands.h"
#include "output_path.h"
#include "pfo_files.h"
#include "zeus/perseus/pfo_plan_choice.h"
#include "zeus/perseus/pfo_plan_store.h"
#include "zeus/perseus/pfo_planner.h"
#include "zeus/perseus/sim_perseus.h"

namespace zeus::cli {
namespace {
namespace fs = std::filesystem;

struct PlanArgs {
  std::string profile;
  int stages = 0;
  int microbatches = 0;
  double p2p_power_w = -1.0;
  double unit_s = 0.001;
  double noise = 0.95;
  std::string pareto = "measured";
  std::string out;
  bool json = false;
  double progress_every_s = 5.0;
};

// The value of a Result, or a usage error (exit 2) with its message.
template <typename T>
T value_or_usage_error(Result<T> result) {
  if (!result) die(result.error().message, 2);
  if constexpr (!std::is_void_v<T>) return std::move(*result);
}

struct ExportArgs {
  std::string plans;
  long index = -1;
  bool fastest = false;
  bool all = false;
  std::string out;
};

struct ChooseArgs {
  std::string plans;
  double slowdown = -1.0;
  double straggler_time_s = -1.0;
  bool fastest = false;
  std::string out;
  bool json = false;
};

// The planner's progress on stderr: a bar redrawn in place on a terminal; otherwise (a log file,
// a pipe) one line every `interval_s` seconds, and a last line when any was written.
class PlanProgressReport {
 public:
  PlanProgressReport(bool terminal, double interval_s)
      : terminal_(terminal),
        interval_s_(interval_s),
        start_(std::chrono::steady_clock::now()),
        next_line_s_(interval_s) {}

  void operator()(int64_t done, int64_t total) {
    if (terminal_) return draw_bar(done, total);
    const double elapsed = seconds_since_start();
    if (elapsed < next_line_s_) return;
    next_line_s_ = elapsed + interval_s_;
    lines_ = true;
    std::fprintf(stderr, "zeus: planning: %lld of about %lld plans, %.0f s\n",
                 static_cast<long long>(done), static_cast<long long>(total), elapsed);
    std::fflush(stderr);
  }

  // After the planner returned.
  void finish(int64_t plans) {
    if (terminal_) {
      std::fprintf(stderr, "\r%*s\r", 70, "");
    } else if (lines_) {
      std::fprintf(stderr, "zeus: planning: %lld plans in %.0f s\n", static_cast<long long>(plans),
                   seconds_since_start());
    }
  }

 private:
  double seconds_since_start() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  void draw_bar(int64_t done, int64_t total) {
    const int64_t width = 40;
    const int64_t filled = total > 0 ? std::min(width, done * width / total) : width;
    if (filled == last_filled_ && done < total) return;
    last_filled_ = filled;
    std::fprintf(stderr, "\rplanning [%s%s] %lld/~%lld plans",
                 std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(width - filled), ' ').c_str(),
                 static_cast<long long>(done), static_cast<long long>(total));
    std::fflush(stderr);
  }

  bool terminal_;
  double interval_s_;
  std::chrono::steady_clock::time_point start_;
  double next_line_s_;  // when the next line is due: short plans print none
  bool lines_ = false;
  int64_t last_filled_ = -1;
};

void run_plan(const PlanArgs& args) {
  std::ifstream in(args.profile);
  if (!in)
    die("cannot read --profile " + args.profile +
        " (a CSV with columns stage,instruction,frequency,time,energy)");
  std::stringstream text;
  text << in.rdbuf();
  const pfo::StageProfile profile =
      value_or_die(pfo::parse_stage_profile(text.str(), args.profile));
  pfo::PlannerOptions options;
  options.num_stages = args.stages;
  options.num_microbatches = args.microbatches;
  options.p2p_power_w = args.p2p_power_w;
  options.unit_time_s = args.unit_s;
  options.noise_factor = args.noise;
  options.pareto =
      args.pareto == "effective" ? pfo::ParetoEnergy::kEffective : pfo::ParetoEnergy::kMeasured;
  // Before any work: options out of range and jobs beyond the planner's bounds are usage errors.
  value_or_usage_error(pfo::validate_planner_options(profile, options));
  const pfo::PlanSize size = value_or_die(pfo::plan_size(profile, options));
  value_or_usage_error(pfo::check_plan_size(size));
  value_or_die(output_folder("--out", args.out));
  PlanProgressReport progress(isatty(STDERR_FILENO) != 0 && !args.json, args.progress_every_s);
  auto frontier = pfo::plan_frontier(profile, options, std::ref(progress));
  progress.finish(frontier ? static_cast<int64_t>(frontier->points().size()) : 0);
  if (!frontier) die(frontier.error().message);
  if (frontier->points().empty())
    die("the profile leaves nothing to plan: no plan is faster than every instruction at its "
        "slowest clock");
  const nlohmann::json summary = plan_summary(*frontier, profile, args.profile);
  // The global-clock alternatives of the combined straggler policy, kept with the plans.
  std::vector<pfo::GlobalClockPlan> global_clocks;
  for (const sim::GlobalClockRun& run :
       value_or_die(sim::global_clock_runs(profile, frontier->schedule(), options.p2p_power_w)))
    global_clocks.push_back(run.plan);
  value_or_die(write_plan_files(args.out, *frontier, global_clocks, summary));
  if (args.json) {
    nlohmann::json out = summary;
    out.erase("operations");
    out.erase("schedule");
    out.erase("t_max_frequencies");
    out["out"] = args.out;
    std::cout << out.dump(2) << "\n";
    return;
  }
  auto line = [](const std::string& name, const nlohmann::json& plan) {
    std::cout << name << format_fixed(plan["time_s"].get<double>(), 4) << " s  "
              << format_fixed(plan["energy_j"].get<double>(), 1) << " J  ("
              << (plan["index"].is_null()
                      ? std::string("T_max")
                      : "plan " + std::to_string(plan["index"].get<std::size_t>()))
              << ")\n";
  };
  std::cout << frontier->points().size() << " plans, " << args.stages << " stages x "
            << args.microbatches << " microbatches, unit " << args.unit_s << " s\n";
  std::cout << "T_max (slowest):  "
            << format_fixed(summary["t_max_plan"]["time_s"].get<double>(), 4) << " s  "
            << format_fixed(summary["t_max_plan"]["energy_j"].get<double>(), 1)
            << " J  (every instruction at its slowest clock; not a row of frontier.csv)\n";
  line("slowest plan:     ", summary["slowest_plan"]);
  line("T* (min energy):  ", summary["t_star_plan"]);
  line("T_min (fastest):  ", summary["fastest_plan"]);
  std::cout << "every instruction at its highest clock, at T_min: "
            << format_fixed(summary["all_max_clock_energy_j"].get<double>(), 1)
            << " J; the fastest plan saves "
            << format_fixed(100.0 * summary["fastest_plan_saving"].get<double>(), 2)
            << " % with no slowdown";
  if (summary["fastest_plan_measured_saving"].is_number()) {
    std::cout << " ("
              << format_fixed(100.0 * summary["fastest_plan_measured_saving"].get<double>(), 2)
              << " % with its clocks priced from the measured rows, as the baseline)";
  }
  std::cout << "\n";
  std::cout << "files: " << (fs::path(args.out) / "frontier.csv").string()
            << ", plans.bin, summary.json\n"
            << "next: zeus pfo choose --plans " << args.out << " --fastest\n";
}

void run_choose(const ChooseArgs& args, CLI::App& command) {
  const int modes = (command.count("--slowdown") > 0) + (command.count("--straggler-time") > 0) +
                    (args.fastest ? 1 : 0);
  if (modes != 1) die("give exactly one of --fastest, --slowdown X, --straggler-time T");
  const PlanFolder folder = value_or_die(read_plan_folder(args.plans));
  auto all = value_or_die(read_plans(args.plans));
  std::vector<pfo::FrontierPoint> points;
  for (const PlanRecord& p : all) points.push_back({0, p.time_s, 0.0, p.energy_j, 0.0});
  const pfo::PlanCandidates candidates{{0, folder.t_max.time_s, 0.0, folder.t_max.energy_j, 0.0},
                                       points};
  pfo::PlanChoice choice;
  std::string rule;
  if (args.fastest) {
    choice = pfo::fastest_plan(candidates);
    rule = "fastest plan (no slowdown)";
  } else if (command.count("--slowdown") > 0) {
    choice = value_or_die(pfo::plan_within_slowdown(candidates, args.slowdown));
    rule = "least energy within " + format_fixed(100.0 * args.slowdown, 1) + " % of T_min";
  } else {
    choice = value_or_die(pfo::plan_for_straggler(candidates, args.straggler_time_s));
    rule = "least energy finishing by the straggler's " + format_fixed(args.straggler_time_s, 4) +
           " s";
  }
  const PlanRecord chosen =
      choice.plan
          ? value_or_die(read_plans(args.plans, static_cast<long>(*choice.plan)))[*choice.plan]
          : folder.t_max;
  const auto& names = folder.schedule;
  if (names.size() != chosen.frequencies.size())
    die("the plans and summary.json disagree on the number of stages (plan again)");
  nlohmann::json frequencies = nlohmann::json::array();
  for (std::size_t s = 0; s < names.size(); ++s) {
    if (names[s].size() != chosen.frequencies[s].size())
      die("the plans and summary.json disagree on stage " + std::to_string(s) + " (plan again)");
    nlohmann::json stage = nlohmann::json::array();
    for (std::size_t k = 0; k < names[s].size(); ++k)
      stage.push_back({names[s][k], chosen.frequencies[s][k]});
    frequencies.push_back(stage);
  }
  const nlohmann::json schedule = {
      {"plan", choice.plan ? nlohmann::json(*choice.plan) : nlohmann::json(nullptr)},
      {"rule", rule},
      {"time", chosen.time_s},
      {"energy", chosen.energy_j},
      {"stages", folder.stages},
      {"microbatches", folder.microbatches},
      {"frequencies", frequencies}};
  const fs::path out =
      args.out.empty() ? fs::path(args.plans) / "schedule.json" : fs::path(args.out);
  value_or_die(write_schedule_file(out, schedule));
  if (args.json) {
    nlohmann::json printed = schedule;
    printed["schedule_file"] = out.string();
    std::cout << printed.dump() << "\n";
    return;
  }
  std::cout << (choice.plan
                    ? "plan " + std::to_string(*choice.plan) + " of " + std::to_string(all.size())
                    : "the T_max schedule (every instruction at its slowest clock; not "
                      "one of the " +
                          std::to_string(all.size()) + " plans)")
            << " (" << rule << "): " << format_fixed(chosen.time_s, 4) << " s, "
            << format_fixed(chosen.energy_j, 1) << " J per iteration\n";
  for (std::size_t s = 0; s < names.size(); ++s) {
    std::cout << "  stage " << s << ":";
    for (std::size_t k = 0; k < names[s].size() && k < 12; ++k) {
      std::cout << " " << (names[s][k] == "forward" ? "F" : "B") << "@" << chosen.frequencies[s][k];
    }
    std::cout << (names[s].size() > 12 ? " ..." : "") << "\n";
  }
  std::cout << "schedule file: " << out.string() << "\n";
}

// zeus pfo export-plan: plans of plans.bin in the JSON form of the old plans.jsonl.
void run_export(const ExportArgs& args, CLI::App& command) {
  const int modes = (command.count("--index") > 0) + (args.fastest ? 1 : 0) + (args.all ? 1 : 0);
  if (modes != 1) die("give exactly one of --index N, --fastest, --all", 2);
  if (args.index < -1 || (command.count("--index") > 0 && args.index < 0))
    die("--index must be a plan number >= 0 (0 is the slowest plan)", 2);
  const fs::path dir(args.plans);
  value_or_die(read_plan_folder(dir));  // names a wrong folder clearly
  const pfo::PlanStore store = value_or_die(pfo::PlanStore::open(dir / "plans.bin"));
  std::ofstream file;
  std::string temp;
  if (!args.out.empty()) {
    temp = value_or_die(output_file("--out", args.out)).string() + ".tmp-" +
           std::to_string(getpid());
    file.open(temp);
    if (!file) die("cannot write " + temp);
  }
  std::ostream& out = args.out.empty() ? std::cout : file;
  auto write = [&](std::size_t i, std::vector<std::vector<int>> clocks) {
    const pfo::FrontierPoint& p = store.points()[i];
    out << plan_line(i, {p.time_s, p.energy_j, std::move(clocks)}).dump() << '\n';
  };
  if (args.all) {
    value_or_die(store.for_each_plan(
        [&](std::size_t i, const std::vector<std::vector<int>>& clocks) { write(i, clocks); }));
  } else {
    const std::size_t index =
        args.fastest ? store.points().size() - 1 : static_cast<std::size_t>(args.index);
    write(index, value_or_die(store.clocks_mhz(index)));
  }
  if (!args.out.empty()) {
    file.close();
    std::error_code ec;
    if (file) fs::rename(temp, args.out, ec);
    if (!file || ec) {
      fs::remove(temp, ec);
      die("cannot write --out " + args.out);
    }
  }
}

}  // namespace

void add_pfo_command(CLI::App& app) {
  CLI::App* pfo = app.add_subcommand(
      "pfo",
      "Perseus, the pipeline frequency optimizer (SOSP '24): plan one GPU SM clock per "
      "forward/backward\n"
      "instruction of a 1F1B pipeline so that stages off the critical path stop wasting energy.\n"
      "  zeus pfo plan --profile gpt3.csv --stages 8 --microbatches 12 --p2p-power 83.64 --out "
      "plans/\n"
      "  zeus pfo choose --plans plans/ --fastest        # 0 % slowdown, least energy\n"
      "  zeus pfo choose --plans plans/ --straggler-time 3.3\n"
      "  zeus pfo serve --schedule plans/schedule.json   # the server training ranks ask\n"
      "The stage profile, the P2P blocking power and the files: docs/perseus.md.");
  pfo->require_subcommand(1);

  auto plan_args = std::make_shared<PlanArgs>();
  CLI::App* plan = pfo->add_subcommand("plan",
                                       "Compute the iteration time-energy frontier: for every "
                                       "iteration time from every instruction at its\n"
                                       "slowest useful clock down to the fastest, the plan of "
                                       "least energy. Writes DIR/frontier.csv\n"
                                       "(time,energy), DIR/plans.bin (clocks per plan, compact: "
                                       "`zeus pfo export-plan` reads it) and\n"
                                       "DIR/summary.json; prints T_max, T*, T_min.\n"
                                       "Bounds: at most " +
                                           std::to_string(pfo::kMaxPlanInstructions) +
                                           " instructions (2 x stages x microbatches) and " +
                                           std::to_string(pfo::kMaxPlanWork) +
                                           " instruction-plans\n(instructions x (T_max - T_min) "
                                           "/ unit: the work); "
                                           "beyond them\na usage error (exit 2) before any "
                                           "work. Progress goes to stderr.");
  plan->add_option("--profile", plan_args->profile,
                   "stage profile CSV: stage,instruction,frequency,time,energy (Zeus 0.16's rank "
                   "columns allowed)")
      ->required();
  plan->add_option("--stages", plan_args->stages,
                   "pipeline stages (>= 2; the profile's stages 0..S-1)")
      ->required();
  plan->add_option("--microbatches", plan_args->microbatches, "microbatches per iteration (>= 1)")
      ->required();
  plan->add_option("--p2p-power", plan_args->p2p_power_w,
                   "GPU power in W while blocked on a pipeline receive (A100 83.64, A40 70.38)")
      ->required();
  plan->add_option("--unit", plan_args->unit_s,
                   "planning time unit in s (finer = more plans, slower)")
      ->capture_default_str();
  plan->add_option("--noise", plan_args->noise,
                   "Pareto filter slack used when the strict filter keeps <= 3 clocks, in (0, 1]")
      ->capture_default_str();
  plan->add_option(
          "--pareto", plan_args->pareto,
          "which energy the Pareto filter of clocks compares: measured (the authors' artifact; "
          "reproduces the published frontiers) or effective (energy - P2P power x time, Zeus "
          "0.16's "
          "example; keeps slower clocks, reaches further against long stragglers)")
      ->check(CLI::IsMember({"measured", "effective"}))
      ->capture_default_str();
  plan->add_option("--out", plan_args->out, "output folder (new or empty)")->required();
  plan->add_flag("--json", plan_args->json, "print the summary as JSON (keys: docs/perseus.md)");
  add_parsed_option(
      *plan, "--progress-every", plan_args->progress_every_s,
      [](const std::string& text) {
        return parse_seconds(text, "--progress-every", {.min_s = 0.0, .zero_allowed = true});
      },
      "when stderr is not a terminal, seconds between progress lines (default 5; 0 = every "
      "plan)");
  plan->callback([plan_args] { run_plan(*plan_args); });

  auto choose_args = std::make_shared<ChooseArgs>();
  CLI::App* choose = pfo->add_subcommand(
      "choose",
      "Pick one plan of a frontier and write it as a schedule file ([[instruction, MHz], ...] per "
      "stage).\n"
      "  --fastest            the fastest plan: no slowdown, the least energy at that time\n"
      "  --slowdown X         the least-energy plan at most (1 + X) x T_min (X = 0.05: 5 % "
      "slower)\n"
      "  --straggler-time T   another pipeline straggles to T s: the least-energy plan done by T");
  choose->add_option("--plans", choose_args->plans, "the --out folder of `zeus pfo plan`")
      ->required();
  choose->add_flag("--fastest", choose_args->fastest, "the fastest plan");
  choose->add_option("--slowdown", choose_args->slowdown, "slowdown budget as a fraction (>= 0)");
  choose->add_option("--straggler-time", choose_args->straggler_time_s,
                     "the straggler's iteration time in s");
  choose->add_option("--out", choose_args->out,
                     "schedule file to write (default PLANS/schedule.json)");
  choose->add_flag("--json", choose_args->json, "print the schedule as JSON");
  choose->callback([choose_args, choose] { run_choose(*choose_args, *choose); });

  auto export_args = std::make_shared<ExportArgs>();
  CLI::App* export_plan = pfo->add_subcommand(
      "export-plan",
      "Write plans of a frontier's plans.bin in JSON, one object per line, as the plans.jsonl of\n"
      "older versions: {\"index\", \"time\", \"energy\", \"frequencies\": [[MHz per instruction] "
      "per stage]}.\n"
      "  zeus pfo export-plan --plans plans/ --index 42\n"
      "  zeus pfo export-plan --plans plans/ --all --out plans.jsonl");
  export_plan->add_option("--plans", export_args->plans, "the --out folder of `zeus pfo plan`")
      ->required();
  export_plan->add_option("--index", export_args->index, "the plan's number (0: the slowest)");
  export_plan->add_flag("--fastest", export_args->fastest, "the fastest plan (T_min)");
  export_plan->add_flag("--all", export_args->all, "every plan, slowest first");
  export_plan->add_option("--out", export_args->out, "file to write (default: stdout)");
  export_plan->callback(
      [export_args, export_plan] { run_export(*export_args, *export_plan); });

  add_pfo_serve_command(*pfo);
}

}  // namespace zeus::cli
