// zeusd from the library's side: devices whose privileged calls go through the zeusd daemon, so
// an unprivileged training job can set power limits and clocks and read RAPL counters.
//
// discover_devices() is zeus::discover() plus routing: when ZEUSD_SOCK_PATH names zeusd's Unix
// socket (or ZEUSD_HOST_PORT names its TCP address, with ZEUSD_TOKEN a bearer token from
// `zeusd token issue`, as upstream Zeus's client reads them), every GPU is wrapped so that
// set/reset power limit, persistence mode and lock/reset clocks are sent to zeusd (matched by
// UUID), while reads stay local (NVML reads need no privilege); CPUs become zeusd-backed RAPL
// readers. A GPU that NVML cannot open locally (no access to the driver) is read through zeusd as
// well. The client speaks upstream Zeus's daemon routes
// (/gpu/set_power_limit?gpu_ids=..&block=true, ...; see src/zeusd/upstream_routes.h), so one zeusd
// serves it and upstream's clients alike. On the Unix socket zeusd ties each change to the calling
// process and restores it when that process exits, even by SIGKILL; over TCP changes persist as
// upstream's do. Without either variable it is exactly discover(). Units are the Gpu/Cpu
// interface's (mW, mJ, uJ, MHz). Thread-safety: ZeusdClient and the wrapped devices may be used
// from several threads (one persistent connection, serialised); after fork() the child opens its
// own connection, so its changes are tied to the child. Over TCP the client opens a lease session
// on its first change and heart-beats it (ensure_lease_session()), so its changes are restored like
// a local process's once it stops; upstream's client, without a session, makes persistent changes.
// Failure: Unavailable when zeusd cannot be reached (message names the endpoint and the fix);
// zeusd's answers ({"message"}, upstream's {"error"} or per-device {"errors": {"<i>": ...}}) map
// to PermissionDenied (401/403: not on the allow-list, bad token), InvalidArgument (400: outside
// the device's range), NotFound (404), Unavailable (409: GPU leased by another live process;
// 503), NotSupported (501, or a per-device "not supported"), with zeusd's message.
//
//   setenv("ZEUSD_SOCK_PATH", "/run/zeusd/zeusd.sock", 1);
//   auto devices = zeus::discover_devices(zeus::DiscoverOptions::from_environment());
//   devices->gpus[0]->set_power_limit_mw(250000);  // done by zeusd, undone when we exit
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "zeus/common/result.h"
#include "zeus/device/device.h"

namespace zeus {
namespace http {
class HttpClient;
}

// The environment variables naming zeusd: its Unix socket, or its TCP address and a token.
inline constexpr const char* kZeusdSocketEnvironment = "ZEUSD_SOCK_PATH";
inline constexpr const char* kZeusdHostPortEnvironment = "ZEUSD_HOST_PORT";
inline constexpr const char* kZeusdTokenEnvironment = "ZEUSD_TOKEN";

// Where zeusd listens: a Unix socket, or host:port over TCP with an optional bearer token.
struct ZeusdEndpoint {
  std::string socket_path;  // set: the Unix socket (host/port unused)
  std::string host;
  int port = 0;
  std::string token;  // "Authorization: Bearer <token>" on every request when set

  // ZEUSD_SOCK_PATH first, else ZEUSD_HOST_PORT (HOST:PORT); ZEUSD_TOKEN with either; nullopt
  // when neither is set; InvalidArgument naming the variable when ZEUSD_HOST_PORT is malformed.
  static Result<std::optional<ZeusdEndpoint>> from_environment();
  // Parses "HOST:PORT" (IPv6 in brackets); InvalidArgument naming ZEUSD_HOST_PORT otherwise.
  static Result<ZeusdEndpoint> tcp(std::string_view host_port, std::string token);
  bool is_tcp() const { return socket_path.empty(); }
  // "socket /run/zeusd/zeusd.sock" or "tcp 10.0.0.5:4938", for messages.
  std::string describe() const;
};

// One client of zeusd's HTTP/JSON API (see docs/operators.md for routes).
class ZeusdClient {
 public:
  // Connects on the first request, not here.
  explicit ZeusdClient(std::string socket_path);
  explicit ZeusdClient(ZeusdEndpoint endpoint);
  ~ZeusdClient();
  ZeusdClient(const ZeusdClient&) = delete;
  ZeusdClient& operator=(const ZeusdClient&) = delete;

  // Sends `method target` with an optional JSON body and returns the body of a 2xx answer (JSON
  // text); other answers become Errors as described above. A connection broken since the last
  // request is reopened once.
  Result<std::string> request(std::string_view method, std::string_view target,
                              std::string_view json_body = "");
  const std::string& socket_path() const { return endpoint_.socket_path; }
  const ZeusdEndpoint& endpoint() const { return endpoint_; }

  // Over TCP: opens this process's lease session when it has none (POST /lease_session), names
  // it in every later request and heart-beats it from a background thread, so that zeusd
  // restores this process's changes once it stops (a session timeout after a SIGKILL; at once
  // when the client is destroyed). No-op on the Unix socket (zeusd follows the process there).
  // The GPUs call it before each change. zeusd_client_session.cc.
  Result<void> ensure_lease_session();
  // The session's id ("" when none is open by this process).
  std::string lease_session() const;
  // Stops the heartbeats and closes the session (zeusd restores its changes now).
  void close_lease_session();

 private:
  void heartbeat_loop(const std::string& id, double interval_s);
  void stop_heartbeat();

  ZeusdEndpoint endpoint_;
  std::mutex mutex_;
  std::unique_ptr<http::HttpClient> http_;  // guarded by mutex_ (the pointer, not the calls)
  int http_owner_pid_ = 0;  // the process that made http_ (a forked child makes its own)
  mutable std::mutex session_mutex_;
  std::condition_variable session_cv_;
  std::string session_id_;                  // guarded by session_mutex_
  int session_owner_pid_ = 0;               // the process that opened it
  bool stopping_ = false;                   // tells the heartbeat thread to end
  std::unique_ptr<std::thread> heartbeat_;  // guarded by session_mutex_
};

// discover() with zeusd routing when `endpoint` is set (see the header comment);
// Devices::backends gains a "zeusd" entry saying what was routed.
Result<Devices> discover_devices(const DiscoverOptions& options,
                                 const std::optional<ZeusdEndpoint>& endpoint);
// The same over the Unix socket `zeusd_socket_path` (unset or empty: plain discover()).
Result<Devices> discover_devices(const DiscoverOptions& options,
                                 const std::optional<std::string>& zeusd_socket_path);
// The same with the endpoint from the environment (ZeusdEndpoint::from_environment(); neither
// variable set: plain discover()).
Result<Devices> discover_devices(const DiscoverOptions& options);

}  // namespace zeus
