// Cost of one EnergyMonitor begin/end window pair, on the fake NVML (the real NVML backend
// dlopen'ing testing/fake_nvml; ZEUS_BENCH_NVML_PATH picks another libnvidia-ml) and on ReplayGpu, next to one bare NVML energy read measured in
// the same run. The goal: under 2 us of the library's own time per pair beyond its NVML calls
// (one total_energy_mj() per GPU at each edge). The ratios are printed after the table.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "bench/bench_main.h"
#include "device/nvml/nvml_gpu.h"
#include "zeus/clock.h"
#include "zeus/energy_monitor.h"
#include "zeus/log.h"
#include "zeus/replay_gpu.h"

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

// Keeps each benchmark's time per iteration (ns) and prints the ratios at the end. CPU time is
// the basis (on a shared, loaded machine real time mostly measures waiting); real time is shown.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Iteration && !run.error_occurred) {
        times_ns_[run.benchmark_name()] = {run.GetAdjustedCPUTime(), run.GetAdjustedRealTime()};
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    auto find = [this](const char* name) {
      auto it = times_ns_.find(name);
      return it == times_ns_.end() ? Times{} : it->second;
    };
    const Times read = find("BM_NvmlEnergyRead");
    const Times nvml_pair = find("BM_WindowPairNvml");
    const Times replay_pair = find("BM_WindowPairReplay");
    if (read.cpu_ns <= 0) {
      std::printf("no bare NVML read measured: ratios unavailable\n");
      return;
    }
    if (nvml_pair.cpu_ns > 0) {
      const double own_ns = nvml_pair.cpu_ns - 2.0 * read.cpu_ns;  // two energy reads per pair
      std::printf(
          "window pair on NVML: %.0f ns CPU = %.2f x one bare NVML energy read (%.0f ns CPU); "
          "real time ratio %.2f; library's own time beyond the 2 reads: %.0f ns (goal < 2000 "
          "ns): %s\n",
          nvml_pair.cpu_ns, nvml_pair.cpu_ns / read.cpu_ns, read.cpu_ns,
          nvml_pair.real_ns / read.real_ns, own_ns, own_ns < 2000.0 ? "met" : "NOT met");
    }
    if (replay_pair.cpu_ns > 0) {
      std::printf("window pair on ReplayGpu: %.0f ns CPU = %.2f x one bare NVML energy read\n",
                  replay_pair.cpu_ns, replay_pair.cpu_ns / read.cpu_ns);
    }
  }

 private:
  struct Times {
    double cpu_ns = -1.0;
    double real_ns = -1.0;
  };
  std::map<std::string, Times> times_ns_;
};

}  // namespace

int main(int argc, char** argv) {
  RatioReporter reporter;
  return zeus::bench::run_all(argc, argv, reporter);
}
