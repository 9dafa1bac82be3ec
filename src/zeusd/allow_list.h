// AllowList: which users and groups may use each zeusd capability, and Peer, who is asking.
//
// Capabilities: gpu-control (set/reset power limit, persistence mode, locked clocks), gpu-read
// (GPU power limit, power and energy), cpu-read (RAPL package and DRAM energy). An entry names a
// user ("alice" or a uid "1001"), a group ("@video" or "@44"), or anyone ("*"). Root (uid 0) is
// always allowed: it could do all of this without zeusd. Names are resolved when added, so a typo
// fails at startup instead of silently allowing nobody.
// Thread-safety: build on one thread, then allows() may be called from any thread.
// Failure: add() answers InvalidArgument for a malformed spec, NotFound for an unknown name.
//
//   zeus::zeusd::AllowList allow;
//   allow.add("gpu-control=alice,@video");
//   if (!allow.allows(zeus::zeusd::Capability::kGpuControl, peer)) answer 403;
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/user_name.h"
#include "wire/zeusd_command.h"
#include "zeus/common/result.h"

namespace zeus::zeusd {

// Capability, capability_name() and parse_capability(): wire/zeusd_command.h (the client knows
// the names too).

// Who a verified bearer token names (jwt_token.h): its `sub`, the API groups it grants and its
// expiry (Unix seconds; unset: never).
struct TokenIdentity {
  std::string subject;
  std::vector<Capability> scopes;
  std::optional<int64_t> expires_unix_s;

  bool grants(Capability capability) const;
};

// The process on the other end of a connection, from SO_PEERCRED (Unix socket) or the kernel's
// socket table (loopback TCP, where the pid is unknown), and the token it presented.
struct Peer {
  int pid = -1;  // -1 when unknown
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;  // the primary and supplementary groups
  bool unix_socket = true;       // false for a TCP peer
  // Set once zeusd has verified the request's bearer token (only with a signing key). Over TCP
  // the token alone decides; on the Unix socket the allow-list applies as well.
  std::optional<TokenIdentity> token;
  // The lease session (lease_session.h) a TCP request's X-Zeusd-Lease-Session header named, once
  // zeusd found it open for this token's subject; empty: none (TCP changes then persist).
  std::string lease_session;
  // Set by the service for a change through upstream's routes that persists (zeusd serve
  // --upstream-changes persist, or on-request with "X-Zeusd-Persist: 1"): no lease, no restore.
  bool persist_change = false;

  // "uid 1000 (alice) pid 4242", for logs and messages.
  std::string description() const;
};

class AllowList {
 public:
  // Adds "<capability>=<entry>,<entry>,..."; entries as in the header comment.
  Result<void> add(std::string_view spec);
  // True when `peer` is root or matches an entry of `capability`.
  bool allows(Capability capability, const Peer& peer) const;
  // Why `peer` may not use `capability` (naming the operator's fix), or "" when it may. Over TCP
  // a verified token's scopes decide; without one, changes (gpu-control) need the Unix socket.
  std::string refusal(Capability capability, const Peer& peer) const;
  // "alice, @video" (or "root only"), for the startup log.
  std::string describe(Capability capability) const;
  // True when no entry names anyone for `capability`: only root may use it.
  bool root_only(Capability capability) const {
    return entries_[static_cast<size_t>(capability)].names.empty();
  }

 private:
  struct Entries {
    bool anyone = false;
    std::set<uint32_t> uids;
    std::set<uint32_t> gids;
    std::vector<std::string> names;  // as written, for describe()
  };
  std::array<Entries, kCapabilityCount> entries_;
};

}  // namespace zeus::zeusd
