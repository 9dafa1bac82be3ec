// zeusd from the library's side: devices whose privileged calls go through the zeusd daemon, so
// an unprivileged training job can set power limits and clocks and read RAPL counters.
//
// discover_devices() is zeus::discover() plus routing: when ZEUSD_SOCK_PATH names zeusd's Unix
// socket, every GPU is wrapped so that set/reset power limit, persistence mode and lock/reset
// clocks are sent to zeusd (matched by UUID), while reads stay local (NVML reads need no
// privilege); CPUs become zeusd-backed RAPL readers. A GPU that NVML cannot open locally (no
// access to the driver) is read through zeusd as well. zeusd ties each change to the calling
// process and restores it when that process exits, even by SIGKILL. Without ZEUSD_SOCK_PATH it is
// exactly discover(). Units are the Gpu/Cpu interface's (mW, mJ, uJ, MHz).
// Thread-safety: ZeusdClient and the wrapped devices may be used from several threads (one
// persistent connection, serialised); after fork() the child opens its own connection, so its
// changes are tied to the child.
// Failure: Unavailable when zeusd cannot be reached (message names the socket and the fix);
// zeusd's answers map to PermissionDenied (403: not on the allow-list), InvalidArgument (400:
// outside the device's range), NotFound (404), Unavailable (409: GPU leased by another live
// process; 503), NotSupported (501), with zeusd's message.
//
//   setenv("ZEUSD_SOCK_PATH", "/run/zeusd/zeusd.sock", 1);
//   auto devices = zeus::discover_devices(zeus::DiscoverOptions::from_environment());
//   devices->gpus[0]->set_power_limit_mw(250000);  // done by zeusd, undone when we exit
#pragma once

#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "zeus/device.h"
#include "zeus/result.h"

namespace zeus {
namespace http {
class HttpClient;
}

// The environment variable naming zeusd's socket.
inline constexpr const char* kZeusdSocketEnvironment = "ZEUSD_SOCK_PATH";

// One client of zeusd's HTTP/JSON API over its Unix socket (see docs/operators.md for routes).
class ZeusdClient {
 public:
  // Connects on the first request, not here.
  explicit ZeusdClient(std::string socket_path);
  ~ZeusdClient();
  ZeusdClient(const ZeusdClient&) = delete;
  ZeusdClient& operator=(const ZeusdClient&) = delete;

  // Sends `method target` with an optional JSON body and returns the body of a 2xx answer (JSON
  // text); other answers become Errors as described above. A connection broken since the last
  // request is reopened once.
  Result<std::string> request(std::string_view method, std::string_view target,
                              std::string_view json_body = "");
  const std::string& socket_path() const { return socket_path_; }

 private:
  std::string socket_path_;
  std::mutex mutex_;
  std::unique_ptr<http::HttpClient> http_;  // guarded by mutex_ (the pointer, not the calls)
  int http_owner_pid_ = 0;  // the process that made http_ (a forked child makes its own)
};

// discover() with zeusd routing when `zeusd_socket_path` is set (see the header comment);
// Devices::backends gains a "zeusd" entry saying what was routed.
Result<Devices> discover_devices(const DiscoverOptions& options,
                                 const std::optional<std::string>& zeusd_socket_path);
// The same with the socket from ZEUSD_SOCK_PATH (unset or empty: plain discover()).
Result<Devices> discover_devices(const DiscoverOptions& options);

}  // namespace zeus
