// The gate every zeusd request passes before its route, on the Unix socket and over TCP alike:
// API groups switched off with `zeusd serve --enable` and, once a signing key is set, bearer
// tokens (jwt_token.h), decided as upstream zeusd decides them:
//   1. a path of a disabled group answers 404 {"error": "API group 'gpu-control' is not enabled
//      on this server."}, before any authentication;
//   2. without a signing key nothing more is checked (the allow-list decides, per route);
//   3. with one, /discover and /time are open; every other path (unknown ones included) needs
//      exactly one `Authorization: Bearer <jwt>` header with a token that verifies — else 401
//      with `WWW-Authenticate: Bearer realm="zeusd"` — and whose scopes include the path's group
//      — else 403 naming the user, the scope and the token's scopes.
// The group of a path, by name as upstream's scopes: /gpu/set_* and /gpu/reset_* gpu-control, any
// other /gpu/... gpu-read, /cpu/... cpu-read; ours: /leases gpu-read, /lease_session...
// gpu-control; /discover, /time and /auth/... belong to none. (The route table's capability of
// each route agrees: route_table_test.cc checks every entry.)
// Pure: no I/O (the clock is an argument). Thread-safety: const functions.
//
//   GateDecision decision = check_access(request, policy, std::time(nullptr));
//   if (decision.refusal) return *decision.refusal;
//   peer.token = decision.token;
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/message.h"
#include "zeusd/allow_list.h"

namespace zeus::zeusd {

struct AccessPolicy {
  // The API groups served (`--enable`), by Capability; all by default.
  std::array<bool, kCapabilityCount> enabled{true, true, true};
  // The signing key's bytes; empty: no tokens (the allow-list alone decides).
  std::string signing_key;

  bool is_enabled(Capability group) const { return enabled[static_cast<size_t>(group)]; }
  bool auth_required() const { return !signing_key.empty(); }
  // "gpu-control", ... in Capability order, for /discover.
  std::vector<std::string> enabled_names() const;
};

// `--enable gpu-read,cpu-read` (repeatable, comma lists) -> the groups; InvalidArgument naming
// the valid names for an unknown one, or when none is left.
Result<std::array<bool, kCapabilityCount>> parse_enabled_groups(
    const std::vector<std::string>& lists);

// The API group a request needs, or nullopt for /discover, /time, /auth/... and unknown paths.
std::optional<Capability> required_group(std::string_view path);

struct GateDecision {
  std::optional<http::HttpResponse> refusal;  // set: answer this instead of routing
  std::optional<TokenIdentity> token;         // the verified token, when one was needed
};

GateDecision check_access(const http::HttpRequest& request, const AccessPolicy& policy,
                          int64_t now_unix_s);

}  // namespace zeus::zeusd
