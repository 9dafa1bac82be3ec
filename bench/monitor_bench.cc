// Cost of one EnergyMonitor begin/end window pair, on the fake NVML (the real NVML backend
// dlopen'ing testing/fake_nvml; ZEUS_BENCH_NVML_PATH picks another libnvidia-ml) and on ReplayGpu,
// next to one bare NVML energy read measured in the same run. The goal: under 2 us of the library's
// own time per pair beyond its NVML calls (one total_energy_mj() per GPU at each edge). The ratios
// are printed after the table.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "bench/ratio_reporter.h"
#include "device/nvml/nvml_gpu.h"
#include "zeus/common/clock.h"
#include "zeus/common/log.h"
#include "zeus/device/replay_gpu.h"
#include "zeus/monitor/energy_monitor.h"

namespace {

// One fake H100 (ZEUS_FAKE_NVML_STATE unset: the fake keeps its state in memory), or the NVML
// named by ZEUS_BENCH_NVML_PATH (e.g. the real libnvidia-ml.so.1 on a GPU machine).
zeus::Result<zeus::Devices> fake_nvml_devices() {
  ::unsetenv("ZEUS_FAKE_NVML_STATE");
  const char* override_path = std::getenv("ZEUS_BENCH_NVML_PATH");
  auto gpus = zeus::open_nvml_gpus(override_path != nullptr ? override_path : ZEUS_FAKE_NVML_PATH);
  if (!gpus) return zeus::fail(gpus.error());
  zeus::Devices devices;
  devices.gpus = std::move(*gpus);
  return devices;
}

void BM_NvmlEnergyRead(benchmark::State& state) {
  auto devices = fake_nvml_devices();
  if (!devices) {
    state.SkipWithError(devices.error().to_string().c_str());
    return;
  }
  zeus::Gpu& gpu = *devices->gpus[0];
  for (auto _ : state) {
    auto energy_mj = gpu.total_energy_mj();
    benchmark::DoNotOptimize(energy_mj);
  }
}
BENCHMARK(BM_NvmlEnergyRead)->Unit(benchmark::kNanosecond);

void run_window_pairs(benchmark::State& state, zeus::Devices& devices, zeus::Clock& clock) {
  auto monitor = zeus::EnergyMonitor::create(devices, clock, {});
  if (!monitor) {
    state.SkipWithError(monitor.error().to_string().c_str());
    return;
  }
  for (auto _ : state) {
    auto begun = (*monitor)->begin_window("step");
    auto measurement = (*monitor)->end_window("step");
    if (!begun || !measurement) {
      state.SkipWithError("a window failed");
      return;
    }
    benchmark::DoNotOptimize(measurement);
  }
}

void BM_WindowPairNvml(benchmark::State& state) {
  auto devices = fake_nvml_devices();
  if (!devices) {
    state.SkipWithError(devices.error().to_string().c_str());
    return;
  }
  zeus::SystemClock clock;
  run_window_pairs(state, *devices, clock);
}
BENCHMARK(BM_WindowPairNvml)->Unit(benchmark::kNanosecond);

void BM_WindowPairReplay(benchmark::State& state) {
  zeus::SystemClock clock;
  zeus::Devices devices;
  zeus::ReplayGpuConfig config;
  config.power_model = zeus::ReplayGpu::capped_power_model(250.0);
  devices.gpus.push_back(std::make_unique<zeus::ReplayGpu>(clock, config));
  run_window_pairs(state, devices, clock);
}
BENCHMARK(BM_WindowPairReplay)->Unit(benchmark::kNanosecond);

// The ratios printed after the table. CPU time is the basis (on a shared, loaded machine real
// time mostly measures waiting); real time is shown. Times in ns (the benchmarks' unit).
void print_ratios(const zeus::bench::RunTimes& times) {
  const zeus::bench::Times read = times.find("BM_NvmlEnergyRead");
  const zeus::bench::Times nvml_pair = times.find("BM_WindowPairNvml");
  const zeus::bench::Times replay_pair = times.find("BM_WindowPairReplay");
  if (read.cpu <= 0) {
    std::printf("no bare NVML read measured: ratios unavailable\n");
    return;
  }
  if (nvml_pair.cpu > 0) {
    const double own_ns = nvml_pair.cpu - 2.0 * read.cpu;  // two energy reads per pair
    std::printf(
        "window pair on NVML: %.0f ns CPU = %.2f x one bare NVML energy read (%.0f ns CPU); "
        "real time ratio %.2f; library's own time beyond the 2 reads: %.0f ns (goal < 2000 "
        "ns): %s\n",
        nvml_pair.cpu, nvml_pair.cpu / read.cpu, read.cpu, nvml_pair.real / read.real, own_ns,
        own_ns < 2000.0 ? "met" : "NOT met");
  }
  if (replay_pair.cpu > 0) {
    std::printf("window pair on ReplayGpu: %.0f ns CPU = %.2f x one bare NVML energy read\n",
                replay_pair.cpu, replay_pair.cpu / read.cpu);
  }
}

}  // namespace

int main(int argc, char** argv) {
  return zeus::bench::run_with_ratios(argc, argv, print_ratios);
}
