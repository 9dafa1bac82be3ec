// Runs independent simulation tasks (one per seed) on several threads, reporting progress on the
// caller's thread. Each task writes only its own output slot, so results do not depend on the
// number of threads or their timing.
#pragma once

#include <functional>

namespace zeus::sim {

// Calls task(i) for i in [0, n) on `threads` threads (0: hardware_concurrency; at most n), and
// progress(base + done, total) on the caller's thread as tasks finish (progress may be empty).
void parallel_for(int n, int threads, const std::function<void(int)>& task,
                  const std::function<void(int, int)>& progress, int base, int total);

}  // namespace zeus::sim
