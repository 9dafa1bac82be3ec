// The clock controller on a GPU, as a job would run it: discovers the GPUs (through zeusd when
// ZEUSD_SOCK_PATH is set), starts a FrequencyController on one, applies a list of SM clocks in
// turn, waiting for each (flush), and prints one JSON line: the changes applied and the time per
// change (the driver or zeusd round trip). With --hold it then waits for a signal, so a test can
// stop it by SIGTERM/SIGINT (the controller restores) or SIGKILL (zeusd restores).
// With --power-limit it first sets the GPU's power limit (mW) too. Through zeusd over TCP
// (ZEUSD_HOST_PORT + ZEUSD_TOKEN) the changes belong to the client's lease session.
// Used by test/e2e/pfo_controller_zeusd.sh and zeusd_tcp_lease_session.sh on the fakes and by
// test/hw/clock_controller_real.sh on a real GPU. Exits 1 when the controller cannot start or a
// change fails.
//
//   zeus_clock_controller_check --gpu 0 --clocks 1410,1005 --changes 200 [--power-limit MW] [--hold]
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "zeus/device_control/frequency_controller.h"
#include "zeus/zeusd_client/zeusd_client.h"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: zeus_clock_controller_check [--gpu N] [--clocks MHZ,MHZ,...] "
               "[--changes K] [--power-limit MW] [--hold]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int gpu_index = 0;
  std::vector<uint32_t> clocks_mhz;
  int changes = 0;
  bool hold = false;
  uint32_t power_limit_mw = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--gpu" && has_value) {
      gpu_index = std::atoi(argv[++i]);
    } else if (arg == "--clocks" && has_value) {
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');) {
        clocks_mhz.push_back(static_cast<uint32_t>(std::stoul(item)));
      }
    } else if (arg == "--changes" && has_value) {
      changes = std::atoi(argv[++i]);
    } else if (arg == "--power-limit" && has_value) {
      power_limit_mw = static_cast<uint32_t>(std::stoul(argv[++i]));
    } else if (arg == "--hold") {
      hold = true;
    } else {
      return usage();
    }
  }
  auto devices = zeus::discover_devices(zeus::DiscoverOptions::from_environment());
  if (!devices || gpu_index < 0 || static_cast<size_t>(gpu_index) >= devices->gpus.size()) {
    std::fprintf(stderr, "no GPU %d: %s\n", gpu_index,
                 devices ? "not found" : devices.error().to_string().c_str());
    return 1;
  }
  zeus::Gpu& gpu = *devices->gpus[gpu_index];
  auto controller = zeus::FrequencyController::start(gpu, {});
  if (!controller) {
    std::fprintf(stderr, "%s\n", controller.error().to_string().c_str());
    return 1;
  }
  // After start(), which raises the power limit to the GPU's maximum (as Perseus runs).
  if (power_limit_mw > 0) {
    if (auto set = gpu.set_power_limit_mw(power_limit_mw); !set) {
      std::fprintf(stderr, "%s\n", set.error().to_string().c_str());
      return 1;
    }
  }
  if (clocks_mhz.empty()) {  // the maximum and the middle of the supported list
    const auto& supported = (*controller)->supported_sm_clocks_mhz();
    clocks_mhz = {supported[supported.size() / 2], supported.front()};
  }
  if (changes <= 0) changes = static_cast<int>(clocks_mhz.size());
  for (int k = 0; k < changes; ++k) {
    (*controller)->request(clocks_mhz[k % clocks_mhz.size()]);
    (*controller)->flush();
  }
  const zeus::FrequencyControllerStats stats = (*controller)->stats();
  const double mean_ms = stats.applied > 0 ? 1e3 * stats.apply_total_s / stats.applied : 0.0;
  std::printf(
      "{\"gpu\": \"%s\", \"requests\": %llu, \"applied\": %llu, \"skipped\": %llu, "
      "\"failed\": %llu, \"mean_apply_ms\": %.3f, \"max_apply_ms\": %.3f, \"locked_mhz\": %u}\n",
      gpu.name().c_str(), static_cast<unsigned long long>(stats.requests),
      static_cast<unsigned long long>(stats.applied),
      static_cast<unsigned long long>(stats.skipped), static_cast<unsigned long long>(stats.failed),
      mean_ms, 1e3 * stats.apply_max_s, (*controller)->applied_mhz());
  std::fflush(stdout);
  if (stats.failed > 0) {
    std::fprintf(stderr, "%s\n", stats.last_error->to_string().c_str());
    return 1;
  }
  if (hold) {
    for (;;) pause();  // until a signal: the controller's restore or zeusd's lease
  }
  return (*controller)->stop() ? 0 : 1;
}
