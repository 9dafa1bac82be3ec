#include "zeus/monitor/counter_timeline.h"

#include <algorithm>

namespace zeus {

CounterTimeline::CounterTimeline(size_t max_changes) : max_changes_(std::max<size_t>(2, max_changes)) {}

void CounterTimeline::observe(double time_s, double value) {
  if (last_read_ && value < last_read_->value) {  // restarted: what came before means nothing now
    changes_.clear();
    last_read_.reset();
  }
  if (last_read_ && value != last_read_->value) {
    // Published after the last read of the old value. A value that stayed put across reads for
    // longer than the gap to this one is a stepped counter: the publish is placed midway in the
    // gap. One that changes at every read (a counter finer than the reads) changed just now.
    const double flat_s = last_read_->time_s - flat_since_s_;
    const double gap_s = time_s - last_read_->time_s;
    const bool stepped = flat_s >= gap_s;
    const double at_s = stepped ? 0.5 * (last_read_->time_s + time_s) : time_s;
    flat_since_s_ = time_s;
    // A finer counter read the old value at the last read: that is a point of the timeline too
    // (so the first change does not leave the time before it unknown).
    if (!stepped && (changes_.empty() || changes_.back().time_s < last_read_->time_s)) {
      changes_.push_back(*last_read_);
    }
    if (changes_.empty() || at_s > changes_.back().time_s) {
      changes_.push_back({at_s, value});
      if (changes_.size() > max_changes_) changes_.pop_front();
    } else {
      changes_.back().value = value;  // two changes between the same reads: the later one holds
    }
  }
  if (!last_read_) flat_since_s_ = time_s;
  last_read_ = Point{time_s, value};
}

std::optional<double> CounterTimeline::at(double time_s) const {
  if (changes_.empty() || time_s < changes_.front().time_s || time_s > changes_.back().time_s) {
    return std::nullopt;
  }
  // The first change after time_s (there is one unless time_s is the last change's time).
  auto after = std::upper_bound(changes_.begin(), changes_.end(), time_s,
                                [](double t, const Point& p) { return t < p.time_s; });
  if (after == changes_.end()) return changes_.back().value;
  const Point& b = *after;
  const Point& a = *(after - 1);
  return a.value + (b.value - a.value) * (time_s - a.time_s) / (b.time_s - a.time_s);
}

std::optional<double> CounterTimeline::estimate(double time_s) const {
  if (std::optional<double> known = at(time_s)) return known;
  if (!last_read_ || (!changes_.empty() && time_s < changes_.front().time_s)) return std::nullopt;
  if (changes_.size() < 2) return last_read_->value;
  const Point& b = changes_.back();
  const double step_s = b.time_s - changes_[changes_.size() - 2].time_s;
  return b.value + *rate() * std::min(time_s - b.time_s, 2 * step_s);
}

std::optional<double> CounterTimeline::rate() const {
  if (changes_.size() < 2) return std::nullopt;
  const Point& b = changes_.back();
  const Point& a = changes_[changes_.size() - 2];
  return (b.value - a.value) / (b.time_s - a.time_s);
}

std::optional<double> CounterTimeline::last_change_s() const {
  if (changes_.empty()) return std::nullopt;
  return changes_.back().time_s;
}

void CounterTimeline::forget_before(double time_s) {
  while (changes_.size() > 1 && changes_[1].time_s <= time_s) changes_.pop_front();
}

}  // namespace zeus
