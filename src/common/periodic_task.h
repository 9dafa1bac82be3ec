// PeriodicTask: a thread that runs `fn` every `interval_s` until stopped — the background sweeps
// of the project's servers (expired trials, idle jobs, store health). stop() (or the destructor)
// wakes the thread at once and joins it; a run in progress finishes first.
// Thread-safety: stop() from any thread, idempotent.
//
//   PeriodicTask sweeper(1.0, [&] { jobs.sweep(); });
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace zeus {

class PeriodicTask {
 public:
  PeriodicTask(double interval_s, std::function<void()> fn);
  ~PeriodicTask();
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

  void stop();

 private:
  double interval_s_;
  std::function<void()> fn_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace zeus
