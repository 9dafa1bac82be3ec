// CounterTimeline: a cumulative counter (a GPU's energy, J) read whenever the caller likes, while
// its driver publishes a new value only every so often (~100 ms on an H200, where every read in
// between answers the same value). A window shorter than that reads 0 J from the raw counter, and
// the next one gets the whole step: per-instruction and per-request energy would be noise.
//
// The rule (the Perseus artifact's: "instruction energy = counter value linearly interpolated at
// end minus at start"). Only changes of the value carry information. A change is placed midway
// between the last read of the old value and the first read of the new one (the publish happened
// somewhere in between) when the old value stayed put across reads for at least that gap (a
// stepped counter); at the read itself when not (a counter that changes at every read, finer than
// the reads: the last read of the old value is then a point too). The counter is taken to grow
// linearly from one point to the next.
// So at(t) is known for t between the first and the last change seen; a window [a, b] has energy
// at(b) - at(a), never 0 for a GPU that draws power, and windows that tile a stretch of time add
// up to exactly what the counter says over it.
// Online (the proxy answers a request's energy at its end, before the next publish): estimate(t)
// extrapolates past the last change at the rate of the last step, for at most two steps' time,
// then holds. Readings go in time order; a value below the last one (the counter restarted: a
// driver reload or GPU reset) starts the timeline afresh. At most max_changes changes are kept
// (the oldest go first; forget_before() drops the ones no longer needed).
// Units: whatever the caller uses (seconds, joules). Pure: no clock, no I/O. Thread-safety: none.
//
//   CounterTimeline t;
//   t.observe(0.00, 10); t.observe(0.04, 10); t.observe(0.06, 12);  // 12 published at ~0.05 s
//   t.observe(0.15, 12); t.observe(0.17, 14);                        // 14 at ~0.16 s
//   t.at(0.10);        // 12 + 2 x (0.05 / 0.11) = 12.909
//   t.estimate(0.20);  // 14 + 2 x (0.04 / 0.11) = 14.727 (past the last change)
#pragma once

#include <cstddef>
#include <deque>
#include <optional>

namespace zeus {

class CounterTimeline {
 public:
  explicit CounterTimeline(size_t max_changes = 4096);

  void observe(double time_s, double value);

  // The counter at time_s, interpolated between the changes around it; nullopt before the first
  // change or after the last one (not known yet).
  std::optional<double> at(double time_s) const;
  // at() where known; past the last change, extrapolated at the last step's rate (for at most
  // two steps' time); before two changes, the last value read. nullopt before any reading and
  // before the first change.
  std::optional<double> estimate(double time_s) const;

  // The counter's rate over its last step (value per second; nullopt before two points).
  std::optional<double> rate() const;
  // The time of the last change seen (nullopt: none yet).
  std::optional<double> last_change_s() const;
  // Drops the changes that no time >= time_s needs (keeps the last one at or before it).
  void forget_before(double time_s);
  size_t changes() const { return changes_.size(); }  // the points kept

 private:
  struct Point {
    double time_s;
    double value;
  };
  size_t max_changes_;
  std::deque<Point> changes_;
  std::optional<Point> last_read_;  // the last read (its value is the current one)
  double flat_since_s_ = 0;         // the first read of the current value
};

}  // namespace zeus
