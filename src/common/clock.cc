#include "zeus/common/clock.h"

#include <chrono>
#include <thread>

namespace zeus {

double SystemClock::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double SystemClock::unix_time_s() const {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void SystemClock::sleep_until_s(double t_s) {
  const double remaining_s = t_s - now_s();
  if (remaining_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(remaining_s));
}

void FakeClock::sleep_until_s(double t_s) { set_s(t_s); }

void FakeClock::advance_s(double duration_s) {
  if (duration_s <= 0) return;
  double current = now_s_.load();
  while (!now_s_.compare_exchange_weak(current, current + duration_s)) {
  }
}

void FakeClock::set_s(double t_s) {
  double current = now_s_.load();
  while (t_s > current && !now_s_.compare_exchange_weak(current, t_s)) {
  }
}

uint64_t unix_time_ms() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace zeus
