// zeusd's locks, so that one slow GPU command (a command override: a wrapper script that may
// take a minute) stalls nobody but the next change of the same GPU:
// - GpuLocks: one lock per GPU, held by whoever changes or restores that GPU for the whole
//   change (a GPU's settings are changed one at a time, as the vendors' tools expect);
// - the service's table lock (leases, sessions, persistent changes), taken after the GPU locks
//   and held around the tables and the driver's fast calls. A ServiceLock registers it for its
//   thread, and a command override runs without_service_lock(): the thread lets go of the table
//   lock while the command runs, keeping its GPUs' locks, so /discover, /leases, reads and other
//   GPUs go on. Only a thread that holds the GPU locks of every GPU it changes may register it.
// Lock order: GPU locks in index order, then the table lock.
// Thread-safety: GpuLocks may be used from any thread; a ServiceLock belongs to its thread.
//
//   auto held = gpu_locks.lock({index});
//   ServiceLock lock(table_mutex);
//   ... change_gpu(...) ...   // an override inside: without_service_lock([&] { run(); })
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace zeus::zeusd {

class GpuLocks {
 public:
  explicit GpuLocks(size_t gpus);
  // Locks the GPUs `indices` names (in index order; repeated and unknown indices are skipped).
  std::vector<std::unique_lock<std::mutex>> lock(std::vector<int> indices);
  std::vector<std::unique_lock<std::mutex>> lock_all();

 private:
  std::vector<std::unique_ptr<std::mutex>> mutexes_;
};

class ServiceLock {
 public:
  explicit ServiceLock(std::mutex& table_mutex);
  ~ServiceLock();
  ServiceLock(const ServiceLock&) = delete;
  ServiceLock& operator=(const ServiceLock&) = delete;

 private:
  std::unique_lock<std::mutex> lock_;
  std::unique_lock<std::mutex>* previous_;
};

// The table lock this thread registered, or nullptr.
std::unique_lock<std::mutex>* registered_service_lock();

// Runs `work` with this thread's registered table lock let go (taken again after); as it is when
// the thread registered none.
template <typename Work>
auto without_service_lock(Work&& work) -> decltype(work()) {
  std::unique_lock<std::mutex>* held = registered_service_lock();
  if (held == nullptr || !held->owns_lock()) return work();
  held->unlock();
  struct Relock {
    std::unique_lock<std::mutex>* held;
    ~Relock() { held->lock(); }
  } relock{held};
  return work();
}

}  // namespace zeus::zeusd
