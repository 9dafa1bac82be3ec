// libFuzzer target: the HTTP layer's request parsing (http/message.h) and zeusd's request
// handling. Whatever bytes a peer sends, parsing must stay within its limits and never crash,
// and a request that parses must get an answer (any status) from ZeusdService without crashing
// — over replay GPUs, as root, an allowed user, a stranger, and a TCP peer. The first input byte
// picks the peer.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "zeus/replay_gpu.h"
#include "http/message.h"
#include "zeusd/process_watcher.h"
#include "zeusd/zeusd_service.h"

namespace {

struct Daemon {
  zeus::FakeClock clock;
  zeus::Devices devices;
  zeus::zeusd::NullProcessWatcher watcher;
  std::unique_ptr<zeus::zeusd::ZeusdService> service;

  Daemon() {
    for (int i = 0; i < 2; ++i) {
      zeus::ReplayGpuConfig config;
      config.uuid = "GPU-fuzz-" + std::to_string(i);
      config.has_energy_counter = i == 0;
      config.power_model = zeus::ReplayGpu::capped_power_model(200.0);
      devices.gpus.push_back(std::make_unique<zeus::ReplayGpu>(clock, config));
    }
    zeus::zeusd::AllowList allow;
    (void)allow.add("gpu-control=1000");
    (void)allow.add("gpu-read=@2000");
    // No wait between /cpu/get_power's two readings: the fuzzer must stay fast.
    service = std::make_unique<zeus::zeusd::ZeusdService>(
        devices, std::move(allow), watcher, nullptr, zeus::zeusd::UpstreamOptions{0.0});
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Daemon* daemon = new Daemon();
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  zeus::http::Limits limits;
  limits.max_header_bytes = 4096;
  limits.max_body_bytes = 8192;

  std::string_view rest = bytes;
  for (int pipelined = 0; pipelined < 4 && !rest.empty(); ++pipelined) {
    zeus::http::ParsedRequest parsed = zeus::http::parse_request(rest, limits);
    if (!parsed.complete) {
      if (parsed.error_status != 0 &&
          (parsed.error_status < 400 || parsed.error_status > 505 || parsed.error.empty())) {
        __builtin_trap();
      }
      break;
    }
    const zeus::http::HttpRequest& request = parsed.request;
    if (parsed.used_bytes == 0 || parsed.used_bytes > rest.size() ||
        request.body.size() > limits.max_body_bytes ||
        request.headers.size() > limits.max_headers) {
      __builtin_trap();
    }
    zeus::zeusd::Peer peer;
    peer.pid = 4242;
    switch (data[0] % 4) {
      case 0:
        peer.uid = 0;
        break;
      case 1:
        peer.uid = 1000;
        break;
      case 2:
        peer.uid = 3000;
        peer.groups = {2000};
        break;
      default:
        peer.uid = 1000;
        peer.pid = -1;
        peer.unix_socket = false;
        break;
    }
    const zeus::zeusd::HttpResponse answer = daemon->service->handle(request, peer);
    if (answer.status < 200 || answer.status > 599) __builtin_trap();
    // Every refusal says why, but for upstream's API's bare 404 (unknown route or method); a
    // successful write of upstream's API is 200 with an empty body.
    if (answer.body.empty() && answer.status != 200 && answer.status != 404) __builtin_trap();
    rest.remove_prefix(parsed.used_bytes);
  }
  // Leases never outlive the input that made them (the fuzzer's "process" exits every time).
  daemon->service->on_process_exit(4242);
  return 0;
}
