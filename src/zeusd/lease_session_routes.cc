// ZeusdService's lease sessions (lease_session.h): the /lease_session routes' handlers (the route
// table, zeusd_routes.cc, first refuses the Unix socket, a request without a token and one without
// gpu-control), the session header on other requests, and expiry. Session leases go through
// change_gpu() and restore() like a process's.
//   POST   /lease_session                   {"session_id", "timeout_s"}              gpu-control
//   POST   /lease_session/{id}/heartbeat    {"session_id", "timeout_s"}
//   DELETE /lease_session/{id}              restores the session's changes now: {"restored": N}
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <random>
#include <nlohmann/json.hpp>

#include "zeus/common/log.h"
#include "zeusd/json_answer.h"
#include "zeusd/zeusd_service.h"

namespace zeus::zeusd {
namespace {

using nlohmann::json;

// 128 random bits as 32 hex digits (std::random_device reads the kernel's generator).
std::string new_session_id() {
  std::random_device device;
  std::string id;
  for (int i = 0; i < 4; ++i) {
    std::array<char, 9> word{};
    std::snprintf(word.data(), word.size(), "%08x", static_cast<unsigned>(device()));
    id += word.data();
  }
  return id;
}

const std::string* header_value(const HttpRequest& request, const std::string& lower_name) {
  for (const auto& [name, value] : request.headers) {
    if (name == lower_name) return &value;
  }
  return nullptr;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

int64_t ZeusdService::monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::optional<HttpResponse> ZeusdService::attach_session(const HttpRequest& request, Peer& peer) {
  const std::string* id = header_value(request, lower(kLeaseSessionHeader));
  if (id == nullptr) return std::nullopt;
  if (peer.unix_socket) {
    return message_answer(
        400, std::string(kLeaseSessionHeader) +
                 " is for clients over TCP: on the Unix socket zeusd ties your changes "
                 "to your process already (drop the header)");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const LeaseSession* session = sessions_.find(*id);
  if (session == nullptr || !peer.token || session->subject != peer.token->subject) {
    return message_answer(
        404, "lease session '" + id->substr(0, 64) +
                 "' is unknown or expired (silent for more than " +
                 std::to_string(sessions_.timeout_s()) +
                 " s: its changes were restored); open a new one with POST /lease_session");
  }
  sessions_.touch(*id, monotonic_ms());
  peer.lease_session = *id;
  return std::nullopt;
}

HttpResponse ZeusdService::open_session(const Peer& peer) {
  ServiceLock lock(mutex_);
  if (sessions_.size() >= kMaxLeaseSessions) {
    return message_answer(503, std::to_string(kMaxLeaseSessions) +
                                   " lease sessions are open: close unused ones (DELETE "
                                   "/lease_session/{id}) or wait for silent ones to expire");
  }
  const LeaseSession& session =
      sessions_.open(new_session_id(), peer.token->subject, monotonic_ms());
  log_info("zeusd: " + peer.description() + " (token subject " + session.subject +
           ") opened lease session " + session.id.substr(0, 8) + "...");
  return json_answer(200, json{{"session_id", session.id}, {"timeout_s", sessions_.timeout_s()}});
}

std::optional<HttpResponse> ZeusdService::unknown_session(const Peer& peer,
                                                          const std::string& id) const {
  const LeaseSession* session = sessions_.find(id);
  if (session != nullptr && session->subject == peer.token->subject) return std::nullopt;
  return message_answer(404, "no lease session '" + id.substr(0, 64) +
                                 "' of this token's subject (closed, or expired after " +
                                 std::to_string(sessions_.timeout_s()) + " s of silence)");
}

HttpResponse ZeusdService::heartbeat_session(const Peer& peer, const std::string& id) {
  ServiceLock lock(mutex_);
  if (auto unknown = unknown_session(peer, id)) return std::move(*unknown);
  sessions_.touch(id, monotonic_ms());
  return json_answer(200, json{{"session_id", id}, {"timeout_s", sessions_.timeout_s()}});
}

HttpResponse ZeusdService::close_session(const Peer& peer, const std::string& id) {
  const auto gpus_held = gpu_locks_.lock_all();  // ending it restores its GPUs (gpu_locks.h)
  ServiceLock lock(mutex_);
  if (auto unknown = unknown_session(peer, id)) return std::move(*unknown);
  sessions_.close(id);
  const size_t restored = end_session(id, "closed by its client");
  return json_answer(200, json{{"session_id", id}, {"restored", restored}});
}

size_t ZeusdService::end_session(const std::string& id, const std::string& why) {
  const std::vector<Lease> released = leases_.release_all_of_session(id);
  for (const Lease& lease : released) {
    restore(lease, "lease session " + id.substr(0, 8) + "... " + why);
  }
  if (!released.empty()) record_leases_or_log();
  return released.size();
}

void ZeusdService::expire_sessions(int64_t now_ms) {
  const auto gpus_held = gpu_locks_.lock_all();
  ServiceLock lock(mutex_);
  for (const std::string& id : sessions_.take_expired(now_ms)) {
    log_info("zeusd: lease session " + id.substr(0, 8) + "... expired after " +
             std::to_string(sessions_.timeout_s()) + " s of silence");
    end_session(id, "went silent");
  }
}

}  // namespace zeus::zeusd
