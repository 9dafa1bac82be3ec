#include "perseus/runtime/counter_poller.h"

#include <bit>
#include <chrono>

#include "zeus/common/log.h"

namespace zeus::pfo {
namespace {

// Points kept: a counter published every ~10 ms over a 10-minute round, or the edges of a
// round of ~100,000 instructions (16 bytes each).
constexpr size_t kMaxPoints = 1 << 17;

}  // namespace

CounterPoller::CounterPoller(Clock& clock, std::function<Result<double>()> read_j,
                             double background_s)
    : clock_(clock), read_j_(std::move(read_j)), background_s_(background_s),
      timeline_(kMaxPoints) {
  if (background_s_ > 0) thread_ = std::thread([this] { run(); });
}

CounterPoller::~CounterPoller() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

double CounterPoller::read() {
  std::lock_guard<std::mutex> lock(mu_);
  return read_locked(/*from_thread=*/false);
}

double CounterPoller::read_locked(bool from_thread) {
  const double now_s = clock_.now_s();
  if (failed_) return now_s;
  Result<double> energy_j = read_j_();
  if (!energy_j) {
    failed_ = true;
    log_warning("pfo: cannot read the GPU's energy counter (" + energy_j.error().message +
                "); instructions keep the energy estimated so far");
    return now_s;
  }
  if (!from_thread) {
    timeline_.observe(now_s, *energy_j);
    return now_s;
  }
  const bool changed = !last_polled_j_ || *last_polled_j_ != *energy_j;
  changed_bits_ = (changed_bits_ << 1) | (changed ? 1u : 0u);
  last_polled_j_ = *energy_j;
  if (std::popcount(changed_bits_) < 32) timeline_.observe(now_s, *energy_j);  // stepped
  return now_s;
}

void CounterPoller::set_active(bool active) { active_ = active; }

bool CounterPoller::failed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}

std::optional<double> CounterPoller::at(double time_s) const {
  std::lock_guard<std::mutex> lock(mu_);
  return timeline_.at(time_s);
}

std::optional<double> CounterPoller::estimate(double time_s) const {
  std::lock_guard<std::mutex> lock(mu_);
  return timeline_.estimate(time_s);
}

std::optional<double> CounterPoller::last_change_s() const {
  std::lock_guard<std::mutex> lock(mu_);
  return timeline_.last_change_s();
}

void CounterPoller::forget_before(double time_s) {
  std::lock_guard<std::mutex> lock(mu_);
  timeline_.forget_before(time_s);
}

void CounterPoller::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::duration<double>(background_s_));
    if (!stopping_ && active_) read_locked(/*from_thread=*/true);
  }
}

}  // namespace zeus::pfo
