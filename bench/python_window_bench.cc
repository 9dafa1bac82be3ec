// The overhead of one EnergyMonitor begin_window/end_window pair from Python (zeus_cpp's
// ZeusMonitor and the bare _zeus_cpp binding) against the same pair in C++, on the fake NVML
// (one H100; the real NVML backend dlopen'ing testing/fake_nvml), without sync and without CPUs.
// The C++ pair runs as a Google Benchmark; the Python pair runs in /usr/bin/python3
// (bench/python_window_bench.py) against the zeus_cpp package of this build; the ratios are
// printed after the table. Needs the Python module built (target _zeus_cpp).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "zeus/common/clock.h"
#include "zeus/common/log.h"
#include "zeus/device/device.h"
#include "zeus/monitor/energy_monitor.h"

namespace {

double g_cpp_pair_ns = 0;

zeus::DiscoverOptions fake_nvml_options() {
  zeus::DiscoverOptions options;
  options.nvml_path = ZEUS_FAKE_NVML_PATH;
  options.rocm_smi_path = "/nonexistent/librocm_smi64.so";
  options.want_cpus = false;
  return options;
}

void BM_CppWindowPair(benchmark::State& state) {
  ::unsetenv("ZEUS_FAKE_NVML_STATE");  // the fake keeps one default H100 in memory
  auto devices = zeus::discover(fake_nvml_options());
  if (!devices || devices->gpus.empty()) {
    state.SkipWithError("the fake NVML has no GPU");
    return;
  }
  zeus::SystemClock clock;
  zeus::EnergyMonitorOptions options;
  options.gpu_indices = std::vector<int>{0};
  options.cpu_indices = std::vector<int>{};
  auto monitor = zeus::EnergyMonitor::create(*devices, clock, options);
  if (!monitor) {
    state.SkipWithError(monitor.error().to_string().c_str());
    return;
  }
  for (auto _ : state) {
    auto begun = (*monitor)->begin_window("step", /*sync=*/false);
    auto measurement = (*monitor)->end_window("step", /*sync=*/false);
    if (!begun || !measurement) {
      state.SkipWithError("a window failed");
      return;
    }
    benchmark::DoNotOptimize(measurement);
  }
}
BENCHMARK(BM_CppWindowPair)->Unit(benchmark::kNanosecond);

// Keeps the C++ pair's time for the ratio.
class CapturingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.benchmark_name().rfind("BM_CppWindowPair", 0) == 0 && run.iterations > 0) {
        g_cpp_pair_ns = run.GetAdjustedRealTime();
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

// Runs the Python half; returns its JSON line, or "" when it could not run.
std::string run_python() {
  const std::string package = std::string(ZEUS_BINARY_DIR) + "/python";
  if (!std::filesystem::exists(package + "/zeus_cpp")) {
    std::fprintf(stderr, "python_window_bench: %s/zeus_cpp is not built (target _zeus_cpp)\n",
                 package.c_str());
    return "";
  }
  const std::string command = "env -u ZEUS_FAKE_NVML_STATE PYTHONPATH='" + package +
                              "' ZEUS_NVML_PATH='" ZEUS_FAKE_NVML_PATH
                              "' ZEUS_POWERCAP_ROOT=/nonexistent ZEUS_LOG_LEVEL=error "
                              "/usr/bin/python3 '" ZEUS_SOURCE_DIR "/bench/python_window_bench.py'";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  if (::pclose(pipe) != 0) return "";
  return output;
}

}  // namespace

int main(int argc, char** argv) {
  // Sub-microsecond windows read 0 J and warn; both sides run at level error (the Python side
  // through ZEUS_LOG_LEVEL), so the comparison times the windows, not the log.
  zeus::set_log_level(zeus::LogLevel::kError);
  benchmark::Initialize(&argc, argv);
  CapturingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  if (g_cpp_pair_ns <= 0) return 0;  // filtered out
  const std::string line = run_python();
  const auto python = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (python.is_discarded() || !python.contains("zeus_monitor_ns")) {
    std::fprintf(stderr, "python_window_bench: the Python half failed: %s\n", line.c_str());
    return 1;
  }
  const double wrapper_ns = python["zeus_monitor_ns"].get<double>();
  const double binding_ns = python["extension_ns"].get<double>();
  std::printf("\nbegin_window + end_window, one GPU, no sync (fake NVML):\n");
  std::printf("  C++ EnergyMonitor           %9.0f ns\n", g_cpp_pair_ns);
  std::printf("  Python _zeus_cpp binding    %9.0f ns  (%.1fx C++)\n", binding_ns,
              binding_ns / g_cpp_pair_ns);
  std::printf("  Python zeus_cpp.ZeusMonitor %9.0f ns  (%.1fx C++)\n", wrapper_ns,
              wrapper_ns / g_cpp_pair_ns);
  return 0;
}
