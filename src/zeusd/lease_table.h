// LeaseTable: which client process holds each GPU zeusd has changed, and what to put back.
//
// The first change a process makes to a GPU takes a lease and saves the GPU's value of that knob
// (power limit, persistence mode; clocks are saved as "unlocked", since NVML cannot read a clock
// lock back). Further changes by the same process add the knobs they touch; another process is
// refused (409) while the holder lives. When the holder exits, zeusd restores the saved values
// and drops the lease. Pure bookkeeping: the service does the device calls.
// Thread-safety: none; the service's mutex guards it.
//
//   zeus::zeusd::LeaseTable leases;
//   auto& lease = leases.acquire(0, peer.pid, peer.uid);
//   if (!lease.saved.power_limit_mw) lease.saved.power_limit_mw = current_mw;
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace zeus::zeusd {

// The values to restore when a lease ends; unset knobs were not changed.
struct SavedGpuState {
  std::optional<uint32_t> power_limit_mw;
  std::optional<bool> persistence_mode;
  bool sm_clocks_locked = false;      // restore = reset_sm_clocks()
  bool memory_clocks_locked = false;  // restore = reset_memory_clocks()

  bool operator==(const SavedGpuState&) const = default;
};

struct Lease {
  int gpu = 0;  // zeusd's GPU index
  int pid = 0;  // the holder
  uint32_t uid = 0;
  SavedGpuState saved;
  // The holder's start time (process_identity.h; 0: unknown), so that a restarted zeusd can tell
  // the holder from a later process with the same pid; and the GPU's UUID, so that the lease
  // finds its GPU when indices change. Both recorded in the lease journal (lease_journal.h).
  uint64_t pid_start_ticks = 0;
  std::string gpu_uuid;
  // Set when the holder is a lease session over TCP (lease_session.h) rather than a process;
  // pid is then 0 and the lease ends when the session is closed or goes silent.
  std::string session;
  bool operator==(const Lease&) const = default;
  // True when the caller (pid, or session when not empty) holds this lease.
  bool held_by(int caller_pid, const std::string& caller_session) const {
    return session.empty() ? caller_session.empty() && pid == caller_pid
                           : session == caller_session;
  }
  // "pid 4242 (uid 1000)" or "lease session 3f9c0a1b...".
  std::string holder() const;
};

class LeaseTable {
 public:
  // The lease on `gpu`, or nullptr.
  Lease* find(int gpu);
  // The lease on `gpu`, created for `pid` when there is none. A lease held by another pid is a
  // caller bug (ZEUS_CHECK): check find() first.
  Lease& acquire(int gpu, int pid, uint32_t uid, const std::string& session = "");
  // Takes over a lease read back from the journal (a restarted zeusd re-adopting a live holder);
  // the GPU must be free (ZEUS_CHECK).
  void adopt(const Lease& lease);
  // Drops the lease on `gpu` without restoring anything (a change that failed right after the
  // lease was taken).
  void erase(int gpu) { leases_.erase(gpu); }
  // Removes and returns every lease `pid` holds, in GPU order.
  std::vector<Lease> release_all_of(int pid);
  // Removes and returns every lease lease session `session` holds, in GPU order.
  std::vector<Lease> release_all_of_session(const std::string& session);
  // Removes and returns every lease.
  std::vector<Lease> release_all();
  // Every lease, in GPU order.
  std::vector<Lease> list() const;

 private:
  std::vector<Lease> release_if(const std::function<bool(const Lease&)>& matches);
  std::map<int, Lease> leases_;  // by GPU
};

}  // namespace zeus::zeusd
