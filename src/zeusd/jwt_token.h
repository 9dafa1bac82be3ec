// zeusd's bearer tokens, as upstream zeusd issues and checks them: a JWT signed with HMAC-SHA256
// (HS256) over the signing key file's raw bytes (a trailing newline included), with the claims
//   sub     the user the token names (for logs, whoami and /leases)
//   scopes  the API groups it grants: a list of "gpu-control", "gpu-read", "cpu-read"
//   exp     optional expiry (Unix seconds); absent means the token never expires
// A token verifies when its header names HS256 (no other algorithm, `none` included, whatever
// the signature), its signature matches the key, its claims have those types (an unknown scope
// fails the whole token), it is not past `exp` by more than 60 s (upstream's leeway), and it is
// not dated in the future: an `nbf` or `iat` later than now + 60 s is refused ("Token is not
// valid before <ISO time> ..."). Upstream's jsonwebtoken checks neither by default; RFC 7519
// §4.1.5 says a token MUST NOT be accepted before its `nbf`. Extra claims are ignored.
// Crypto and JWT framing are libjwt's (Debian libjwt-dev); the claims are read with nlohmann.
// Thread-safety: pure functions. Failure: kInvalidArgument with a message for the 401 answer
// ("Token has expired.", "Token is not valid before ...", "Token was issued in the future ...",
// "Invalid token: ..."), kNotFound/kInvalidArgument for key files.
//
//   auto key = zeus::zeusd::read_signing_key("/etc/zeusd/signing.key");
//   auto token = zeus::zeusd::issue_token(*key, {"alice", {Capability::kGpuRead}, std::nullopt});
//   auto who = zeus::zeusd::verify_token(*key, *token, std::time(nullptr));  // who->subject
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "zeus/common/result.h"
#include "zeusd/allow_list.h"

namespace zeus::zeusd {

// How far past `exp`, or before `nbf`/`iat`, a token is still accepted (clock skew between
// issuer and daemon).
inline constexpr int64_t kTokenLeewaySeconds = 60;

// The key file's bytes as they are; an empty or unreadable file is an error naming the path.
Result<std::string> read_signing_key(const std::string& path);

// A signed HS256 token carrying `identity`'s claims (exp only when set).
Result<std::string> issue_token(std::string_view key, const TokenIdentity& identity);

// The identity a token carries, when it verifies against `key` at `now_unix_s`.
Result<TokenIdentity> verify_token(std::string_view key, std::string_view token,
                                   int64_t now_unix_s);

// `zeusd token issue --expires`: "never" or "0" (no expiry), else a duration such as 30s, 15m,
// 1h, 7d, 2w or a sum "1h 30m"; the number of seconds, or nullopt for no expiry.
Result<std::optional<int64_t>> parse_token_lifetime(std::string_view text);

}  // namespace zeus::zeusd
