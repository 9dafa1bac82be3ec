// RunWindow: the same steady-state figures as every request and reading kept while the run is no
// longer than the bound; bounded sizes and exact figures over the last requests on a long run.
#include "proxy/run_window.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <span>
#include <vector>

namespace zeus::proxy {
namespace {

constexpr int kConcurrency = 8;
constexpr int kMaxTokens = 30;

// A batched server driven step by step, reported to a RunWindow and an EnergyLedger as the
// proxy's meter does, with every timeline and reading also kept whole (the meter before the
// bound) for reference.
class SimulatedRun {
 public:
  explicit SimulatedRun(size_t window) : window_(window) { read(); }

  RunWindow window_;
  EnergyLedger ledger_;
  std::vector<RequestTimeline> all_;     // every finished request, in the order they finished
  std::vector<EnergyReading> readings_;  // every reading
  RunWindow::Sizes largest_;
  size_t largest_intervals_ = 0, largest_ledger_requests_ = 0;

  // Runs until `requests` have finished.
  void run(int requests) {
    while (finished_ < requests) {
      while (static_cast<int>(open_.size()) < kConcurrency && started_ < requests) begin();
      step();
    }
  }

 private:
  struct Open {
    RequestTimeline timeline;
    int prefill_steps, target_tokens, age = 0;
  };

  void begin() {
    const RequestId id = next_id_++;
    ++started_;
    Open request;
    request.timeline.start_s = t_;
    request.prefill_steps = 1 + static_cast<int>(rng_() % 5);
    request.target_tokens = 5 + static_cast<int>(rng_() % (kMaxTokens - 4));
    open_.emplace(id, request);
    ledger_.start(id, t_, true);
    window_.begin(id, t_);
  }

  void step() {
    t_ += 0.01;
    energy_ += (100.0 + 20.0 * static_cast<double>(open_.size())) * 0.01;
    std::vector<RequestId> done;
    for (auto& [id, request] : open_) {
      if (++request.age <= request.prefill_steps) continue;
      if (request.timeline.first_token_s < 0) request.timeline.first_token_s = t_;
      request.timeline.token_times_s.push_back(t_);
      ledger_.tokens(id, t_, 1);
      window_.tokens(id, t_, 1);
      if (static_cast<int>(request.timeline.token_times_s.size()) == request.target_tokens) {
        done.push_back(id);
      }
    }
    for (RequestId id : done) end(id);
    if (++steps_ % 10 == 0) read();
  }

  void end(RequestId id) {
    ledger_.end(id, t_);
    window_.end(id, t_);
    read();  // the meter reads the counters at every end
    RequestTimeline timeline = std::move(open_.at(id).timeline);
    open_.erase(id);
    timeline.end_s = t_;
    for (const RequestEnergy& r : ledger_.take_finished()) {
      timeline.output_tokens = r.output_tokens;
      window_.finish({r.id, "m", r.output_tokens, r.energy_j, r.method});
    }
    all_.push_back(std::move(timeline));
    ++finished_;
    const RunWindow::Sizes now = window_.sizes();
    largest_.requests = std::max(largest_.requests, now.requests);
    largest_.in_flight = std::max(largest_.in_flight, now.in_flight);
    largest_.readings = std::max(largest_.readings, now.readings);
    largest_.token_times = std::max(largest_.token_times, now.token_times);
    largest_intervals_ = std::max(largest_intervals_, ledger_.intervals_held());
    largest_ledger_requests_ = std::max(largest_ledger_requests_, ledger_.requests_held());
  }

  void read() {
    readings_.push_back({t_, energy_});
    ledger_.sample(t_, energy_);
    window_.reading(t_, energy_);
  }

