// zeus simulate: the trace-driven simulator and the paper's evaluation (src/sim/).
//
// Output: a text table on stdout, or with --json one JSON document with stable keys:
//   headline: {"experiment": "headline", "gpu", "eta", "beta", "seeds", "workloads": [{"name",
//     "recurrences", "policies": {"Default"|"GridSearch"|"Zeus"|"Oracle": {"last5_energy_ratio",
//     "last5_time_ratio", "cum_energy_ratio", "cum_time_ratio", "cum_regret"}}}]}
//     (ratios against Default and cum_regret in J, all means over seeds)
//   pareto: {"experiment": "pareto", "gpu", "eta", "workloads": [{"name", "points": [{"batch_size",
//     "power_limit", "tta_s", "eta_j", "cost_j", "reach_probability", "on_frontier", "is_default",
//     "is_optimum"}]}]}
// --report DIR writes the Markdown/HTML report with CSV data and gnuplot SVG figures.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "zeus/sim_experiments.h"
#include "zeus/sim_report.h"

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
};

[[noreturn]] void die(const Error& error) {
  std::cerr << "zeus: " << error.message << "\n";
  throw CLI::RuntimeError(1);
}

std::string default_data_dir() {
  if (const char* env = std::getenv("ZEUS_DATA_DIR"); env && *env) return env;
  return ZEUS_DATA_DIR;
}

void print_progress(int done, int total) {
  const int width = 40;
  const int filled = total > 0 ? done * width / total : width;
  std::fprintf(stderr, "\r[%s%s] %d/%d", std::string(static_cast<std::size_t>(filled), '#').c_str(),
               std::string(static_cast<std::size_t>(width - filled), ' ').c_str(), done, total);
  if (done == total) std::fprintf(stderr, "\r%*s\r", width + 24, "");
  std::fflush(stderr);
}

nlohmann::ordered_json headline_json(const sim::HeadlineResult& r) {
  nlohmann::ordered_json out;
  out["experiment"] = "headline";
  out["gpu"] = r.gpu;
  out["eta"] = r.eta;
  out["beta"] = r.beta;
  out["seeds"] = r.seeds;
  out["workloads"] = nlohmann::ordered_json::array();
  for (const sim::WorkloadHeadline& w : r.workloads) {
    nlohmann::ordered_json jw;
    jw["name"] = w.name;
    jw["recurrences"] = w.recurrences;
    nlohmann::ordered_json policies = nlohmann::ordered_json::object();
    for (const sim::PolicyHeadline& p : w.policies) {
      nlohmann::ordered_json jp;
      jp["last5_energy_ratio"] = p.last5_energy_ratio.mean;
      jp["last5_time_ratio"] = p.last5_time_ratio.mean;
      jp["cum_energy_ratio"] = p.cum_energy_ratio.mean;
      jp["cum_time_ratio"] = p.cum_time_ratio.mean;
      jp["cum_regret"] = p.cum_regret_j.mean;
      policies[std::string(sim::policy_name(p.policy))] = jp;
    }
    jw["policies"] = policies;
    out["workloads"].push_back(jw);
  }
  return out;
}

nlohmann::ordered_json pareto_json(const sim::ParetoResult& r) {
  nlohmann::ordered_json out;
  out["experiment"] = "pareto";
  out["gpu"] = r.gpu;
  out["eta"] = r.eta;
  out["workloads"] = nlohmann::ordered_json::array();
  for (const sim::WorkloadPareto& w : r.workloads) {
    nlohmann::ordered_json jw;
    jw["name"] = w.name;
    jw["points"] = nlohmann::ordered_json::array();
    for (const sim::ParetoPoint& p : w.points) {
      nlohmann::ordered_json jp;
      jp["batch_size"] = p.batch_size;
      jp["power_limit"] = p.power_limit_w;
      jp["tta_s"] = p.tta_s;
      jp["eta_j"] = p.eta_j;
      jp["cost_j"] = p.cost_j;
      jp["reach_probability"] = p.reach_probability;
      jp["on_frontier"] = p.on_frontier;
      jp["is_default"] = p.is_default;
      jp["is_optimum"] = p.is_optimum;
      jw["points"].push_back(jp);
    }
    out["workloads"].push_back(jw);
  }
  return out;
}

