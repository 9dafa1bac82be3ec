#include "zeusd/lease_session.h"

#include <cmath>

#include "zeus/common/result.h"

namespace zeus::zeusd {

bool session_expired(int64_t last_seen_ms, int64_t now_ms, int64_t timeout_ms) {
  return now_ms > last_seen_ms && now_ms - last_seen_ms > timeout_ms;
}

LeaseSessions::LeaseSessions(double timeout_s)
    : timeout_ms_(static_cast<int64_t>(std::llround(timeout_s * 1000.0))) {
  ZEUS_CHECK(timeout_s > 0, "a lease session timeout must be positive");
}

const LeaseSession& LeaseSessions::open(const std::string& id, const std::string& subject,
                                        int64_t now_ms) {
  LeaseSession& session = sessions_[id];
  session = LeaseSession{id, subject, now_ms, now_ms};
  return session;
}

bool LeaseSessions::touch(const std::string& id, int64_t now_ms) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return false;
  if (now_ms > it->second.last_seen_ms) it->second.last_seen_ms = now_ms;
  return true;
}

const LeaseSession* LeaseSessions::find(const std::string& id) const {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : &it->second;
}

bool LeaseSessions::close(const std::string& id) { return sessions_.erase(id) > 0; }

std::vector<std::string> LeaseSessions::take_expired(int64_t now_ms) {
  std::vector<std::string> expired;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (session_expired(it->second.last_seen_ms, now_ms, timeout_ms_)) {
      expired.push_back(it->first);
      it = sessions_.erase(it);
    } else {
      ++it;
    }
  }
  return expired;
}

std::vector<LeaseSession> LeaseSessions::list() const {
  std::vector<LeaseSession> all;
  for (const auto& [id, session] : sessions_) all.push_back(session);
  return all;
}

}  // namespace zeus::zeusd
