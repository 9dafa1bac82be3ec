#include "zeusd/request_gate.h"

#include "zeusd/json_answer.h"
#include "zeusd/jwt_token.h"

namespace zeus::zeusd {
namespace {

http::HttpResponse unauthorized(const std::string& message) {
  http::HttpResponse response = error_answer(401, message);
  response.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"zeusd\"");
  return response;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::vector<std::string> AccessPolicy::enabled_names() const {
  std::vector<std::string> names;
  for (int g = 0; g < kCapabilityCount; ++g) {
    if (enabled[static_cast<size_t>(g)]) {
      names.emplace_back(capability_name(static_cast<Capability>(g)));
    }
  }
  return names;
}

Result<std::array<bool, kCapabilityCount>> parse_enabled_groups(
    const std::vector<std::string>& lists) {
  std::array<bool, kCapabilityCount> enabled{false, false, false};
  bool any = false;
  for (const std::string& list : lists) {
    size_t start = 0;
    while (start <= list.size()) {
      size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      std::string name = list.substr(start, comma - start);
      const size_t first = name.find_first_not_of(' ');
      name = first == std::string::npos ? "" : name.substr(first, name.find_last_not_of(' ') - first + 1);
      Result<Capability> group = parse_capability(name);
      if (!group) {
        return fail(ErrorCode::kInvalidArgument,
                    "--enable: unknown API group '" + name +
                        "' (the groups are gpu-control, gpu-read and cpu-read, comma-separated)");
      }
      enabled[static_cast<size_t>(*group)] = true;
      any = true;
      start = comma + 1;
    }
  }
  if (!any) {
    return fail(ErrorCode::kInvalidArgument,
                "--enable names no API group (use e.g. --enable gpu-read,cpu-read)");
  }
  return enabled;
}

std::optional<Capability> required_group(std::string_view path) {
  if (path == "/leases") return Capability::kGpuRead;
  if (path == "/lease_session" || starts_with(path, "/lease_session/"))
    return Capability::kGpuControl;
  for (std::string_view device : {std::string_view("/gpu/"), std::string_view("/cpu/")}) {
    if (!starts_with(path, device)) continue;
    const std::string_view rest = path.substr(device.size());
    const bool gpu = device == "/gpu/";
    if (!gpu) return Capability::kCpuRead;
    if (starts_with(rest, "set_") || starts_with(rest, "reset_")) return Capability::kGpuControl;
    return Capability::kGpuRead;
  }
  return std::nullopt;
}

GateDecision check_access(const http::HttpRequest& request, const AccessPolicy& policy,
                          int64_t now_unix_s) {
  GateDecision decision;
  const std::optional<Capability> group = required_group(request.path);
  if (group && !policy.is_enabled(*group)) {
    decision.refusal = error_answer(404, "API group '" + std::string(capability_name(*group)) +
                                             "' is not enabled on this server.");
    return decision;
  }
  if (!policy.auth_required() || request.path == "/discover" || request.path == "/time") {
    return decision;
  }
  const std::string* value = nullptr;
  int count = 0;
  for (const auto& [name, text] : request.headers) {
    if (name == "authorization") {
      value = &text;
      ++count;
    }
  }
  constexpr std::string_view kBearer = "Bearer ";
  if (count > 1) {
    decision.refusal = unauthorized(
        "Authentication required. Send one Authorization: Bearer <token> header, not several.");
    return decision;
  }
  if (value == nullptr || !starts_with(*value, kBearer)) {
    decision.refusal = unauthorized(
        "Authentication required. Provide an Authorization: Bearer <token> header.");
    return decision;
  }
  Result<TokenIdentity> token =
      verify_token(policy.signing_key, std::string_view(*value).substr(kBearer.size()), now_unix_s);
  if (!token) {
    decision.refusal = unauthorized(token.error().message);
    return decision;
  }
  if (group && !token->grants(*group)) {
    std::string scopes;
    for (Capability scope : token->scopes) {
      scopes += std::string(scopes.empty() ? "" : ", ") + "'" +
                std::string(capability_name(scope)) + "'";
    }
    decision.refusal = error_answer(
        403, "Token for user '" + token->subject + "' lacks required scope '" +
                 std::string(capability_name(*group)) + "'. Token scopes: [" + scopes + "]");
    return decision;
  }
  decision.token = std::move(*token);
  return decision;
}

}  // namespace zeus::zeusd
