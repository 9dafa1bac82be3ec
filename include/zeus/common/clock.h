// Clock: where Zeus gets time, so that tests and the simulator can run on simulated time.
//
// Units: seconds as doubles. now_s() is monotonic (an arbitrary origin); unix_time_s() is wall
// time since the Unix epoch, used only for log timestamps.
// Thread-safety: SystemClock and FakeClock may be used from several threads at once.
//
//   zeus::FakeClock clock;             // starts at t = 0
//   clock.advance_s(1.5);              // now_s() == 1.5
//   clock.sleep_until_s(3.0);          // returns at once, now_s() == 3.0
#pragma once

#include <cstdint>

#include <atomic>

namespace zeus {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic seconds from an arbitrary origin.
  virtual double now_s() const = 0;
  // Wall-clock seconds since the Unix epoch.
  virtual double unix_time_s() const = 0;
  // Blocks until now_s() >= t_s (returns at once if already past).
  virtual void sleep_until_s(double t_s) = 0;
  void sleep_for_s(double duration_s) { sleep_until_s(now_s() + duration_s); }
};

// Wall-clock milliseconds since the Unix epoch (zeusd's wire timestamps).
uint64_t unix_time_ms();

// The real clock: std::chrono::steady_clock and system_clock.
class SystemClock final : public Clock {
 public:
  double now_s() const override;
  double unix_time_s() const override;
  void sleep_until_s(double t_s) override;
};

// Simulated time that moves only when told to. sleep_until_s() jumps time forward instead of
// blocking, so code that sleeps runs instantly and deterministically.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(double start_s = 0.0, double unix_origin_s = 1.7e9)
      : now_s_(start_s), unix_origin_s_(unix_origin_s) {}
  double now_s() const override { return now_s_.load(); }
  double unix_time_s() const override { return unix_origin_s_ + now_s_.load(); }
  void sleep_until_s(double t_s) override;
  // Moves time forward by duration_s (>= 0).
  void advance_s(double duration_s);
  // Sets time to t_s; time never goes backwards (a smaller t_s is ignored).
  void set_s(double t_s);

 private:
  std::atomic<double> now_s_;
  double unix_origin_s_;
};

}  // namespace zeus
