// ZeusdService: zeusd's HTTP/JSON API over the machine's devices — routing, authorisation,
// validation, leases and restore. The transport (unix_server.h) hands it parsed requests and the
// kernel-verified peer; it never touches sockets, so tests and the fuzzer call it directly.
//
// Every route is one entry of its route table (route_table.h; the table is in zeusd_routes.cc):
//   GET    /discover                       GPUs and CPUs, their constraints, the caller's rights
//   GET    /leases                         changes that will be undone when their process exits
//   POST   /lease_session, POST /lease_session/{id}/heartbeat, DELETE /lease_session/{id}
//   upstream zeusd's API (Zeus 0.16's `zeus.utils.zeusd` client) and ours in its style
//   (/gpu/get_average_power, /gpu/reset_power_limit): handled by UpstreamRoutes
//   (upstream_routes.h); its live power streams by PowerStreamRoutes (power_stream_routes.h,
//   through stream()).
// GPU and CPU indices are zeusd's own (physical indices when zeusd runs without
// CUDA_VISIBLE_DEVICES; clients map GPUs by UUID from /discover). Every change is one GpuCommand
// (wire/zeusd_command.h) through one path, change_gpu(), which takes the caller's lease.
// The /gpu/{i}/<knob> and /cpu/{i}/energy routes were removed: they answer 404 naming the route
// that replaces them.
// Errors on our routes are {"message": "..."}: 403 not on the allow-list, 404 unknown route, 405
// wrong method, 409 GPU leased by another live process, 503 too many lease sessions; upstream's
// routes answer upstream's shapes (upstream_routes.h).
// Every change is logged (info) with who asked (uid, user, pid) and the old and new values.
// Every request first passes the gate (request_gate.h): API groups off with --enable answer 404,
// and with a signing key every path but /discover and /time needs a bearer token (401/403).
// Leases: see lease_table.h; a change on the Unix socket is tied to the client's pid (or persists
// under --upstream-changes persist). Over TCP a change needs a token with gpu-control and persists
// (persistent_change.h); without a signing key TCP is read-only. A TCP client may instead open a
// lease session (lease_session.h; handlers in lease_session_routes.cc): changes whose request
// names it lease like a process's and are restored once the session is closed or silent for
// longer than `lease_session_timeout_s`.
// With a lease journal (lease_journal.h), every lease is on disk before its change reaches the
// GPU, and recover() at start restores or re-adopts what a crashed zeusd left.
// Thread-safety: handle(), on_process_exit() and restore_all() may be called from any thread.
// A change or restore of a GPU holds that GPU's lock throughout, then the table lock (mutex_)
// around the tables and the driver's calls; a command override runs without the table lock
// (gpu_locks.h), so a slow command holds up only the next change of its own GPU.
//
//   zeus::zeusd::ZeusdService service(devices, allow, watcher, &journal);
//   service.recover();  // before serving
//   zeus::zeusd::HttpResponse response = service.handle(request, peer);
#pragma once

#include <mutex>
#include <optional>

#include "http/message.h"
#include "zeus/device/device.h"
#include "zeusd/allow_list.h"
#include "zeusd/gpu_change.h"
#include "zeusd/gpu_locks.h"
#include "zeusd/lease_journal.h"
#include "zeusd/lease_session.h"
#include "zeusd/lease_table.h"
#include "zeusd/persistent_change.h"
#include "zeusd/power_stream_routes.h"
#include "zeusd/process_watcher.h"
#include "zeusd/request_gate.h"
#include "zeusd/route_table.h"
#include "zeusd/upstream_routes.h"

namespace zeus::zeusd {

using HttpRequest = http::HttpRequest;
using HttpResponse = http::HttpResponse;

class ZeusdService {
 public:
  // `devices`, `watcher` and `journal` must outlive the service; the watcher is told about every
  // process that takes a lease and must call on_process_exit() when it exits. Without a journal
  // (nullptr) leases live in memory only.
  ZeusdService(Devices& devices, AllowList allow, ProcessWatcher& watcher,
               LeaseJournal* journal = nullptr, UpstreamOptions upstream = {},
               AccessPolicy access = {}, double lease_session_timeout_s = 30.0);

  // At start, before serving: reads the journal a previous zeusd left, restores the leases whose
  // process is gone, re-adopts (and watches) those whose process still runs, and reports a damaged
  // journal; then warns about each GPU whose power limit differs from its default with no lease.
  // Everything is logged; nothing here stops zeusd from starting.
  void recover();