void run_simulate(const SimulateArgs& args) {
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
  auto fidelity = sim::parse_fidelity(args.fidelity);
  if (!fidelity) die(fidelity.error());
  options.sim.fidelity = *fidelity;
  if (isatty(STDERR_FILENO)) options.progress = print_progress;

  std::string table;
  std::string json;
  Result<std::filesystem::path> report = std::filesystem::path();
  sim::ReportOptions report_options;
  if (args.experiment == "headline") {
    auto result = sim::run_headline(options);
    if (!result) die(result.error());
    table = sim::format_headline_table(*result);
    json = headline_json(*result).dump(2);
    if (!args.report_dir.empty()) report = sim::write_headline_report(*result, args.report_dir, report_options);
  } else {
    auto result = sim::run_pareto(options);
    if (!result) die(result.error());
    table = sim::format_pareto_table(*result);
    json = pareto_json(*result).dump(2);
    if (!args.report_dir.empty()) report = sim::write_pareto_report(*result, args.report_dir, report_options);
  }
  if (!report) die(report.error());
  std::cout << (args.json ? json : table) << (args.json ? "\n" : "");
  if (!args.report_dir.empty() && !args.json) std::cout << "report: " << report->string() << "/index.md\n";
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Replay the measured traces of the Zeus paper: compare Default, Grid Search, Zeus and the\n"
      "Oracle on the six workloads (headline), or map every (batch size, power limit) (pareto).\n"
      "Examples:\n"
      "  zeus simulate                          # headline on V100, eta 0.5, beta 2, 10 seeds\n"
      "  zeus simulate headline --json --seeds 3 --workload squad\n"
      "  zeus simulate pareto --gpu a40 --report /tmp/zeus-report");
  cmd->add_option("experiment", args->experiment, "headline (default) or pareto")
      ->check(CLI::IsMember({"headline", "pareto"}));
  cmd->add_option("--data", args->data_dir, "folder with summary_train.csv and summary_power_<gpu>.csv (default: the bundled data/)");
  cmd->add_option("--gpu", args->gpu, "v100 (default), a40, rtx6000 or p100");
  cmd->add_option("--workload", args->workloads,
                  "workload(s): cifar100, imagenet, squad, librispeech, movielens-1m, sentiment140 (default: all six)");
  cmd->add_option("--eta", args->eta, "energy/time knob in [0, 1] (default 0.5)");
  cmd->add_option("--beta", args->beta, "early stop at beta x min cost; >= 1, 0 = never (default 2)");
  cmd->add_option("--seeds", args->seeds, "number of seeds; mean and spread over them (default 10)");
  cmd->add_option("--seed", args->seed, "first seed (default 1)");
  cmd->add_option("--recurrences", args->recurrences, "recurrences per workload (default 0 = 2 x |B| x |P|)");
  cmd->add_option("--fidelity", args->fidelity, "epoch (closed form per epoch; default) or step");
  cmd->add_flag("--json", args->json, "print machine-readable JSON instead of the table");
  cmd->add_option("--report", args->report_dir, "write a Markdown/HTML report with CSV data and SVG figures to DIR");
  cmd->add_flag("--no-early-stop", args->no_early_stop, "ablation: no early stopping (Zeus, Grid Search)");
  cmd->add_flag("--no-pruning", args->no_pruning, "ablation: no pruning (Zeus, Grid Search)");
  cmd->add_flag("--no-jit", args->no_jit, "ablation: no JIT power profiling (Zeus runs at max power)");
  cmd->callback([args] { run_simulate(*args); });
}

}  // namespace zeus::cli
