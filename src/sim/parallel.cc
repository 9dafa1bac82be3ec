#include "sim/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
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
  auto work = [&] {
    for (int i = next++; i < n; i = next++) {
      task(i);
      ++done;
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w) pool.emplace_back(work);
  if (workers == 1 || !progress) {
    work();
  } else {
    int shown = -1;
    while (done.load() < n) {
      const int now = done.load();
      if (now != shown) progress(base + now, total);
      shown = now;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  for (std::thread& t : pool) t.join();
  if (progress) progress(base + n, total);
}

}  // namespace zeus::sim
