#include "proxy/run_window.h"

#include <algorithm>
#include <utility>

namespace zeus::proxy {

RunWindow::RunWindow(size_t max_requests) : max_requests_(std::max<size_t>(1, max_requests)) {}

void RunWindow::reading(double time_s, double energy_j) {
  last_ = {time_s, energy_j};
  have_last_ = true;
  if (keep_next_) {
    kept_.push_back(last_);
    keep_next_ = false;
    if (kept_.size() > prune_at_) prune_readings();
  }
}

void RunWindow::keep_reading_around() {
  if (have_last_ && (kept_.empty() || kept_.back().time_s != last_.time_s ||
                     kept_.back().energy_j != last_.energy_j)) {
    kept_.push_back(last_);
  }
  keep_next_ = true;
}

void RunWindow::begin(RequestId id, double time_s) {
  RequestTimeline timeline;
  timeline.start_s = time_s;
  timeline.end_s = -1;  // in flight
  open_.emplace(id, std::move(timeline));
}

void RunWindow::tokens(RequestId id, double time_s, int64_t count) {
  auto it = open_.find(id);
  if (it == open_.end() || it->second.end_s >= 0 || count <= 0) return;
  RequestTimeline& timeline = it->second;
  if (timeline.first_token_s < 0) {
    timeline.first_token_s = time_s;
    keep_reading_around();
  }
  timeline.token_times_s.insert(timeline.token_times_s.end(), static_cast<size_t>(count), time_s);
  timeline.output_tokens += count;
  token_times_ += static_cast<size_t>(count);
}

void RunWindow::end(RequestId id, double time_s) {
  auto it = open_.find(id);
  if (it == open_.end() || it->second.end_s >= 0) return;
  it->second.end_s = time_s;
  keep_reading_around();
}

double RunWindow::start_s(RequestId id) const {
  auto it = open_.find(id);
  return it == open_.end() ? 0.0 : it->second.start_s;
}

void RunWindow::finish(const FinishedRequest& result) {
  auto it = open_.find(result.id);
  if (it == open_.end()) return;
  RequestTimeline timeline = std::move(it->second);
  open_.erase(it);
  if (timeline.end_s < 0) timeline.end_s = timeline.start_s;  // finished without end(): instant
  timeline.output_tokens = result.output_tokens;
  timeline.token_times_s.shrink_to_fit();
  timelines_.push_back(std::move(timeline));
  results_.push_back(result);
  if (timelines_.size() - first_ > max_requests_) drop_oldest();
}

void RunWindow::drop_oldest() {
  token_times_ -= timelines_[first_].token_times_s.size();
  timelines_[first_] = {};  // releases its token times now
  results_[first_] = {};
  ++first_;
  ++dropped_;
  if (first_ > max_requests_ / 4) {  // erased in batches: a few moves per request on average
    timelines_.erase(timelines_.begin(), timelines_.begin() + static_cast<ptrdiff_t>(first_));
    results_.erase(results_.begin(), results_.begin() + static_cast<ptrdiff_t>(first_));
    first_ = 0;
  }
}

void RunWindow::prune_readings() {
  std::vector<double> instants;
  auto add = [&](const RequestTimeline& t) {
    if (t.first_token_s >= 0) instants.push_back(t.first_token_s);
    if (t.end_s >= 0) instants.push_back(t.end_s);
  };
  for (size_t i = first_; i < timelines_.size(); ++i) add(timelines_[i]);
  for (const auto& [id, timeline] : open_) add(timeline);
  std::vector<bool> keep(kept_.size(), false);
  for (double t : instants) {
    const auto after =
        std::upper_bound(kept_.begin(), kept_.end(), t,
                         [](double x, const EnergyReading& r) { return x < r.time_s; });
    const auto index = static_cast<size_t>(after - kept_.begin());
    if (index > 0) keep[index - 1] = true;
    if (index < kept_.size()) keep[index] = true;
  }
  size_t out = 0;
  for (size_t i = 0; i < kept_.size(); ++i) {
    if (keep[i]) kept_[out++] = kept_[i];
  }
  kept_.resize(out);
  kept_.shrink_to_fit();
  prune_at_ = std::max<size_t>(64, 2 * kept_.size());
}

SteadyState RunWindow::steady_state() const {
  std::vector<EnergyReading> readings = kept_;
  if (have_last_ && (readings.empty() || readings.back().time_s < last_.time_s)) {
    readings.push_back(last_);
  }
  const std::span<const RequestTimeline> kept(timelines_.data() + first_,
                                              timelines_.size() - first_);
  return zeus::proxy::steady_state(kept, readings);
}

std::vector<FinishedRequest> RunWindow::results() const {
  return {results_.begin() + static_cast<ptrdiff_t>(first_), results_.end()};
}

RunWindow::Sizes RunWindow::sizes() const {
  return {timelines_.size() - first_, open_.size(), kept_.size(), token_times_};
}

}  // namespace zeus::proxy
