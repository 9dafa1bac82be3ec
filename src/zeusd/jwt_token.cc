#include "zeusd/jwt_token.h"

#include <jwt.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

namespace zeus::zeusd {
namespace {

using nlohmann::json;

struct JwtFree {
  void operator()(jwt_t* jwt) const { jwt_free(jwt); }
};
using JwtPtr = std::unique_ptr<jwt_t, JwtFree>;

struct CharFree {
  void operator()(char* text) const { std::free(text); }
};
using CharPtr = std::unique_ptr<char, CharFree>;

Error invalid(const std::string& why) {
  return Error{ErrorCode::kInvalidArgument, "Invalid token: " + why};
}

// libjwt takes the key length as an int.
constexpr size_t kMaxKeyBytes = 1 << 20;

// A NumericDate as ISO 8601 UTC ("2027-01-15T08:00:00Z"); past year 9999, "Unix time N".
std::string iso_time(double unix_s) {
  constexpr double kYear9999End = 253402300799.0;
  if (!(unix_s >= 0 && unix_s <= kYear9999End)) {
    if (unix_s > -9.0e18 && unix_s < 9.0e18) {
      return "Unix time " + std::to_string(static_cast<int64_t>(unix_s));
    }
    std::ostringstream text;
    text << "Unix time " << unix_s;
    return text.str();
  }
  const auto seconds = static_cast<std::time_t>(unix_s);
  std::tm utc{};
  char buffer[32];
  if (gmtime_r(&seconds, &utc) == nullptr ||
      std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc) == 0) {
    return "Unix time " + std::to_string(seconds);
  }
  return buffer;
}

// RFC 7519 §4.1.5 / §4.1.6: `nbf` and `iat` are NumericDates; a token dated later than now by
// more than the leeway is refused, naming the date and the daemon's own clock.
Result<void> check_not_future(const json& claims, const char* name, int64_t now_unix_s) {
  const auto claim = claims.find(name);
  if (claim == claims.end() || claim->is_null()) return ok();
  if (!claim->is_number()) {
    return fail(invalid(std::string("`") + name + "` is not a number of seconds"));
  }
  const double when = claim->get<double>();
  if (when <= static_cast<double>(now_unix_s) + static_cast<double>(kTokenLeewaySeconds)) {
    return ok();
  }
  const std::string clocks = " (its `" + std::string(name) + "`; this zeusd's clock says " +
                             iso_time(static_cast<double>(now_unix_s)) +
                             "); check this machine's and the issuer's clocks";
  if (std::string_view(name) == "nbf") {
    return fail(ErrorCode::kInvalidArgument,
                "Token is not valid before " + iso_time(when) + clocks);
  }
  return fail(ErrorCode::kInvalidArgument,
              "Token was issued in the future, at " + iso_time(when) + clocks);
}

}  // namespace

Result<std::string> read_signing_key(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return fail(ErrorCode::kNotFound, "cannot read the signing key file '" + path +
                                          "' (create one with: head -c 32 /dev/urandom | "
                                          "base64 > " +
                                          path + "; chmod 600 " + path + ")");
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  std::string key = bytes.str();
  if (key.empty()) {
    return fail(ErrorCode::kInvalidArgument, "the signing key file '" + path +
                                                 "' is empty (put at least 32 random bytes in it)");
  }
  if (key.size() > kMaxKeyBytes) {
    return fail(ErrorCode::kInvalidArgument,
                "the signing key file '" + path + "' is over 1 MiB: is it the right file?");
  }
  return key;
}

Result<std::string> issue_token(std::string_view key, const TokenIdentity& identity) {
  if (key.empty() || key.size() > kMaxKeyBytes) {
    return fail(ErrorCode::kInvalidArgument, "a signing key must hold 1 byte to 1 MiB");
  }
  json claims{{"sub", identity.subject}, {"scopes", json::array()}};
  for (Capability scope : identity.scopes) claims["scopes"].push_back(capability_name(scope));
  if (identity.expires_unix_s) claims["exp"] = *identity.expires_unix_s;
  jwt_t* raw = nullptr;
  if (jwt_new(&raw) != 0) return fail(ErrorCode::kInternal, "libjwt could not make a token");
  JwtPtr jwt(raw);
  const std::string text = claims.dump(-1, ' ', false, json::error_handler_t::replace);
  if (jwt_add_grants_json(jwt.get(), text.c_str()) != 0 ||
      jwt_set_alg(jwt.get(), JWT_ALG_HS256, reinterpret_cast<const unsigned char*>(key.data()),
                  static_cast<int>(key.size())) != 0) {
    return fail(ErrorCode::kInternal, "libjwt could not sign the token");
  }
  CharPtr encoded(jwt_encode_str(jwt.get()));
  if (!encoded) return fail(ErrorCode::kInternal, "libjwt could not encode the token");
  return std::string(encoded.get());
}

