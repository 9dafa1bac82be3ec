// UpstreamRoutes: the handlers of Zeus's own daemon API (upstream zeusd, the one
// `zeus.utils.zeusd` in Zeus 0.16 speaks) and of zeusd's additions in the same style. zeusd's
// route table (zeusd_routes.cc) maps each route to one of them after checking the allow-list and
// the query (upstream_query.h); every parameter is a query parameter and POST bodies are empty.
// Routes (answers keyed by the device index as a string, e.g. {"0": {...}}):
//   GET  /time                              {"timestamp_ms"}
//   GET  /auth/whoami                       {"sub", "scopes"[, "exp"]} of the caller's token;
//                                           404 {"error"} when zeusd has no signing key
//   GET  /gpu/get_power_limit               {"0": {"power_limit_mw"}}                 gpu-read
//   GET  /gpu/get_power_limit_constraints   {"0": {"min_power_limit_mw", "max_power_limit_mw"}}
//   GET  /gpu/get_persistence_mode          {"0": {"enabled"}}
//   GET  /gpu/get_cumulative_energy         {"0": {"energy_mj"}} (400 without a counter)
//   GET  /gpu/get_power                     {"timestamp_ms", "power_mw": {"0": mW}}
//   GET  /gpu/get_average_power             the same, the driver's averaged power (ours)
//   POST /gpu/set_power_limit               power_limit_mw                         gpu-control
//   POST /gpu/reset_power_limit             back to the driver's default (ours)
//   POST /gpu/set_persistence_mode          enabled
//   POST /gpu/set_gpu_locked_clocks         min_clock_mhz, max_clock_mhz
//   POST /gpu/set_mem_locked_clocks         min_clock_mhz, max_clock_mhz
//   POST /gpu/reset_gpu_locked_clocks, /gpu/reset_mem_locked_clocks, /gpu/reset_locked_clocks
//   GET  /cpu/get_cumulative_energy         cpu, dram (both required)                 cpu-read
//        {"0": {"cpu_energy_uj", "dram_energy_uj"}}: raw counter plus wraparounds, nullable
//   GET  /cpu/get_power                     {"timestamp_ms", "power_mw": {"0": {"cpu_mw",
//        "dram_mw"}}} from two readings cpu_power_window_s apart
// GET /gpu/stream_power and /cpu/stream_power are served by PowerStreamRoutes
// (power_stream_routes.h): they answer through the Reply, as Server-Sent Events.
// Writes take gpu_ids and block=true|false and answer 200 with an empty body; block=false answers
// 200 without per-GPU device errors (they are logged), as upstream does once a command is queued.
// Errors: {"error": ...} 400 for a malformed query or an unknown device ("GPU 3 not found"), 403
// when the allow-list refuses the caller; per-device failures {"errors": {"<i>": message}} with
// the worst status (device NoPermission 403, invalid or not supported 400, a GPU leased by another
// live process 409, else 500) while the devices that succeeded keep the change; beside "errors",
// {"codes": {"<i>": "not supported" | "invalid argument" | "leased" | ...}} (our addition, which
// upstream's client ignores) keeps the project's error code for our own client. An unknown route
// or method under /gpu/, /cpu/, /auth/ answers 404 with an empty body.
// Changes go through ZeusdService's one change path, so they take the caller's lease and are
// restored when its process exits.
// Thread-safety: every handler may be called from many threads; device access holds
// `device_mutex`.
//
//   UpstreamRoutes upstream(devices, mutex, gpu_locks, change_gpu, {});
//   return upstream.gpu_read(query.ids, power_limit_entry, /*power_map=*/false);
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "http/message.h"
#include "zeus/device/device.h"
#include "zeusd/allow_list.h"
#include "zeusd/gpu_change.h"
#include "zeusd/gpu_locks.h"
#include "zeusd/upstream_query.h"

