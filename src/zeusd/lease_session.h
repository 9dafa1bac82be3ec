// LeaseSessions: lease sessions for zeusd's TCP clients. A client over TCP has no process zeusd
// could follow, so by default its changes persist (upstream's semantics, persistent_change.h).
// Our own client instead opens a session (POST /lease_session), sends its id in the
// X-Zeusd-Lease-Session header with every change, and keeps it alive with heartbeats (any request
// carrying the header counts). Changes tied to a session are leases (lease_table.h) held by the
// session instead of a process; once the session has been silent for longer than its timeout, or
// is closed, zeusd restores them through the same path as a lease whose process exited.
// Pure bookkeeping over times the caller passes in (milliseconds of a monotonic clock); no I/O.
// Thread-safety: none; the service's mutex guards it.
//
//   zeus::zeusd::LeaseSessions sessions(30.0);
//   sessions.open("3f9c...", "alice", now_ms);
//   sessions.touch("3f9c...", later_ms);                 // a heartbeat
//   for (const auto& id : sessions.take_expired(much_later_ms)) { /* restore its leases */ }
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace zeus::zeusd {

// The header naming a request's lease session.
inline constexpr const char* kLeaseSessionHeader = "X-Zeusd-Lease-Session";
// At most this many sessions are open at once (each expires after its timeout unless used).
inline constexpr size_t kMaxLeaseSessions = 1024;

// True when a session last heard from at `last_seen_ms` has been silent for longer than
// `timeout_ms` at `now_ms` (a clock that went back counts as no silence).
bool session_expired(int64_t last_seen_ms, int64_t now_ms, int64_t timeout_ms);

struct LeaseSession {
  std::string id;
  std::string subject;  // the token's `sub` that opened it
  int64_t opened_ms = 0;
  int64_t last_seen_ms = 0;
};

class LeaseSessions {
 public:
  // Sessions expire after `timeout_s` of silence (> 0).
  explicit LeaseSessions(double timeout_s);

  // Opens session `id` (a fresh random id from the caller) for `subject`.
  const LeaseSession& open(const std::string& id, const std::string& subject, int64_t now_ms);
  // A heartbeat: false when `id` is unknown (never opened, closed or expired).
  bool touch(const std::string& id, int64_t now_ms);
  // The session, or nullptr.
  const LeaseSession* find(const std::string& id) const;
  // Forgets `id`; false when unknown.
  bool close(const std::string& id);
  // Removes and returns the ids of the sessions expired at `now_ms`, in id order.
  std::vector<std::string> take_expired(int64_t now_ms);
  // Every session, in id order.
  std::vector<LeaseSession> list() const;

  double timeout_s() const { return static_cast<double>(timeout_ms_) / 1000.0; }
  size_t size() const { return sessions_.size(); }

 private:
  int64_t timeout_ms_;
  std::map<std::string, LeaseSession> sessions_;
};

}  // namespace zeus::zeusd