  // Answers one request from `peer`. Never throws, whatever the request holds.
  HttpResponse handle(const HttpRequest& request, const Peer& peer);
  // The live power streams (power_stream_routes.h): true when `request` is one, then answered
  // or streamed through `reply`; false for every other request (answer it with handle()).
  bool stream(const HttpRequest& request, const Peer& peer,
              const std::shared_ptr<http::Reply>& reply);
  PowerStreamRoutes& power_streams() { return streams_; }
  // Every route handle() answers (route_table.h), in the order it tries them.
  const std::vector<Route>& routes() const { return routes_; }
  // Restores every GPU knob `pid` changed and drops its leases.
  void on_process_exit(int pid);
  // Restores every lease (zeusd is stopping).
  void restore_all();
  // Leases held now.
  std::vector<Lease> leases() const;
  // Restores the changes of every lease session silent for longer than its timeout at `now_ms`
  // (monotonic_ms()); the daemon calls it a few times a second.
  void expire_sessions(int64_t now_ms);
  static int64_t monotonic_ms();

 private:
  // The route table (zeusd_routes.cc), built once; handle() dispatches through it.
  std::vector<Route> route_table();
  // What a path family checks before its routes (route_table.h): upstream's persistence header
  // and /auth/ without a signing key; a lease session's TCP and token. Sets peer.persist_change.
  std::optional<HttpResponse> family_checks(RouteFamily family, const HttpRequest& request,
                                            Peer& peer);
  // The answer when no route takes the request: the family's 404, or 405 for a known path.
  HttpResponse no_route(RouteFamily family, const HttpRequest& request, const Route* same_path);
  HttpResponse discover(const Peer& peer);
  HttpResponse list_leases();
  // The lease session handlers (lease_session_routes.cc); the peer has a token.
  HttpResponse open_session(const Peer& peer);
  HttpResponse heartbeat_session(const Peer& peer, const std::string& id);
  HttpResponse close_session(const Peer& peer, const std::string& id);
  // 404 unless `id` is an open session of the peer's token subject. Call with mutex_ held.
  std::optional<HttpResponse> unknown_session(const Peer& peer, const std::string& id) const;
  // Validates `command` against GPU `index`, takes `peer`'s lease (saving what to restore) and
  // applies it; over TCP without a session, or with peer.persist_change, the change persists
  // instead (change_gpu_persistent). Call with mutex_ held. gpu_change.cc.
  tl::expected<ChangeDone, ChangeError> change_gpu(const Peer& peer, int index,
                                                   const GpuCommand& command);
  // change_gpu() for one kind of command (the visit's), and the persistent variant: defined and
  // instantiated in gpu_change.cc only.
  template <typename Command>
  tl::expected<ChangeDone, ChangeError> change_gpu_as(const Peer& peer, int index,
                                                      const Command& command);
  template <typename Command>
  tl::expected<ChangeDone, ChangeError> change_gpu_persistent(const Peer& peer, int index,
                                                              const Command& command);
  void restore(const Lease& lease, const std::string& why);
  // Writes the lease table to the journal (no-op without one).
  Result<void> record_leases();
  // record_leases(), logging a failure (after a restore, when nothing can be undone).
  void record_leases_or_log();
  // The index of the lease's GPU now (found by UUID when recorded), or nullopt when it is gone.
  std::optional<int> gpu_of(const Lease& lease) const;
  void warn_about_unleased_changes();
  // The request's lease session header: sets peer.lease_session and refreshes the session, or
  // answers the refusal (unknown or expired session, header on the Unix socket).
  std::optional<HttpResponse> attach_session(const HttpRequest& request, Peer& peer);
  // Whether a change through upstream's routes from `peer` persists (--upstream-changes and the
  // request's X-Zeusd-Persist), or the refusal of a header this zeusd's policy does not take.
  tl::expected<bool, HttpResponse> upstream_change_persists(const HttpRequest& request,
                                                            const Peer& peer) const;
  // Restores and drops the session's leases; answers how many. Call with mutex_ held.
  size_t end_session(const std::string& id, const std::string& why);

  Devices& devices_;
  const AllowList allow_;
  ProcessWatcher& watcher_;
  LeaseJournal* journal_;
  mutable std::mutex mutex_;
  GpuLocks gpu_locks_;  // taken before mutex_ by whoever changes a GPU
  LeaseTable leases_;  // guarded by mutex_
  PersistentChanges persistent_;  // guarded by mutex_
  UpstreamRoutes upstream_;
  const AccessPolicy access_;
  const UpstreamOptions::Changes upstream_changes_;
  LeaseSessions sessions_;  // guarded by mutex_
  std::vector<Route> routes_;  // const once built
  PowerStreamRoutes streams_;  // last: its pollers stop before what they read goes
};

}  // namespace zeus::zeusd