namespace zeus::zeusd {

struct UpstreamOptions {
  // /cpu/get_power measures energy over this long (upstream: 1 / --cpu-power-poll-hz 10).
  double cpu_power_window_s = 0.1;
  // The live power streams' pollers (power_stream_routes.h); upstream's --gpu-power-poll-hz and
  // --cpu-power-poll-hz. Must be > 0.
  double gpu_power_poll_hz = 20;
  double cpu_power_poll_hz = 10;
  // What a change on the Unix socket does (`zeusd serve --upstream-changes`): kLease, the
  // default, leases it to the calling process (undone when it exits); kPersist keeps it until
  // reset, as upstream zeusd does; kOnRequest leases unless the request carries
  // "X-Zeusd-Persist: 1". Over TCP without a lease session changes persist anyway.
  enum class Changes { kLease, kPersist, kOnRequest };
  Changes changes = Changes::kLease;
};

// "lease", "persist", "on-request" (and back: nullopt for anything else).
std::string_view upstream_changes_name(UpstreamOptions::Changes changes);
std::optional<UpstreamOptions::Changes> parse_upstream_changes(std::string_view name);

// One GPU's entry in a read's answer, or its failure; `what` names the GPU ("GPU 0").
using GpuReading = tl::expected<nlohmann::json, ChangeError>;
using GpuReader = GpuReading (*)(Gpu& gpu, const std::string& what);
// The GPU reads' entries: get_power_limit {"power_limit_mw"}, get_power_limit_constraints
// {"min_power_limit_mw", "max_power_limit_mw"}, get_persistence_mode {"enabled"},
// get_cumulative_energy {"energy_mj"} (400 without a trustworthy counter), get_power and
// get_average_power the bare mW.
GpuReading power_limit_entry(Gpu& gpu, const std::string& what);
GpuReading power_limit_range_entry(Gpu& gpu, const std::string& what);
GpuReading persistence_mode_entry(Gpu& gpu, const std::string& what);
GpuReading energy_entry(Gpu& gpu, const std::string& what);
GpuReading power_entry(Gpu& gpu, const std::string& what);
GpuReading average_power_entry(Gpu& gpu, const std::string& what);
// Our addition (GET /gpu/get_state): what is in force on the GPU, for a controller that closes a
// loop (a power budget, a cluster planner that cannot see whether a cap took effect):
// {"power_limit_mw", "power_draw_mw" (instant), "average_power_mw", "sm_clock_mhz" (the clock it
// runs at now: a lock's, a cap's or the driver's)}, each but the limit null where the GPU cannot
// tell. Which process holds a change is GET /leases.
GpuReading state_entry(Gpu& gpu, const std::string& what);

class UpstreamRoutes {
 public:
  // Applies one command to one GPU; called with `device_mutex` held.
  using ChangeGpu =
      std::function<tl::expected<ChangeDone, ChangeError>(const Peer&, int, const GpuCommand&)>;

  // `devices` and `device_mutex` must outlive the handlers. `device_mutex`: the service's table
  // lock; `gpu_locks`: its GPU locks (gpu_locks.h), taken before it for the GPUs a write changes.
  UpstreamRoutes(Devices& devices, std::mutex& device_mutex, GpuLocks& gpu_locks,
                 ChangeGpu change_gpu, UpstreamOptions options);

  // The status upstream answers for one device's failure.
  static int status_of(const ChangeError& error);

  // GET /time, GET /auth/whoami (the caller's verified token: `peer.token` must be set).
  static http::HttpResponse time();
  static http::HttpResponse whoami(const Peer& peer);

  // A GPU read: `read`'s entry for each GPU of `ids` (checked below the GPU count), keyed by
  // index; with `power_map`, get_power's shape: under "power_mw" beside "timestamp_ms".
  http::HttpResponse gpu_read(const std::vector<int>& ids, GpuReader read, bool power_map);

  // A write: `commands` on every GPU of `query.ids`, in order (`route` names it in the log).
  http::HttpResponse gpu_write(std::string_view route, const std::vector<GpuCommand>& commands,
                               const ParsedQuery& query, const Peer& peer);

  // The CPU reads: /cpu/get_cumulative_energy (its query's cpu and dram flags), /cpu/get_power.
  http::HttpResponse cpu_energy(const ParsedQuery& query);
  http::HttpResponse cpu_power(const std::vector<int>& ids);

 private:
  Devices& devices_;
  std::mutex& device_mutex_;
  GpuLocks& gpu_locks_;
  ChangeGpu change_gpu_;
  UpstreamOptions options_;
};

}  // namespace zeus::zeusd
