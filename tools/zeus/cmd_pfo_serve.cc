// zeus pfo serve: the Perseus pipeline frequency server (zeus/perseus/pfo_server.h; routes and
// settings:
// docs/perseus.md, "Runtime: the server"). Upstream's environment settings (ZEUS_PFO_SCHEDULER,
// ZEUS_PFO_SCHEDULER_ARGS, ZEUS_PFO_DUMP_DATA, ZEUS_PFO_DUMP_DIR, ZEUS_PFO_MAX_JOB_IDLE_TIME) are
// the defaults of the flags, so upstream's deployment instructions work unchanged.
// Runs until SIGINT or SIGTERM, then answers waiting ranks 503 and exits 0.
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.h"
#include "commands.h"
#include "perseus/server/scheduler.h"
#include "zeus/perseus/pfo_server.h"

namespace zeus::cli {
namespace {

struct PfoServeArgs {
  PfoServerOptions options;
  std::string dump;
};

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// pydantic's reading of a boolean setting.
bool env_bool(const char* name, bool fallback) {
  std::string v = env(name);
  if (v.empty()) return fallback;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v == "1" || v == "true" || v == "yes" || v == "on" || v == "t" || v == "y") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off" || v == "f" || v == "n") return false;
  die(std::string(name) + "='" + echo_value(v) + "' is not a boolean (true or false)");
}

// Upstream's settings as the flags' defaults: each applies when its flag was not given.
void apply_environment(PfoServeArgs* args, const CLI::App& cmd) {
  const auto given = [&](const char* flag) { return cmd.count(flag) > 0; };
  if (std::string s = env("ZEUS_PFO_SCHEDULER"); !s.empty() && !given("--scheduler")) {
    if (s != "PointSolution" && s != "PointSolution3D" && s != "InstructionProfiler" &&
        s != "Frontier") {
      die("ZEUS_PFO_SCHEDULER='" + echo_value(s) +
          "': the schedulers are PointSolution, PointSolution3D, InstructionProfiler and "
          "Frontier");
    }
    args->options.scheduler = s;
  }
  const bool profiler =
      pfo::canonical_scheduler_name(args->options.scheduler) == "InstructionProfiler";
  if (std::string a = env("ZEUS_PFO_SCHEDULER_ARGS");
      !a.empty() && profiler && !given("--scheduler-args")) {
    args->options.scheduler_args = a;  // checked, argument by argument, by the profiler
  } else if (!a.empty() && !profiler && !given("--schedule")) {
    const auto j = nlohmann::json::parse(a, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      die("ZEUS_PFO_SCHEDULER_ARGS must be a JSON object such as "
          "{\"solution_path\": \"freqs_pipeline_00042.py\"}");
    }
    const bool frontier = pfo::canonical_scheduler_name(args->options.scheduler) == "Frontier";
    nlohmann::json frontier_args = nlohmann::json::object();
    for (const auto& item : j.items()) {
      if (frontier && item.key() == "straggler_tolerance") {  // checked by the scheduler
        frontier_args[item.key()] = item.value();
        continue;
      }
      const bool known = item.key() == "solution_path" || item.key() == "plans_dir";
      if (!known || !item.value().is_string()) {
        die("ZEUS_PFO_SCHEDULER_ARGS: the point-solution schedulers take one argument, "
            "\"solution_path\" (a string), and Frontier \"plans_dir\" (a string) and "
            "\"straggler_tolerance\"; got '" +
            echo_value(item.key()) + "'");
      }
      if (item.key() == "plans_dir") {
        if (!given("--plans")) args->options.plans_dir = item.value().get<std::string>();
      } else {
        args->options.solution_path = item.value().get<std::string>();
      }
    }
    if (!frontier_args.empty() && !given("--scheduler-args")) {
      args->options.scheduler_args = frontier_args.dump();
    }
  }
  const std::string dir = env("ZEUS_PFO_DUMP_DIR");
  // Upstream dumps to ./dump unless ZEUS_PFO_DUMP_DATA=false; here only when asked for.
  if (env_bool("ZEUS_PFO_DUMP_DATA", !dir.empty()) && !given("--dump")) {
    args->dump = dir.empty() ? "./dump" : dir;
  }
  if (std::string idle = env("ZEUS_PFO_MAX_JOB_IDLE_TIME"); !idle.empty() &&
                                                            !given("--max-job-idle")) {
    args->options.max_job_idle_s = value_or_die(
        parse_seconds(idle, "ZEUS_PFO_MAX_JOB_IDLE_TIME", {1.0, false}));
  }
}

void run_pfo_serve(PfoServeArgs args) {
  PfoServerOptions options = args.options;
  options.dump_dir = args.dump;
  if (!options.solution_path.empty()) {
    // The file is read again when each job starts; checking it now catches a typo at once.
    die_if_directory(options.solution_path, "--schedule", "give the schedule file");
  }
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  std::unique_ptr<PfoServer> server = value_or_die(PfoServer::start(options), "zeus pfo serve");
  std::cout << "zeus pfo serve: listening on " << server->url() << std::endl;
  std::cout << "zeus pfo serve: scheduler " << options.scheduler
            << (!options.plans_dir.empty()        ? ", plans " + options.plans_dir
                : options.scheduler_args.empty() ? ", schedule " + options.solution_path
                                                 : ", arguments " + options.scheduler_args)
            << ", dump " << (options.dump_dir.empty() ? "off" : options.dump_dir)
            << ", rank timeout "
            << (options.rank_timeout_s > 0 ? format_fixed(options.rank_timeout_s, 0) + " s" : "off")
            << ", idle jobs evicted after " << format_fixed(options.max_job_idle_s, 0) << " s"
            << std::endl;
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::cout << "zeus pfo serve: " << (signal_number == SIGINT ? "SIGINT" : "SIGTERM")
            << ", stopping" << std::endl;
  server->stop();
  std::cout << "zeus pfo serve: stopped" << std::endl;
}

}  // namespace