Result<TokenIdentity> verify_token(std::string_view key, std::string_view token,
                                   int64_t now_unix_s) {
  if (key.empty() || key.size() > kMaxKeyBytes) return fail(invalid("no signing key"));
  // libjwt reads a NUL-terminated string: a token with a NUL in it is not one.
  if (token.empty() || token.size() > 8192 || token.find('\0') != std::string_view::npos) {
    return fail(invalid(token.empty() ? "empty" : "not a JWT"));
  }
  const std::string text(token);
  jwt_t* raw = nullptr;
  const int decoded =
      jwt_decode(&raw, text.c_str(), reinterpret_cast<const unsigned char*>(key.data()),
                 static_cast<int>(key.size()));
  JwtPtr jwt(raw);
  if (decoded != 0 || !jwt) {
    return fail(invalid(decoded == EINVAL
                            ? "malformed, or its signature does not match this "
                              "zeusd's key"
                            : std::string("not verified (") + std::strerror(decoded) + ")"));
  }
  // Only HS256: `none` carries no signature and HS512 is not what zeusd issues.
  if (jwt_get_alg(jwt.get()) != JWT_ALG_HS256) {
    const char* alg = jwt_alg_str(jwt_get_alg(jwt.get()));
    return fail(invalid(std::string("algorithm ") + (alg ? alg : "?") + " is not HS256"));
  }
  CharPtr grants(jwt_get_grants_json(jwt.get(), nullptr));
  if (!grants) return fail(invalid("no claims"));
  const json claims = json::parse(grants.get(), nullptr, /*allow_exceptions=*/false);
  if (!claims.is_object()) return fail(invalid("the claims are not a JSON object"));
  TokenIdentity identity;
  const auto sub = claims.find("sub");
  if (sub == claims.end() || !sub->is_string()) return fail(invalid("missing field `sub`"));
  identity.subject = sub->get<std::string>();
  const auto scopes = claims.find("scopes");
  if (scopes == claims.end() || !scopes->is_array()) return fail(invalid("missing field `scopes`"));
  for (const json& scope : *scopes) {
    Result<Capability> parsed =
        scope.is_string()
            ? parse_capability(scope.get<std::string>())
            : Result<Capability>(fail(ErrorCode::kInvalidArgument, "a scope is not a string"));
    if (!parsed) return fail(invalid(parsed.error().message));
    identity.scopes.push_back(*parsed);
  }
  const auto exp = claims.find("exp");
  if (exp != claims.end() && !exp->is_null()) {
    if (!exp->is_number_unsigned()) return fail(invalid("`exp` is not a whole number of seconds"));
    const uint64_t value = exp->get<uint64_t>();
    if (value > static_cast<uint64_t>(INT64_MAX) - kTokenLeewaySeconds) {
      return fail(invalid("`exp` is out of range"));
    }
    identity.expires_unix_s = static_cast<int64_t>(value);
    if (*identity.expires_unix_s + kTokenLeewaySeconds < now_unix_s) {
      return fail(ErrorCode::kInvalidArgument, "Token has expired.");
    }
  }
  // Unlike upstream (whose jsonwebtoken leaves `nbf` off and never reads `iat`), a token dated
  // in the future is refused: RFC 7519 §4.1.5 says it MUST NOT be accepted before `nbf`.
  for (const char* name : {"nbf", "iat"}) {
    Result<void> dated = check_not_future(claims, name, now_unix_s);
    if (!dated) return fail(dated.error());
  }
  return identity;
}

Result<std::optional<int64_t>> parse_token_lifetime(std::string_view text) {
  auto bad = [&] {
    return fail(ErrorCode::kInvalidArgument,
                "invalid duration '" + std::string(text) +
                    "': use e.g. '1h', '7d', '30d', '1h 30m', or 'never'");
  };
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t first = lower.find_first_not_of(' ');
  const size_t last = lower.find_last_not_of(' ');
  if (first == std::string::npos) return bad();
  lower = lower.substr(first, last - first + 1);
  if (lower == "never" || lower == "0") return std::optional<int64_t>();
  struct Unit {
    const char* name;
    int64_t seconds;
  };
  // Longest names first, so that "min" is not read as "m" followed by "in".
  constexpr Unit kUnits[] = {{"seconds", 1}, {"second", 1},   {"secs", 1},       {"sec", 1},
                             {"s", 1},       {"minutes", 60}, {"minute", 60},    {"mins", 60},
                             {"min", 60},    {"m", 60},       {"hours", 3600},   {"hour", 3600},
                             {"hrs", 3600},  {"hr", 3600},    {"h", 3600},       {"days", 86400},
                             {"day", 86400}, {"d", 86400},    {"weeks", 604800}, {"week", 604800},
                             {"w", 604800}};
  int64_t total = 0;
  size_t at = 0;
  while (at < lower.size()) {
    if (lower[at] == ' ') {
      ++at;
      continue;
    }
    size_t digits = at;
    while (digits < lower.size() && lower[digits] >= '0' && lower[digits] <= '9') ++digits;
    if (digits == at || digits - at > 9) return bad();
    const int64_t number = std::stoll(lower.substr(at, digits - at));
    at = digits;
    while (at < lower.size() && lower[at] == ' ') ++at;
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      const std::string_view name(u.name);
      if (lower.compare(at, name.size(), name) == 0 &&
          (at + name.size() == lower.size() ||
           !std::isalpha(static_cast<unsigned char>(lower[at + name.size()])))) {
        unit = &u;
        break;
      }
    }
    if (unit == nullptr) return bad();
    at += std::string_view(unit->name).size();
    total += number * unit->seconds;
    if (total > int64_t{100} * 365 * 86400) {
      return fail(ErrorCode::kInvalidArgument,
                  "--expires '" + std::string(text) + "' is over 100 years: use 'never'");
    }
  }
  if (total <= 0) return bad();
  return std::optional<int64_t>(total);
}

}  // namespace zeus::zeusd
