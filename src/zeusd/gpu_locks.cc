#include "zeusd/gpu_locks.h"

#include <algorithm>

namespace zeus::zeusd {
namespace {

thread_local std::unique_lock<std::mutex>* g_service_lock = nullptr;

}  // namespace

GpuLocks::GpuLocks(size_t gpus) {
  for (size_t i = 0; i < gpus; ++i) mutexes_.push_back(std::make_unique<std::mutex>());
}

std::vector<std::unique_lock<std::mutex>> GpuLocks::lock(std::vector<int> indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  std::vector<std::unique_lock<std::mutex>> held;
  for (int i : indices) {
    if (i >= 0 && static_cast<size_t>(i) < mutexes_.size()) held.emplace_back(*mutexes_[i]);
  }
  return held;
}

std::vector<std::unique_lock<std::mutex>> GpuLocks::lock_all() {
  std::vector<std::unique_lock<std::mutex>> held;
  for (auto& m : mutexes_) held.emplace_back(*m);
  return held;
}

ServiceLock::ServiceLock(std::mutex& table_mutex)
    : lock_(table_mutex), previous_(g_service_lock) {
  g_service_lock = &lock_;
}

ServiceLock::~ServiceLock() { g_service_lock = previous_; }

std::unique_lock<std::mutex>* registered_service_lock() { return g_service_lock; }

}  // namespace zeus::zeusd