void add_pfo_serve_command(CLI::App& pfo) {
  auto args = std::make_shared<PfoServeArgs>();
  CLI::App* cmd = pfo.add_subcommand(
      "serve",
      "Run the pipeline frequency server that a training job's ranks ask for their clocks\n"
      "(the wire protocol of Zeus 0.16's PipelineFrequencyOptimizer; Zeus's own client works "
      "unchanged).\n"
      "Each round every rank asks GET /schedule/{job}?rank=R and waits until all ranks asked;\n"
      "then each gets its list of (instruction, MHz) for one iteration.\n"
      "  zeus pfo choose --plans plans/ --fastest --out schedule.json\n"
      "  zeus pfo serve --scheduler point-solution --schedule schedule.json\n"
      "  zeus pfo serve --scheduler point-solution-3d --schedule freqs_pipeline_00042.py\n"
      "  zeus pfo serve --scheduler profiler --scheduler-args '{\"num_microbatches\": 8}' "
      "--dump dump/\n"
      "  zeus pfo serve --scheduler frontier --plans plans/   # fastest plan; switches on stragglers\n"
      "Frontier: a straggler's iteration time T' comes from the reported results, or from an\n"
      "operator: curl -X POST URL/straggler/JOB -d '{\"iteration_time_s\": 3.6}' (DELETE clears it).\n"
      "Upstream's settings are honoured as defaults: ZEUS_PFO_SCHEDULER, ZEUS_PFO_SCHEDULER_ARGS\n"
      "('{\"solution_path\": \"...\"}'), ZEUS_PFO_DUMP_DATA, ZEUS_PFO_DUMP_DIR, "
      "ZEUS_PFO_MAX_JOB_IDLE_TIME.\n"
      "Routes, errors and what differs from upstream: docs/perseus.md (\"Runtime: the server\").");
  cmd->add_option("--host", args->options.host, "address to listen on (0.0.0.0: every interface)")
      ->capture_default_str();
  cmd->add_option("--port", args->options.port, "port to listen on (0: any free port, printed)")
      ->capture_default_str();
  cmd->add_option("--scheduler", args->options.scheduler,
                  "point-solution (PointSolution): the schedule file has one list per rank; "
                  "point-solution-3d (PointSolution3D): one list per pipeline stage, shared by "
                  "the data/tensor-parallel ranks of the stage; profiler (InstructionProfiler): "
                  "a round per SM clock, writes the stage profile `zeus pfo plan` reads; "
                  "frontier (Frontier): the plans of --plans, the fastest plan, or when a "
                  "pipeline straggles to T' the cheaper at T' of the least-energy plan done by T' "
                  "and one lower global clock")
      ->check(CLI::IsMember({"point-solution", "point-solution-3d", "PointSolution",
                             "PointSolution3D", "profiler", "InstructionProfiler", "frontier",
                             "Frontier"}))
      ->capture_default_str();
  cmd->add_option("--schedule", args->options.solution_path,
                  "schedule file, read when each job starts: upstream's freqs_pipeline_*.py "
                  "(a Python literal, parsed and never run) or JSON (`zeus pfo choose` output, "
                  "or [[[\"forward\", 1980], ...], ...])")
      ->capture_default_str();
  cmd->add_option("--scheduler-args", args->options.scheduler_args,
                  "the profiler's arguments as a JSON object (or ZEUS_PFO_SCHEDULER_ARGS): "
                  "{\"num_microbatches\": 8} (required), frequencies, minimum_frequency (850), "
                  "warmup_rounds (2), warmup_step_ratio (0.1), max_energy_rises (5), profile_path "
                  "(default DUMP/<job id>/stage_profile.csv); frontier: straggler_tolerance (0.05)");
  cmd->add_option("--plans", args->options.plans_dir,
                  "frontier: the --out folder of `zeus pfo plan` (its plans.bin), read at start")
      ->capture_default_str();
  cmd->add_option("--dump", args->dump,
                  "folder for each job's ranks.json, N.sched.json and N.prof.json "
                  "(default: none, unless ZEUS_PFO_DUMP_DATA/ZEUS_PFO_DUMP_DIR say so)")
      ->capture_default_str();
  add_parsed_option(*cmd, "--max-job-idle", args->options.max_job_idle_s,
                    [](const std::string& t) { return parse_seconds(t, "--max-job-idle", {1.0, false}); },
                    "a job with no request for this long is forgotten (10, 2m, 1h; default one "
                    "week)");
  add_parsed_option(*cmd, "--rank-timeout", args->options.rank_timeout_s,
                    [](const std::string& t) { return parse_seconds(t, "--rank-timeout", {0.01, true}); },
                    "ranks that waited this long at the schedule barrier for the others get an "
                    "error naming the missing ranks (0: wait forever, as upstream; default 600)");
  cmd->add_option("--max-connections", args->options.max_connections,
                  "connections held at once (each rank of a job holds one at the schedule "
                  "barrier, so a job's world size must fit, less a little room; clamped to the "
                  "descriptor limit, ulimit -n)")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20))
      ->capture_default_str();
  cmd->callback([args, cmd] {
    apply_environment(args.get(), *cmd);
    run_pfo_serve(*args);
  });
}

}  // namespace zeus::cli
