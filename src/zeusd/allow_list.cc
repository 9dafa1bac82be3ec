#include "zeusd/allow_list.h"

#include <grp.h>
#include <pwd.h>

#include <algorithm>
#include <optional>

namespace zeus::zeusd {
namespace {

std::optional<uint32_t> parse_id(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  uint32_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  return value;
}

Result<uint32_t> resolve_user(const std::string& name) {
  if (auto id = parse_id(name)) return *id;
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found) {
    return fail(ErrorCode::kNotFound,
                "allow-list user '" + name + "' does not exist on this machine");
  }
  return static_cast<uint32_t>(found->pw_uid);
}

Result<uint32_t> resolve_group(const std::string& name) {
  if (auto id = parse_id(name)) return *id;
  std::vector<char> buffer(65536);
  group entry{};
  group* found = nullptr;
  if (getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found) {
    return fail(ErrorCode::kNotFound,
                "allow-list group '@" + name + "' does not exist on this machine");
  }
  return static_cast<uint32_t>(found->gr_gid);
}

}  // namespace

bool TokenIdentity::grants(Capability capability) const {
  return std::find(scopes.begin(), scopes.end(), capability) != scopes.end();
}

std::string Peer::description() const {
  // Over TCP with a token, the uid says nothing (a remote peer is served as nobody).
  std::string text = token ? "token user '" + token->subject + "'" : "";
  if (unix_socket || !token) {
    text += (text.empty() ? "" : " ") + ("uid " + std::to_string(uid) + " (" + user_name(uid) + ")");
  }
  text += pid >= 0 ? " pid " + std::to_string(pid) : " over TCP";
  return text;
}

Result<void> AllowList::add(std::string_view spec) {
  const size_t equals = spec.find('=');
  if (equals == std::string_view::npos) {
    return fail(ErrorCode::kInvalidArgument, "allow-list entry '" + std::string(spec) +
                                                 "' is not <capability>=<user>,@<group>,...");
  }
  auto capability = parse_capability(spec.substr(0, equals));
  if (!capability) return fail(capability.error());
  Entries& entries = entries_[static_cast<size_t>(*capability)];
  std::string_view list = spec.substr(equals + 1);
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    const std::string item(list.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) {
      return fail(ErrorCode::kInvalidArgument,
                  "allow-list entry '" + std::string(spec) + "' has an empty user or group");
    }
    if (item == "*") {
      entries.anyone = true;
    } else if (item.front() == '@') {
      auto gid = resolve_group(item.substr(1));
      if (!gid) return fail(gid.error());
      entries.gids.insert(*gid);
    } else {
      auto uid = resolve_user(item);
      if (!uid) return fail(uid.error());
      entries.uids.insert(*uid);
    }
    if (std::find(entries.names.begin(), entries.names.end(), item) == entries.names.end()) {
      entries.names.push_back(item);
    }
  }
  return ok();
}

bool AllowList::allows(Capability capability, const Peer& peer) const {
  if (peer.uid == 0) return true;
  const Entries& entries = entries_[static_cast<size_t>(capability)];
  if (entries.anyone || entries.uids.count(peer.uid)) return true;
  if (entries.gids.count(peer.gid)) return true;
  for (uint32_t gid : peer.groups) {
    if (entries.gids.count(gid)) return true;
  }
  return false;
}

std::string AllowList::describe(Capability capability) const {
  const Entries& entries = entries_[static_cast<size_t>(capability)];
  if (entries.names.empty()) return "root only";
  std::string text = "root";
  for (const auto& name : entries.names) text += ", " + name;
  return text;
}

std::string AllowList::refusal(Capability capability, const Peer& peer) const {
  if (!peer.unix_socket && peer.token) {
    if (peer.token->grants(capability)) return "";
    return "the token of '" + peer.token->subject + "' lacks the scope '" +
           std::string(capability_name(capability)) + "'";
  }
  if (capability == Capability::kGpuControl && !peer.unix_socket) {
    return "zeusd's TCP port is read-only without tokens: changes need zeusd's Unix socket (the "
           "lease is tied to the client's process, which TCP cannot identify), or a zeusd started "
           "with --signing-key-path and a token with the gpu-control scope";
  }
  if (allows(capability, peer)) return "";
  const std::string name(capability_name(capability));
  return peer.description() + " is not on zeusd's " + name +
         " allow-list (the operator adds it with: zeusd serve --allow " + name + "=" +
         user_name(peer.uid) + ")";
}

}  // namespace zeus::zeusd
