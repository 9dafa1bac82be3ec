#include "common/periodic_task.h"

#include <chrono>

namespace zeus {

PeriodicTask::PeriodicTask(double interval_s, std::function<void()> fn)
    : interval_s_(interval_s), fn_(std::move(fn)) {
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      cv_.wait_for(lock, std::chrono::duration<double>(interval_s_), [this] { return stopping_; });
      if (stopping_) break;
      lock.unlock();
      fn_();
      lock.lock();
    }
  });
}

PeriodicTask::~PeriodicTask() { stop(); }

void PeriodicTask::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

}  // namespace zeus
