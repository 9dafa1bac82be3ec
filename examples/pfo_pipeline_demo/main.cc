// zeus-pfo-pipeline-demo: one rank of a pipeline-parallel training job under Perseus, with sleeps
// standing in for the forward and backward passes. It shows where the PipelineFrequencyOptimizer's
// hooks go in a training loop (docs/perseus.md, "Client hooks in a training loop") and is what
// test/e2e/pfo_pipeline_fake_nvml.sh launches, one process per rank, on the fake NVML.
//
// Each iteration runs the synchronous 1F1B order of the rank's stage over --microbatches
// microbatches. The job id reaches ranks other than 0 through --job-id-file, a file rank 0
// writes (a shared file system stands in for torch.distributed's broadcast). GPUs are found as
// any Zeus program finds them (CUDA_VISIBLE_DEVICES; through zeusd when ZEUSD_SOCK_PATH is set).
// With --clock-bound, each instruction takes longer at a lower clock (its time x highest clock /
// its scheduled clock), as compute-bound work does, so an online profiler sees the clocks at work.
// With --slowdown F, every instruction takes F x longer from iteration --slowdown-from on: this
// rank's pipeline becomes a straggler (test/e2e/pfo_pipeline_frontier_straggler.sh).
// Prints "joined JOB_ID" on stderr once the first schedule arrived, and one JSON line on stdout
// at the end: the job id, rounds, and what the clock controller did. When the server's online
// profiler answers "[profiling-done]", the loop stops there (its message on stderr) and the
// program ends normally. Exit status 1 on any other error (with the message), 2 on a usage error.
//
//   zeus-pfo-pipeline-demo --server http://127.0.0.1:7787 --pp 4 --rank 1 --pp-rank 1
//       --job-id-file /tmp/job-id --microbatches 8 --iterations 20
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "zeus/common/clock.h"
#include "zeus/perseus/pfo_http_client.h"
#include "zeus/perseus/pfo_planner.h"
#include "zeus/perseus/pfo_profile.h"
#include "zeus/perseus/pipeline_frequency_optimizer.h"
#include "zeus/zeusd_client/zeusd_client.h"

