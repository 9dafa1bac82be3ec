// ZeusdClient's lease session over TCP (src/zeusd/lease_session.h on zeusd's side): opened on the
// first change, named in the X-Zeusd-Lease-Session header of every later request, kept alive by a
// background thread's heartbeats, closed (so restored) when the client is destroyed. A process
// killed without that close stops heart-beating, and zeusd restores its changes once the session
// timeout passes. After fork() the child opens its own session (the parent's stays the parent's).
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "zeus/common/log.h"
#include "zeus/zeusd_client/zeusd_client.h"

namespace zeus {

Result<void> ZeusdClient::ensure_lease_session() {
  if (!endpoint_.is_tcp()) return ok();
  {
    std::lock_guard<std::mutex> lock(session_mutex_);
    if (!session_id_.empty() && session_owner_pid_ == getpid()) return ok();
    if (session_owner_pid_ != getpid()) {
      // A forked child: the parent's session and heartbeat thread are the parent's.
      (void)heartbeat_.release();
      session_id_.clear();
    }
  }
  stop_heartbeat();  // a session that expired under us: its thread has ended or will
  auto body = request("POST", "/lease_session");
  if (!body) {
    return fail(body.error().code,
                "cannot open a lease session with zeusd (so that this process's changes are "
                "restored when it stops): " +
                    body.error().message);
  }
  const auto answer = nlohmann::json::parse(*body, nullptr, false);
  if (answer.is_discarded() || !answer.is_object() ||
      !answer.value("session_id", nlohmann::json()).is_string() ||
      !answer.value("timeout_s", nlohmann::json()).is_number()) {
    return fail(ErrorCode::kInternal,
                "zeusd answered POST /lease_session with unexpected JSON (version mismatch?)");
  }
  const std::string id = answer["session_id"].get<std::string>();
  // Three heartbeats per timeout: one lost or late heartbeat does not end the session.
  const double interval_s = std::clamp(answer["timeout_s"].get<double>() / 3.0, 0.05, 60.0);
  std::lock_guard<std::mutex> lock(session_mutex_);
  session_id_ = id;
  session_owner_pid_ = getpid();
  stopping_ = false;
  heartbeat_ =
      std::make_unique<std::thread>([this, id, interval_s] { heartbeat_loop(id, interval_s); });
  return ok();
}

std::string ZeusdClient::lease_session() const {
  std::lock_guard<std::mutex> lock(session_mutex_);
  return session_owner_pid_ == getpid() ? session_id_ : std::string();
}

void ZeusdClient::heartbeat_loop(const std::string& id, double interval_s) {
  const auto interval = std::chrono::duration<double>(interval_s);
  std::unique_lock<std::mutex> lock(session_mutex_);
  while (!stopping_) {
    if (session_cv_.wait_for(lock, interval, [this] { return stopping_; })) break;
    lock.unlock();
    auto beat = request("POST", "/lease_session/" + id + "/heartbeat");
    lock.lock();
    if (!beat && beat.error().code == ErrorCode::kNotFound) {
      // zeusd ended the session (silent too long, or zeusd restarted): its changes are restored.
      log_warning("zeusd lease session ended by zeusd (its changes were restored): " +
                  beat.error().message);
      if (session_id_ == id) session_id_.clear();
      break;
    }
    if (!beat) log_warning("zeusd lease session heartbeat failed: " + beat.error().message);
  }
}

void ZeusdClient::stop_heartbeat() {
  std::unique_ptr<std::thread> thread;
  {
    std::lock_guard<std::mutex> lock(session_mutex_);
    if (session_owner_pid_ != getpid()) return;
    stopping_ = true;
    thread = std::move(heartbeat_);
  }
  session_cv_.notify_all();
  if (thread && thread->joinable()) thread->join();
}

void ZeusdClient::close_lease_session() {
  stop_heartbeat();
  std::string id;
  {
    std::lock_guard<std::mutex> lock(session_mutex_);
    if (session_owner_pid_ != getpid()) {
      (void)heartbeat_.release();  // a forked child's copy of the parent's thread: not ours
      return;
    }
    id.swap(session_id_);
  }
  if (id.empty()) return;
  auto closed = request("DELETE", "/lease_session/" + id);
  if (!closed && closed.error().code != ErrorCode::kNotFound) {
    log_warning(
        "zeusd: closing the lease session failed (zeusd restores its changes after the "
        "session timeout): " +
        closed.error().message);
  }
}

}  // namespace zeus
