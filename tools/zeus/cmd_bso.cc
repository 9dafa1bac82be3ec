// zeus bso: the batch-size optimizer service from the shell — register a job, ask for the next
// batch size, report progress, end a trial, show a job's beliefs and trials, delete a job.
// register, next and report print the service's JSON answer on stdout (one line) for scripts.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "commands.h"
#include "token_file.h"
#include "zeus/client/bso_http_client.h"
#include "zeus/wire/bso_json.h"

namespace zeus::cli {
namespace {

struct BsoArgs {
  std::string server;
  std::string token_file;
  double timeout_s = 10.0;
  // register
  std::string spec_file;
  JobSpec spec;
  std::string job_id;
  std::optional<std::vector<int>> batch_sizes;
  std::string beta = "2.0";
  int64_t seed = 0;
  // next / report / end / show / delete
  TrialReport report;
  bool json = false;
};

std::string default_server() {
  const char* env = std::getenv("ZEUS_BSO_SERVER");
  return env != nullptr && *env != '\0' ? env : "http://127.0.0.1:8000";
}

// The fix for a refused request, from what this command sent: the server's
// message says whether a token was missing or wrong; this names the flag that gives it.
std::string token_hint(const BsoArgs& args) {
  return args.token_file.empty()
             ? " (pass the file that holds the server's token: --token-file FILE)"
             : " (--token-file '" + echo_value(args.token_file) +
                   "' does not hold the token the server was started with)";
}

// The value of a Result of a request, or die() with its error and, when the server refused
// the token, the fix.
template <typename T>
T answer_or_die(Result<T> result, const BsoArgs& args, const std::string& context) {
  if (!result && result.error().code == ErrorCode::kPermissionDenied) {
    die(context + ": " + result.error().message + token_hint(args));
  }
  return value_or_die(std::move(result), context);
}

std::unique_ptr<BsoHttpClient> connect(const BsoArgs& args) {
  BsoHttpClientOptions options;
  if (!args.token_file.empty()) options.token = read_token_file_or_die(args.token_file);
  options.timeout_s = args.timeout_s;
  return value_or_die(make_bso_http_client(args.server, options));
}

std::string read_file_or_die(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) die("cannot read '" + path + "' (check the path)");
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

JobSpec spec_from_args(const BsoArgs& args, const CLI::App& cmd) {
  if (!args.spec_file.empty()) {
    for (const char* flag : {"--prefix", "--batch-sizes", "--default-batch-size", "--max-power"}) {
      if (cmd.count(flag) > 0) die(std::string("--spec and ") + flag + " exclude each other");
    }
    return value_or_die(job_spec_from_json(read_file_or_die(args.spec_file)), args.spec_file);
  }
  if (!args.batch_sizes || cmd.count("--max-power") == 0) {
    die("register needs --spec FILE, or --prefix, --batch-sizes, --default-batch-size and "
        "--max-power");
  }
  JobSpec spec = args.spec;
  spec.batch_sizes = *args.batch_sizes;
  if (cmd.count("--default-batch-size") == 0) die("register needs --default-batch-size");
  if (!args.job_id.empty()) spec.job_id = args.job_id;
  if (args.beta == "null" || args.beta == "none") {
    spec.beta_knob.reset();
  } else {
    char* end = nullptr;
    spec.beta_knob = std::strtod(args.beta.c_str(), &end);
    if (end == args.beta.c_str() || *end != '\0') {
      die("--beta '" + echo_value(args.beta) + "' is not a number or 'none'", 2);
    }
  }
  if (cmd.count("--seed") > 0) spec.mab_seed = args.seed;
  return value_or_die(validate_job_spec(spec));
}

std::string cost_text(const nlohmann::json& v) {
  return v.is_number() ? format_fixed(v.get<double>(), 1) : "-";
}

void print_job(const std::string& text) {
  const nlohmann::json v = nlohmann::json::parse(text, nullptr, false);
  if (!v.is_object() || !v.contains("job") || !v.contains("arms") || !v.contains("trials")) {
    die("the service sent an unreadable job: " + text.substr(0, 200));
  }
  const nlohmann::json& s = v["job"];
  const std::string gpu_model = s.value("gpu_model", "");
  std::cout << "job " << s.value("job_id", "") << "  ("
            << (gpu_model.empty() ? "" : gpu_model + ", ") << "max power "
            << cost_text(s["max_power"]) << " W, eta " << s["eta_knob"].dump() << ", beta "
            << s["beta_knob"].dump() << ")\n";
  std::cout << "phase: "
            << (v.value("phase", "") == "pruning"
                    ? "pruning round " + std::to_string(v.value("pruning_round", 0))
                    : std::string("bandit"))
            << ", min converged cost " << cost_text(v["min_cost"]) << " J\n\n";
  std::cout << "batch size  arm  obs   mean cost (J)   ± spread (J)\n";
  for (const nlohmann::json& a : v["arms"]) {
    std::cout << pad_left(std::to_string(a.value("batch_size", 0)), 10)
              << pad_left(a.value("is_arm", false) ? "yes" : "no", 5)
              << pad_left(std::to_string(a.value("num_observations", 0)), 5)
              << pad_left(cost_text(a["mean_cost"]), 16) << pad_left(cost_text(a["stddev_cost"]), 15)
              << "\n";
  }
  std::cout << "\ntrial  batch size  stage         status          cost (J)  epochs\n";
  for (const nlohmann::json& t : v["trials"]) {
    const std::string kind = t.value("kind", "");
    const std::string stage =
        kind == "pruning" ? "pruning " + std::to_string(t.value("pruning_round", 0)) : kind;
    const std::string status = t.value("status", "");
    std::cout << pad_left(std::to_string(t.value("trial_number", 0)), 5)
              << pad_left(std::to_string(t.value("batch_size", 0)), 12) << "  " << stage
              << std::string(stage.size() < 12 ? 12 - stage.size() : 1, ' ') << "  " << status
              << std::string(status.size() < 14 ? 14 - status.size() : 1, ' ')
              << pad_left(status == "dispatched" ? "-" : cost_text(t["cost"]), 10)
              << pad_left(std::to_string(t.value("epochs", 0)), 8) << "\n";
  }
}

void add_connection_options(CLI::App& cmd, BsoArgs& args) {
  cmd.add_option("--server", args.server, "service URL (env ZEUS_BSO_SERVER)")
      ->capture_default_str();
  cmd.add_option("--token-file", args.token_file, "file holding the service's bearer token");
  cmd.add_option("--timeout", args.timeout_s, "seconds to wait for the service")
      ->capture_default_str();
}

void add_trial_options(CLI::App& cmd, BsoArgs& args) {
  cmd.add_option("--job-id", args.report.job_id, "the job")->required();
  cmd.add_option("--batch-size", args.report.batch_size, "the trial's batch size")->required();
  cmd.add_option("--trial-number", args.report.trial_number, "the trial's number")->required();
}

}  // namespace

void add_bso_command(CLI::App& app) {
  auto args = std::make_shared<BsoArgs>();
  args->server = default_server();
  CLI::App* bso = app.add_subcommand(
      "bso", "Talk to the batch-size optimizer service (zeus serve) from the shell.\n"
             "Example: zeus bso next --job-id resnet-1a2b --server http://127.0.0.1:8000");
  bso->require_subcommand(1);

  CLI::App* reg = bso->add_subcommand(
      "register", "Register a job from a JSON spec (--spec) or flags; prints the stored job");
  add_connection_options(*reg, *args);
  reg->add_option("--spec", args->spec_file,
                  "job spec JSON file: the fields of the flags below, named as in docs/server.md "
                  "(\"job spec\")");
  reg->add_option("--prefix", args->spec.job_id_prefix, "job_id_prefix");
  reg->add_option("--job-id", args->job_id, "job id (default: generated from the prefix)");
  add_parsed_option(
      *reg, "--batch-sizes", args->batch_sizes,
      [](const std::string& text) {
        return parse_int_list(text, "--batch-sizes", "batch sizes like 32,64,128");
      },
      "batch sizes to choose from, e.g. 32,64,128")
      ->type_name("LIST");
  reg->add_option("--default-batch-size", args->spec.default_batch_size, "one of --batch-sizes");
  reg->add_option("--max-power", args->spec.max_power_w, "W: max power limit x number of GPUs");
  reg->add_option("--number-of-gpus", args->spec.number_of_gpus)->capture_default_str();
  reg->add_option("--gpu-model", args->spec.gpu_model, "e.g. A100-SXM4-40GB");
  reg->add_option("--eta", args->spec.eta_knob, "energy vs time knob in [0, 1]")
      ->capture_default_str();
  reg->add_option("--beta", args->beta, "early-stop threshold x min cost, or 'none'")
      ->capture_default_str();
  reg->add_option("--target-metric", args->spec.target_metric)->capture_default_str();
  reg->add_option("--max-epochs", args->spec.max_epochs)->capture_default_str();
  reg->add_option("--seed", args->seed, "mab_seed: reproducible batch-size draws");
  reg->callback([args, reg] {
    const JobSpec spec = spec_from_args(*args, *reg);
    const JobSpec stored = answer_or_die(connect(*args)->register_job(spec), *args, "register");
    std::cout << job_spec_to_json(stored) << std::endl;
  });

  CLI::App* next = bso->add_subcommand(
      "next", "Dispatch a trial: prints {\"job_id\", \"batch_size\", \"trial_number\"}");
  add_connection_options(*next, *args);
  next->add_option("--job-id", args->report.job_id, "the job")->required();
  next->callback([args] {
    const TrialId t =
        answer_or_die(connect(*args)->next_batch_size(args->report.job_id), *args, "next");
    std::cout << trial_id_to_json(t) << std::endl;
  });

  CLI::App* report = bso->add_subcommand(
      "report", "Report a trial's cumulative time and energy; prints the decision JSON");
  add_connection_options(*report, *args);
  add_trial_options(*report, *args);
  report->add_option("--time", args->report.time_s, "s of training so far")->required();
  report->add_option("--energy", args->report.energy_j, "J consumed so far")->required();
  report->add_option("--metric", args->report.metric, "latest validation metric")->required();
  report->add_option("--epoch", args->report.current_epoch, "epochs finished")->required();
  report->callback([args] {
    const ReportDecision d = answer_or_die(connect(*args)->report(args->report), *args, "report");
    std::cout << report_decision_to_json(d) << std::endl;
  });

  CLI::App* end = bso->add_subcommand("end", "Mark a dispatched trial failed (training died)");
  add_connection_options(*end, *args);
  add_trial_options(*end, *args);
  end->callback([args] {
    const TrialReport& r = args->report;
    answer_or_die(connect(*args)->end_trial({r.job_id, r.batch_size, r.trial_number}), *args,
                  "end");
  });

  CLI::App* show = bso->add_subcommand("show", "Show a job: beliefs per batch size and trials");
  add_connection_options(*show, *args);
  show->add_option("--job-id", args->report.job_id, "the job")->required();
  show->add_flag("--json", args->json, "print the service's JSON (GET /jobs/{job_id})");
  show->callback([args] {
    const std::string text =
        answer_or_die(connect(*args)->get_job_json(args->report.job_id), *args, "show");
    if (args->json) {
      std::cout << text << std::endl;
    } else {
      print_job(text);
    }
  });

  CLI::App* del = bso->add_subcommand("delete", "Delete a job and its trials");
  add_connection_options(*del, *args);
  del->add_option("--job-id", args->report.job_id, "the job")->required();
  del->callback([args] {
    answer_or_die(connect(*args)->delete_job(args->report.job_id), *args, "delete");
  });
}

}  // namespace zeus::cli
