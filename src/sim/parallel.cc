#include "sim/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace zeus::sim {

void parallel_for(int n, int threads, const std::function<void(int)>& task,
                  const std::function<void(int, int)>& progress, int base, int total) {
  if (n <= 0) return;
  int workers = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  workers = std::clamp(workers, 1, n);
  std::atomic<int> next{0};
  std::atomic<int> done{0};
  std::mutex mutex;
  std::condition_variable finished;
  auto work = [&] {
    for (int i = next++; i < n; i = next++) {
      task(i);
      if (++done == n) {
        std::lock_guard<std::mutex> lock(mutex);
        finished.notify_all();
      }
    }
  };
  std::vector<std::thread> pool;
  if (workers == 1 || !progress) {
    for (int w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
  } else {
    // Every worker computes; this thread only reports, at most every 50 ms, and returns as soon
    // as the last task is done (not at the next tick: a sweep calls this once per variant).
    for (int w = 0; w < workers; ++w) pool.emplace_back(work);
    int shown = -1;
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      const int now = done.load();
      if (now >= n) break;
      if (now != shown) {
        lock.unlock();
        progress(base + now, total);
        lock.lock();
        shown = now;
      }
      finished.wait_for(lock, std::chrono::milliseconds(50), [&] { return done.load() >= n; });
    }
  }
  for (std::thread& t : pool) t.join();
  if (progress) progress(base + n, total);
}

}  // namespace zeus::sim
