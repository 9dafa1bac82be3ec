// What the PipelineFrequencyOptimizer's hooks cost a training loop: one step of two instructions
// (forward at 1200 MHz, backward at 800 or 900, so the controller changes the clock twice a step)
// on a ReplayGpu and on the fake NVML (the real NVML backend dlopen'ing testing/fake_nvml, its
// state in memory), and a step that ends a round (POST /result and GET /schedule to `zeus pfo
// serve`'s server on 127.0.0.1, one rank). Printed after the table: the hooks' time per
// instruction, and a round's cost against a plain step's (bench/monitor_bench has the cost of the
// monitor's windows alone).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "bench/ratio_reporter.h"
#include "device/nvml/nvml_gpu.h"
#include "zeus/common/clock.h"
#include "zeus/common/log.h"
#include "zeus/device/replay_gpu.h"
#include "zeus/perseus/pfo_http_client.h"
#include "zeus/perseus/pfo_server.h"
#include "zeus/perseus/pipeline_frequency_optimizer.h"

namespace {

namespace fs = std::filesystem;

// A PointSolution server for one rank: forward at 1200 MHz, backward at `backward_mhz` (a clock
// the GPU lists: 800 on the ReplayGpu, 900 on the fake H100).
struct Server {
  explicit Server(int backward_mhz) {
    path = fs::temp_directory_path() / ("zeus_pfo_client_bench_" + std::to_string(backward_mhz));
    std::ofstream(path) << "[[[\"forward\", 1200], [\"backward\", " << backward_mhz << "]]]";
    zeus::PfoServerOptions o;
    o.port = 0;
    o.solution_path = path.string();
    auto s = zeus::PfoServer::start(o);
    if (s) server = std::move(*s);
  }
  ~Server() {
    if (server) server->stop();
    fs::remove(path);
  }
  fs::path path;
  std::unique_ptr<zeus::PfoServer> server;
};

zeus::Devices replay_devices(zeus::Clock& clock) {
  zeus::Devices devices;
  zeus::ReplayGpuConfig config;
  config.power_model = zeus::ReplayGpu::capped_power_model(250.0);
  devices.gpus.push_back(std::make_unique<zeus::ReplayGpu>(clock, config));
  return devices;
}

zeus::Result<zeus::Devices> fake_nvml_devices() {
  ::unsetenv("ZEUS_FAKE_NVML_STATE");
  auto gpus = zeus::open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  if (!gpus) return zeus::fail(gpus.error());
  zeus::Devices devices;
  devices.gpus = std::move(*gpus);
  return devices;
}

void run_steps(benchmark::State& state, zeus::Devices& devices, zeus::Clock& clock,
               int backward_mhz, uint32_t steps_per_round) {
  Server server(backward_mhz);
  if (!server.server) {
    state.SkipWithError("the server did not start");
    return;
  }
  auto service = zeus::make_pfo_http_client(server.server->url());
  zeus::PipelineFrequencyOptimizerOptions options;
  options.steps_per_round = steps_per_round;
  options.handle_signals = false;
  auto pfo =
      zeus::PipelineFrequencyOptimizer::create(devices, 0, clock, std::move(*service), options);
  if (!pfo) {
    state.SkipWithError(pfo.error().to_string().c_str());
    return;
  }
  for (auto _ : state) {
    bool done = (*pfo)->on_step_begin() && (*pfo)->on_instruction_begin("forward") &&
                (*pfo)->on_instruction_end("forward") && (*pfo)->on_instruction_begin("backward") &&
                (*pfo)->on_instruction_end("backward") && (*pfo)->on_step_end();
    if (!done) {
      state.SkipWithError("a hook failed");
      return;
    }
  }
  // Most requests of so tight a loop are replaced in the controller's slot before its thread
  // takes them (only the newest clock matters): the loop never waits for a clock change.
  state.counters["clock_changes_applied"] = static_cast<double>((*pfo)->controller_stats().applied);
}

void BM_StepReplay(benchmark::State& state) {
  zeus::SystemClock clock;
  zeus::Devices devices = replay_devices(clock);
  run_steps(state, devices, clock, 800, 0);
}
BENCHMARK(BM_StepReplay)->Unit(benchmark::kMicrosecond);

void BM_StepFakeNvml(benchmark::State& state) {
  auto devices = fake_nvml_devices();
  if (!devices) {
    state.SkipWithError(devices.error().to_string().c_str());
    return;
  }
  zeus::SystemClock clock;
  run_steps(state, *devices, clock, 900, 0);
}
BENCHMARK(BM_StepFakeNvml)->Unit(benchmark::kMicrosecond);

void BM_StepEndingARoundReplay(benchmark::State& state) {
  zeus::SystemClock clock;
  zeus::Devices devices = replay_devices(clock);
  run_steps(state, devices, clock, 800, 1);
}
BENCHMARK(BM_StepEndingARoundReplay)->Unit(benchmark::kMicrosecond);

// The ratios printed after the table, from real times in us (the benchmarks' unit).
void print_ratios(const zeus::bench::RunTimes& times) {
  // A step = 2 instructions.
  for (const char* name : {"BM_StepReplay", "BM_StepFakeNvml"}) {
    const double step_us = times.find(name).real;
    if (step_us <= 0) continue;
    std::printf(
        "%s: %.1f us real per instruction (two window edges, the schedule check, a clock "
        "request)\n",
        name, step_us / 2);
  }
  const double step_us = times.find("BM_StepReplay").real;
  const double round_us = times.find("BM_StepEndingARoundReplay").real;
  if (step_us > 0 && round_us > 0) {
    std::printf(
        "a step that ends a round (report + next schedule, loopback, one rank): %.0f us "
        "real = %.1f x a plain step\n",
        round_us, round_us / step_us);
  }
}

}  // namespace

int main(int argc, char** argv) {
  zeus::set_log_level(zeus::LogLevel::kError);
  return zeus::bench::run_with_ratios(argc, argv, print_ratios);
}
