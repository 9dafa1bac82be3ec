#include "zeusd/lease_table.h"

#include <string>

#include "zeus/common/result.h"

namespace zeus::zeusd {

Lease* LeaseTable::find(int gpu) {
  auto it = leases_.find(gpu);
  return it == leases_.end() ? nullptr : &it->second;
}

std::string Lease::holder() const {
  if (!session.empty()) return "lease session " + session.substr(0, 8) + "...";
  return "pid " + std::to_string(pid) + " (uid " + std::to_string(uid) + ")";
}

Lease& LeaseTable::acquire(int gpu, int pid, uint32_t uid, const std::string& session) {
  auto [it, inserted] = leases_.try_emplace(gpu);
  if (inserted) {
    it->second.gpu = gpu;
    it->second.pid = session.empty() ? pid : 0;
    it->second.uid = uid;
    it->second.session = session;
  }
  ZEUS_CHECK(it->second.held_by(pid, session),
             "GPU " + std::to_string(gpu) + " is leased by " + it->second.holder());
  return it->second;
}

void LeaseTable::adopt(const Lease& lease) {
  const bool inserted = leases_.emplace(lease.gpu, lease).second;
  ZEUS_CHECK(inserted, "GPU " + std::to_string(lease.gpu) + " is leased already");
}

std::vector<Lease> LeaseTable::release_all_of(int pid) {
  return release_if(
      [pid](const Lease& lease) { return lease.session.empty() && lease.pid == pid; });
}

std::vector<Lease> LeaseTable::release_all_of_session(const std::string& session) {
  return release_if([&session](const Lease& lease) { return lease.session == session; });
}

std::vector<Lease> LeaseTable::release_if(const std::function<bool(const Lease&)>& matches) {
  std::vector<Lease> released;
  for (auto it = leases_.begin(); it != leases_.end();) {
    if (matches(it->second)) {
      released.push_back(it->second);
      it = leases_.erase(it);
    } else {
      ++it;
    }
  }
  return released;
}

std::vector<Lease> LeaseTable::release_all() {
  std::vector<Lease> released = list();
  leases_.clear();
  return released;
}

std::vector<Lease> LeaseTable::list() const {
  std::vector<Lease> all;
  for (const auto& [gpu, lease] : leases_) all.push_back(lease);
  return all;
}

}  // namespace zeus::zeusd