  std::mt19937 rng_{42};
  std::map<RequestId, Open> open_;
  RequestId next_id_ = 1;
  int started_ = 0, finished_ = 0;
  int64_t steps_ = 0;
  double t_ = 0, energy_ = 0;
};

void expect_same(const SteadyState& got, const SteadyState& expected) {
  ASSERT_EQ(got.found, expected.found) << got.why << " / " << expected.why;
  EXPECT_EQ(got.why, expected.why);
  EXPECT_EQ(got.max_concurrency, expected.max_concurrency);
  EXPECT_EQ(got.start_s, expected.start_s);
  EXPECT_EQ(got.end_s, expected.end_s);
  EXPECT_EQ(got.energy_j, expected.energy_j);  // exact: the same readings around each end
  EXPECT_EQ(got.tokens, expected.tokens);
  EXPECT_EQ(got.j_per_token, expected.j_per_token);
  EXPECT_EQ(got.request_energy_j, expected.request_energy_j);
  EXPECT_EQ(got.request_window_tokens, expected.request_window_tokens);
}

TEST(RunWindowTest, RunNoLongerThanTheBoundGivesTheFiguresOfEveryReading) {
  SimulatedRun run(1000);
  run.run(300);
  const SteadyState expected = steady_state(run.all_, run.readings_);
  ASSERT_TRUE(expected.found) << expected.why;
  expect_same(run.window_.steady_state(), expected);
  EXPECT_EQ(run.window_.results().size(), 300u);
  EXPECT_EQ(run.window_.dropped(), 0);
  EXPECT_LT(run.window_.sizes().readings, run.readings_.size());  // only those around instants
}

TEST(RunWindowTest, LongRunStaysWithinItsBoundsAndCoversTheLastRequests) {
  constexpr size_t kWindow = 500;
  constexpr int kRequests = 20000;
  SimulatedRun run(kWindow);
  run.run(kRequests);

  EXPECT_EQ(run.largest_.requests, kWindow);
  EXPECT_LE(run.largest_.in_flight, static_cast<size_t>(kConcurrency));
  // At most four readings per kept or in-flight request, twice that before a prune.
  EXPECT_LE(run.largest_.readings, 8 * (kWindow + kConcurrency) + 64);
  EXPECT_LE(run.largest_.token_times, (kWindow + kConcurrency) * kMaxTokens);
  EXPECT_LE(run.largest_ledger_requests_, static_cast<size_t>(kConcurrency));
  // The ledger holds the intervals of one request's life (a few dozen here), not the run's.
  EXPECT_LE(run.largest_intervals_, 64u);
  EXPECT_GT(run.readings_.size(), 20 * kWindow);  // the run had far more than it keeps

  EXPECT_EQ(run.window_.dropped(), kRequests - static_cast<int64_t>(kWindow));
  const std::vector<FinishedRequest> results = run.window_.results();
  ASSERT_EQ(results.size(), kWindow);
  EXPECT_EQ(results.back().output_tokens, run.all_.back().output_tokens);

  // The method over the last kWindow requests, with every reading: the same figures.
  const std::span<const RequestTimeline> last(run.all_.data() + (kRequests - kWindow), kWindow);
  const SteadyState expected = steady_state(last, run.readings_);
  ASSERT_TRUE(expected.found) << expected.why;
  expect_same(run.window_.steady_state(), expected);
}

TEST(RunWindowTest, UnknownIdsAndLateTokensAreIgnored) {
  RunWindow window(4);
  window.reading(0, 0);
  window.tokens(7, 0.1, 3);  // never begun
  window.end(7, 0.2);
  window.finish({7, "m", 3, 1.0, "tokens"});
  EXPECT_EQ(window.sizes().in_flight, 0u);
  EXPECT_EQ(window.sizes().requests, 0u);
  window.begin(1, 0.3);
  window.end(1, 0.4);
  window.tokens(1, 0.5, 5);  // after its end
  EXPECT_EQ(window.sizes().token_times, 0u);
  window.reading(0.5, 10);
  window.finish({1, "m", 0, 10, "equal"});
  EXPECT_EQ(window.sizes().requests, 1u);
  EXPECT_EQ(window.sizes().in_flight, 0u);
  EXPECT_FALSE(window.steady_state().found);  // one request: too few
}

}  // namespace
}  // namespace zeus::proxy
