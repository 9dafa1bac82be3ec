#include "zeusd/lease_table.h"

#include <string>

#include "zeus/result.h"

namespace zeus::zeusd {

Lease* LeaseTable::find(int gpu) {
  auto it = leases_.find(gpu);
  return it == leases_.end() ? nullptr : &it->second;
}

Lease& LeaseTable::acquire(int gpu, int pid, uint32_t uid) {
  auto [it, inserted] = leases_.try_emplace(gpu);
  if (inserted) {
    it->second.gpu = gpu;
    it->second.pid = pid;
    it->second.uid = uid;
  }
  ZEUS_CHECK(it->second.pid == pid,
             "GPU " + std::to_string(gpu) + " is leased by pid " + std::to_string(it->second.pid));
  return it->second;
}

void LeaseTable::adopt(const Lease& lease) {
  const bool inserted = leases_.emplace(lease.gpu, lease).second;
  ZEUS_CHECK(inserted, "GPU " + std::to_string(lease.gpu) + " is leased already");
}

std::vector<Lease> LeaseTable::release_all_of(int pid) {
  std::vector<Lease> released;
  for (auto it = leases_.begin(); it != leases_.end();) {
    if (it->second.pid == pid) {
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