namespace {

struct DemoOptions {
  std::string server = "http://127.0.0.1:7787";
  int gpu = 0;
  int rank = 0, dp_rank = 0, pp_rank = 0, tp_rank = 0;
  int dp = 1, pp = 2, tp = 1;
  int world_size = 0;  // 0: dp x pp x tp
  std::string job_id_file;
  std::string job_metadata;
  int microbatches = 4;
  int iterations = 10;
  double forward_ms = 20;
  double backward_ms = 40;
  uint32_t steps_per_round = 5;
  double broadcast_timeout_s = 60;
  bool wait_for_clock = false;
  bool clock_bound = false;
  double slowdown = 1.0;  // x each instruction's time from iteration slowdown_from on
  int slowdown_from = 0;
};

// The broadcast through a file: rank 0 writes the id (by a rename, so no reader sees half of
// it); the others wait for the file.
zeus::JobIdBroadcast file_broadcast(const DemoOptions& o) {
  return [o](const std::string& value) -> zeus::Result<std::string> {
    namespace fs = std::filesystem;
    if (o.rank == 0) {
      const std::string temp = o.job_id_file + ".tmp" + std::to_string(getpid());
      { std::ofstream(temp) << value; }
      std::error_code ec;
      fs::rename(temp, o.job_id_file, ec);
      if (ec) {
        return zeus::fail(zeus::ErrorCode::kUnavailable,
                          "cannot write " + o.job_id_file + ": " + ec.message());
      }
      return value;
    }
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(o.broadcast_timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
      if (std::ifstream in(o.job_id_file); in) {
        std::stringstream text;
        text << in.rdbuf();
        return text.str();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return zeus::fail(zeus::ErrorCode::kUnavailable,
                      "rank 0 wrote no job id to " + o.job_id_file + " within " +
                          std::to_string(o.broadcast_timeout_s) + " s; is rank 0 running?");
  };
}

void sleep_ms(double ms) {
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

// One training iteration: the 1F1B order of the rank's stage, each instruction inside its hooks.
// `max_mhz`: the GPU's highest SM clock (--clock-bound); `slowdown`: x every instruction's time.
zeus::Result<void> run_iteration(zeus::PipelineFrequencyOptimizer& pfo, const DemoOptions& o,
                                 uint32_t max_mhz, double slowdown) {
  ZEUS_TRY(pfo.on_step_begin());
  size_t position = 0;
  for (const zeus::pfo::PipelineInstruction& instruction :
       zeus::pfo::one_f_one_b_order(o.pp, o.microbatches, o.pp_rank)) {
    const std::string name(zeus::pfo::instruction_name(instruction.kind));
    ZEUS_TRY(pfo.on_instruction_begin(name));
    if (o.wait_for_clock) pfo.wait_for_clock();
    double ms =
        instruction.kind == zeus::pfo::InstructionKind::kForward ? o.forward_ms : o.backward_ms;
    const int scheduled_mhz = pfo.schedule().frequencies.at(position++).second;
    if (o.clock_bound && scheduled_mhz > 0) ms *= static_cast<double>(max_mhz) / scheduled_mhz;
    sleep_ms(ms * slowdown);
    ZEUS_TRY(pfo.on_instruction_end(name));
  }
  return pfo.on_step_end();
}

int run(const DemoOptions& o) {
  auto devices = zeus::discover_devices(zeus::DiscoverOptions::from_environment());
  if (!devices) {
    std::fprintf(stderr, "zeus-pfo-pipeline-demo: %s\n", devices.error().to_string().c_str());
    return 1;
  }
  auto service = zeus::make_pfo_http_client(o.server);
  if (!service) {
    std::fprintf(stderr, "zeus-pfo-pipeline-demo: %s\n", service.error().to_string().c_str());
    return 1;
  }
  zeus::PipelineFrequencyOptimizerOptions options;
  options.rank = o.rank;
  options.dp_rank = o.dp_rank;
  options.pp_rank = o.pp_rank;
  options.tp_rank = o.tp_rank;
  options.dp_degree = o.dp;
  options.pp_degree = o.pp;
  options.tp_degree = o.tp;
  options.world_size = o.world_size > 0 ? o.world_size : o.dp * o.pp * o.tp;
  if (!o.job_metadata.empty()) options.job_metadata = o.job_metadata;
  if (!o.job_id_file.empty()) options.broadcast = file_broadcast(o);
  options.steps_per_round = o.steps_per_round;
  zeus::SystemClock clock;
  auto pfo = zeus::PipelineFrequencyOptimizer::create(*devices, o.gpu, clock, std::move(*service),
                                                      std::move(options));
  if (!pfo) {
    std::fprintf(stderr, "zeus-pfo-pipeline-demo: rank %d: %s\n", o.rank,
                 pfo.error().to_string().c_str());
    return 1;
  }
  std::fprintf(stderr, "joined %s\n", (*pfo)->job_id().c_str());
  auto supported = devices->gpus[o.gpu]->supported_sm_clocks_mhz();
  const uint32_t max_mhz = supported && !supported->empty()
                               ? *std::max_element(supported->begin(), supported->end())
                               : 0;
  for (int i = 0; i < o.iterations; ++i) {
    zeus::Result<void> done =
        run_iteration(**pfo, o, max_mhz, i >= o.slowdown_from ? o.slowdown : 1.0);
    if (!done && done.error().message.find("[profiling-done]") != std::string::npos) {
      std::fprintf(stderr, "%s\n", done.error().message.c_str());
      break;  // the online profiler measured every clock: training stops here
    }
    if (!done) {
      std::fprintf(stderr, "zeus-pfo-pipeline-demo: rank %d, iteration %d: %s\n", o.rank, i,
                   done.error().to_string().c_str());
      return 1;
    }
  }
  const zeus::FrequencyControllerStats stats = (*pfo)->controller_stats();
  if (zeus::Result<void> stopped = (*pfo)->stop(); !stopped) {
    std::fprintf(stderr, "zeus-pfo-pipeline-demo: %s\n", stopped.error().to_string().c_str());
    return 1;
  }
  std::printf(
      "{\"job_id\": \"%s\", \"rank\": %d, \"rounds\": %d, \"requests\": %llu, \"applied\": %llu, "
      "\"skipped\": %llu, \"failed\": %llu, \"mean_apply_ms\": %.3f}\n",
      (*pfo)->job_id().c_str(), o.rank, (*pfo)->rounds(),
      static_cast<unsigned long long>(stats.requests),
      static_cast<unsigned long long>(stats.applied),
      static_cast<unsigned long long>(stats.skipped), static_cast<unsigned long long>(stats.failed),
      stats.applied > 0 ? 1e3 * stats.apply_total_s / static_cast<double>(stats.applied) : 0.0);
  return stats.failed > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  DemoOptions o;
  CLI::App app{
      "One rank of a pipeline-parallel job whose clocks a Perseus server plans "
      "(sleeps stand in for compute)",
      "zeus-pfo-pipeline-demo"};
  app.add_option("--server", o.server, "the pipeline frequency server (zeus pfo serve)");
  app.add_option("--gpu", o.gpu, "this rank's GPU (index among the visible ones)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--rank", o.rank, "global rank")->check(CLI::NonNegativeNumber);
  app.add_option("--dp-rank", o.dp_rank, "data-parallel rank")->check(CLI::NonNegativeNumber);
  app.add_option("--pp-rank", o.pp_rank, "pipeline stage")->check(CLI::NonNegativeNumber);
  app.add_option("--tp-rank", o.tp_rank, "tensor-parallel rank")->check(CLI::NonNegativeNumber);
  app.add_option("--dp", o.dp, "data-parallel degree")->check(CLI::PositiveNumber);
  app.add_option("--pp", o.pp, "pipeline stages")->check(CLI::PositiveNumber);
  app.add_option("--tp", o.tp, "tensor-parallel degree")->check(CLI::PositiveNumber);
  app.add_option("--world-size", o.world_size, "ranks of the job (default dp x pp x tp)");
  app.add_option("--job-id-file", o.job_id_file,
                 "rank 0 writes the job id here, the others read it (a new path per job; needed "
                 "with more than one rank)");
  app.add_option("--job-metadata", o.job_metadata, "appended to the job id");
  app.add_option("--microbatches", o.microbatches, "microbatches per iteration")
      ->check(CLI::PositiveNumber);
  app.add_option("--iterations", o.iterations, "training iterations")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--forward-ms", o.forward_ms, "time of one forward pass")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--backward-ms", o.backward_ms, "time of one backward pass")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--steps-per-round", o.steps_per_round,
                 "iterations per round: then results are reported and the next schedule fetched "
                 "(0: never)");
  app.add_option("--broadcast-timeout", o.broadcast_timeout_s,
                 "seconds ranks other than 0 wait for the job id file")
      ->check(CLI::PositiveNumber);
  app.add_flag("--wait-for-clock", o.wait_for_clock,
               "wait until each instruction's clock is applied before running it (tests)");
  app.add_flag("--clock-bound", o.clock_bound,
               "an instruction at a lower clock takes longer (x highest clock / its clock)");
  app.add_option("--slowdown", o.slowdown,
                 "x every instruction's time from iteration --slowdown-from on (a straggler)")
      ->check(CLI::PositiveNumber);
  app.add_option("--slowdown-from", o.slowdown_from,
                 "the first slowed iteration (0-based; default 0)")
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);
  if (o.world_size > 1 || o.dp * o.pp * o.tp > 1) {
    if (o.job_id_file.empty()) {
      std::fprintf(stderr,
                   "zeus-pfo-pipeline-demo: a job of several ranks needs --job-id-file "
                   "PATH (rank 0 writes the job id there, the others read it)\n");
      return 2;
    }
  }
  if (o.pp_rank >= o.pp) {
    std::fprintf(stderr, "zeus-pfo-pipeline-demo: --pp-rank %d is outside 0-%d (--pp %d)\n",
                 o.pp_rank, o.pp - 1, o.pp);
    return 2;
  }
  return run(o);
}
