// CPU used by monitoring 8 fake GPUs x 3 power domains + temperature at 0.1 s: one PowerMonitor
// (one sampling thread for every domain) and one TemperatureMonitor, on the fake NVML (the real
// NVML backend dlopen'ing testing/fake_nvml, 8 H100s with memory power) for --seconds N (or
// ZEUS_BENCH_SECONDS; default 60), with --cpus N also N fake RAPL packages with DRAM (the real
// RAPL backend on a fake powercap tree: cpu_package_average and cpu_dram_average in the same
// PowerMonitor). The process's CPU time (all threads, getrusage) over the run is printed as a
// share of one core, next to the CPU time of the same number of bare readings taken in the same
// run, so the library's own share shows beside the (fake) driver's. The goal: under 2 % of one
// core. Upstream Zeus polls with one process per domain; it is installed from PyPI, which the
// project's build machines cannot reach, so it is not run beside this.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>

#include "device/nvml/nvml_gpu.h"
#include "device/rapl/rapl_cpu.h"
#include "testing/fake_nvml_state.h"
#include "testing/fake_sysfs.h"
#include "zeus/common/clock.h"
#include "zeus/common/log.h"
#include "zeus/monitor/power_monitor.h"
#include "zeus/monitor/temperature_monitor.h"

namespace {

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  zeus::set_log_level(zeus::LogLevel::kError);
  const char* seconds_env = std::getenv("ZEUS_BENCH_SECONDS");
  double run_s = seconds_env != nullptr ? std::atof(seconds_env) : 60.0;
  int cpu_packages = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--seconds" || arg == "--cpus") && i + 1 < argc) {
      char* end = nullptr;
      const double value = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(value >= 0) || value > 86400) {
        std::fprintf(stderr, "%s takes a number from 0 to 86400, got '%s'\n", arg.c_str(), argv[i]);
        return 2;
      }
      if (arg == "--seconds") run_s = value;
      if (arg == "--cpus") cpu_packages = static_cast<int>(value);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--seconds N (default 60)] [--cpus N (fake RAPL packages, "
                   "default 0)]\n",
                   argv[0]);
      return 2;
    }
  }
  if (run_s <= 0) {
    std::fprintf(stderr, "--seconds must be above 0\n");
    return 2;
  }
  constexpr int kGpus = 8;
  constexpr double kPeriodS = 0.1;
  std::vector<zeus::testing::FakeNvmlDevice> devices(kGpus, zeus::testing::FakeNvmlDevice::h100());
  zeus::testing::FakeNvmlEnvironment fake(devices);
  auto gpus = zeus::open_nvml_gpus(ZEUS_FAKE_NVML_PATH);
  if (!gpus || gpus->size() != kGpus) {
    std::fprintf(stderr, "cannot open the fake GPUs\n");
    return 1;
  }
  std::map<int, zeus::Gpu*> by_index;
  for (int i = 0; i < kGpus; ++i) by_index[i] = (*gpus)[i].get();
  zeus::SystemClock clock;

  // The same readings as one tick, taken bare, to price the (fake) driver's part.
  constexpr int kTicks = 200;
  const double bare_start_s = cpu_seconds();
  for (int tick = 0; tick < kTicks; ++tick) {
    for (auto& [index, gpu] : by_index) {
      for (zeus::PowerDomain d : zeus::kGpuPowerDomains) (void)zeus::read_power_mw(*gpu, d);
      (void)gpu->temperature_c();
    }
  }
  const double bare_tick_s = (cpu_seconds() - bare_start_s) / kTicks;

  zeus::testing::FakePowercapTree powercap;
  for (int c = 0; c < cpu_packages; ++c) {
    powercap.add_package(c, 1'000'000);
    powercap.add_dram(c, 1'000);
  }
  std::vector<std::unique_ptr<zeus::Cpu>> cpus;
  std::map<int, zeus::Cpu*> cpu_by_index;
  if (cpu_packages > 0) {
    auto opened = zeus::open_rapl_cpus(powercap.root());
    if (!opened) {
      std::fprintf(stderr, "cannot open the fake RAPL packages: %s\n",
                   opened.error().to_string().c_str());
      return 1;
    }
    cpus = std::move(*opened);
    for (auto& cpu : cpus) cpu_by_index[cpu->index()] = cpu.get();
  }
  zeus::PowerMonitorOptions power_options;
  power_options.update_period_s = kPeriodS;
  auto power = zeus::PowerMonitor::create(clock, by_index, cpu_by_index, power_options);
  zeus::TemperatureMonitorOptions temperature_options;
  temperature_options.update_period_s = kPeriodS;
  auto temperature = zeus::TemperatureMonitor::create(clock, by_index, temperature_options);
  const size_t expected_domains = cpu_packages > 0 ? 5 : 3;
  if (!power || !temperature || (*power)->domains().size() != expected_domains) {
    std::fprintf(stderr, "cannot start the monitors\n");
    return 1;
  }
  const double cpu_start_s = cpu_seconds();
  const double wall_start_s = clock.now_s();
  std::this_thread::sleep_for(std::chrono::duration<double>(run_s));
  const double cpu_s = cpu_seconds() - cpu_start_s;
  const double wall_s = clock.now_s() - wall_start_s;
  (*power)->stop();
  (*temperature)->stop();

  const double ticks = wall_s / kPeriodS;
  const double share = 100.0 * cpu_s / wall_s;
  const double bare_share = 100.0 * bare_tick_s * ticks / wall_s;
  std::printf("monitoring %d GPUs x 3 domains + temperature", kGpus);
  if (cpu_packages > 0) std::printf(" + %d RAPL packages x 2 domains", cpu_packages);
  std::printf(" at %.1f s for %.1f s\n", kPeriodS, wall_s);
  std::printf("  CPU time           %.3f s = %.2f %% of one core (goal < 2 %%)\n", cpu_s, share);
  std::printf("  bare readings      %.1f us per tick (%d readings) = %.2f %% of one core\n",
              bare_tick_s * 1e6, kGpus * 4, bare_share);
  std::printf("  library beyond the readings: %.2f %% of one core\n", share - bare_share);
  std::printf("  samples kept (GPU 0, device_instant): %zu (deduplicated)\n",
              (*power)->sampler().samples(0, zeus::PowerDomain::kDeviceInstant).size());
  return share < 2.0 ? 0 : 1;
}
