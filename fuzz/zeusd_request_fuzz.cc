// libFuzzer target: the HTTP layer's request parsing (http/message.h) and zeusd's request
// handling. Whatever bytes a peer sends, parsing must stay within its limits and never crash,
// and a request that parses must get an answer (any status) from ZeusdService without crashing
// — over replay GPUs, as root, an allowed user, a stranger, and a TCP peer. The first input byte
// picks the peer (bits 0-1), the daemon (bit 2: one with a signing key and gpu-control off, so
// the request gate reads the Authorization header and the API groups) and whether a valid token
// is added to the request (bit 3, so that the routes and their query parsing are reached behind
// the gate). The bytes are also tried as a bearer token and as a token lifetime: no token the
// fuzzer makes may verify unless it is the one zeusd signed (a forgery).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "http/message.h"
#include "zeus/device/replay_gpu.h"
#include "zeusd/jwt_token.h"
#include "zeusd/process_watcher.h"
#include "zeusd/request_gate.h"
#include "zeusd/zeusd_service.h"

namespace {

constexpr const char* kKey = "fuzz-signing-key\n";

struct Daemon {
  zeus::FakeClock clock;
  zeus::Devices devices;
  zeus::zeusd::NullProcessWatcher watcher;
  std::unique_ptr<zeus::zeusd::ZeusdService> service;

  explicit Daemon(bool tokens) {
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
    zeus::zeusd::AccessPolicy access;
    if (tokens) {
      access.signing_key = kKey;
      access.enabled = {false, true, true};  // gpu-control off: 404 before authentication
    }
    service = std::make_unique<zeus::zeusd::ZeusdService>(
        devices, std::move(allow), watcher, nullptr, zeus::zeusd::UpstreamOptions{0.0}, access);
  }
};

// A token zeusd signed: every scope, no expiry.
const std::string& good_token() {
  static const std::string token =
      *zeus::zeusd::issue_token(kKey, {"fuzz",
                                       {zeus::zeusd::Capability::kGpuControl,
                                        zeus::zeusd::Capability::kGpuRead,
                                        zeus::zeusd::Capability::kCpuRead},
                                       std::nullopt});
  return token;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Daemon* plain = new Daemon(false);
  static Daemon* with_key = new Daemon(true);
  if (size == 0) return 0;
  Daemon* daemon = (data[0] & 4) ? with_key : plain;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  {
    auto verified = zeus::zeusd::verify_token(kKey, bytes, 1'800'000'000);
    if (verified && bytes != good_token()) __builtin_trap();  // a forged token verified
    (void)zeus::zeusd::parse_token_lifetime(bytes);
  }
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
    zeus::http::HttpRequest& request = parsed.request;
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
    if (data[0] & 8) request.headers.emplace_back("authorization", "Bearer " + good_token());
    const zeus::zeusd::HttpResponse answer = daemon->service->handle(request, peer);
    if (answer.status < 200 || answer.status > 599) __builtin_trap();
    // Every refusal says why, but for upstream's API's bare 404 (unknown route or method); a
    // successful write of upstream's API is 200 with an empty body.
    if (answer.body.empty() && answer.status != 200 && answer.status != 404) __builtin_trap();
    rest.remove_prefix(parsed.used_bytes);
  }
  // Leases never outlive the input that made them (the fuzzer's "process" exits every time).
  daemon->service->on_process_exit(4242);
  // (TCP changes with the token persist: they stay within the replay GPUs' ranges.)
  return 0;
}
