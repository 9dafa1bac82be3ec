// CounterPoller: a GPU's energy counter read into a CounterTimeline
// (zeus/monitor/counter_timeline.h) for
// the Perseus profiler: at the caller's edges (read(), at every instruction's begin and end) and,
// while active (a step runs), by a background thread every background_s. The thread is what
// places a stepped counter's publishes to within a few ms when the edges are sparse (a loaded
// machine, long instructions); it feeds the timeline only while the counter looks stepped (some
// of its last 32 reads repeated a value), since a counter that changes at every read is exact at
// the edges and would only fill the timeline.
// Thread-safety: every method from any thread (one mutex; the counter is read under it, so reads
// reach the timeline in time order). Failure: a read that fails is logged once, and the poller
// reads no more (failed()).
//
//   CounterPoller poller(clock, [gpu] { ... J ... }, 0.005);
//   poller.set_active(true);
//   double t0 = poller.read();  run();  double t1 = poller.read();
//   ... poller.at(t1) - poller.at(t0) once poller.last_change_s() >= t1
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "zeus/common/clock.h"
#include "zeus/common/result.h"
#include "zeus/monitor/counter_timeline.h"

namespace zeus::pfo {

class CounterPoller {
 public:
  // background_s <= 0: no thread (only read() feeds the timeline). `clock` must outlive it.
  CounterPoller(Clock& clock, std::function<Result<double>()> read_j, double background_s);
  ~CounterPoller();
  CounterPoller(const CounterPoller&) = delete;
  CounterPoller& operator=(const CounterPoller&) = delete;

  // Reads the counter now; answers the time of the read (on the clock).
  double read();
  void set_active(bool active);
  bool failed() const;

  std::optional<double> at(double time_s) const;
  std::optional<double> estimate(double time_s) const;
  std::optional<double> last_change_s() const;
  void forget_before(double time_s);

 private:
  double read_locked(bool from_thread);
  void run();

  Clock& clock_;
  std::function<Result<double>()> read_j_;
  const double background_s_;
  mutable std::mutex mu_;
  CounterTimeline timeline_;
  bool failed_ = false;
  // The background reads: the last value, and which of the last 32 changed it (a bit each).
  std::optional<double> last_polled_j_;
  uint32_t changed_bits_ = 0xffffffffu;
  std::atomic<bool> active_{false};
  bool stopping_ = false;
  std::condition_variable wake_;
  std::thread thread_;
};

}  // namespace zeus::pfo
