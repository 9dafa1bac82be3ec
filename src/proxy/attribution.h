// EnergyLedger: splits the energy measured on the GPUs among the requests a server runs at the
// same time (the attribution core of `zeus proxy`). Pure: no clock, no I/O; the caller reports
// what happened with times in seconds on one clock, in time order.
//
// The rule. Readings of the energy counter (J, summed over the GPUs) cut time into intervals.
// The part of an interval during which no request was in flight is idle energy, never spread
// (power is taken as constant within an interval). The rest is split among the requests in flight
// in it, in proportion to their weights:
//   - a request whose tokens are seen as they come (a stream) weighs the tokens it produced in the
//     interval, plus its prompt tokens (times prompt_token_weight) in the interval of its first
//     token when the prompt's length is known; if usage says the answer had more (or fewer) tokens
//     than the chunks counted, its chunks are scaled to that total;
//   - a request whose tokens are known only at its end (not streamed) weighs its tokens spread
//     evenly over its lifetime; before its end, the mean weight per second of the others;
//   - when no weight is known (or all are zero), requests share by their time in the interval.
// Shares are settled when a request ends (the reading at its end closes its last interval): it
// takes its part of what is left of each interval, with what is known then; the last request of
// an interval takes what remains. So attributed + idle + pending = measured, exactly (up to float
// rounding), whatever the estimates were.
// Cost: sample() is linear in the requests in flight; a request's end and settlement are linear
// in the intervals it lived through (each interval keeps the sums its split needs, updated when
// a weight becomes known), not in the requests it shared them with.
// Thread-safety: none (the proxy holds it under a mutex).
//
//   EnergyLedger ledger;
//   ledger.sample(0, 100); ledger.start(1, 0.5, true); ledger.tokens(1, 0.8, 1);
//   ledger.end(1, 1); ledger.sample(1, 150);  // take_finished(): request 1 got 25 J, idle 25 J
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace zeus::proxy {

using RequestId = uint64_t;

struct AttributionOptions {
  double prompt_token_weight = 1.0;  // a prompt token's weight against an output token's
};

// What a finished request was charged.
struct RequestEnergy {
  RequestId id = 0;
  double energy_j = 0;
  int64_t output_tokens = 0;   // usage's count when given, else the chunks counted
  int64_t prompt_tokens = -1;  // -1: unknown
  // How its shares were weighed: "tokens" (every weight known), "equal" (by time: none known),
  // "mixed" (some weights estimated), "none" (it ended before the first reading).
  std::string method;
};

class EnergyLedger {
 public:
  explicit EnergyLedger(AttributionOptions options = {}) : options_(options) {}

  // A request began (its first byte in). `streamed`: its tokens will be reported as they come.
  void start(RequestId id, double time_s, bool streamed);
  // `count` tokens of request `id` were seen at time_s (a stream's chunks); they count in the
  // interval the next sample() closes (report them in time order, as they come).
  void tokens(RequestId id, double time_s, int64_t count);
  // The counts from the answer's usage, when it gives them (any time before the request's end).
  void prompt_tokens(RequestId id, int64_t count);
  void output_tokens(RequestId id, int64_t count);
  // The request ended (its last byte out). Its energy is settled at the next sample().
  void end(RequestId id, double time_s);
  // A reading of the energy counter (J, monotone) at time_s (not before the previous one). A
  // counter that went backwards (reset) counts as zero energy for that interval.
  void sample(double time_s, double energy_j);

  // The requests settled since the last call.
  std::vector<RequestEnergy> take_finished();

  double measured_j() const { return measured_j_; }      // since the first reading
  double idle_j() const { return idle_j_; }              // with no request in flight
  double attributed_j() const { return attributed_j_; }  // settled on finished requests
  double pending_j() const { return measured_j_ - idle_j_ - attributed_j_; }  // not yet settled
  size_t in_flight() const { return in_flight_; }
  // What it holds (bounded by the requests in flight and the intervals they lived through).
  size_t requests_held() const { return requests_.size(); }
  size_t intervals_held() const { return intervals_.size(); }

 private:
  struct Part {
    RequestId id;
    double overlap_s;
    double tokens;          // reported in the interval
    bool first_token_here;  // its prefill ended in the interval
    bool taken = false;
    double weight = -1;  // known_weight() as of the last change; negative: not known yet
  };
  // An interval not yet fully shared, with the sums over its untaken parts that a split needs.
  struct Interval {
    double remaining_j;
    size_t untaken = 0;
    std::vector<Part> parts;
    double known_sum = 0;          // of the known weights
    double known_overlap_s = 0;    // of the parts with a known weight
    double unknown_overlap_s = 0;  // of the parts without
    double total_overlap_s = 0;
    size_t unknown = 0;   // parts without a known weight
    size_t positive = 0;  // parts with a known weight > 0 (known_sum is 0 when none)
    void count(const Part& part, double sign);  // adds (+1) or removes (-1) an untaken part
  };
  struct Request {
    double start_s;
    double end_s = -1;  // -1: in flight
    bool streamed;
    bool seen_token = false;
    int64_t counted = 0;
    int64_t prompt = -1;
    int64_t output = -1;
    double tokens_since_sample = 0;
    bool first_token_since_sample = false;
    std::vector<std::pair<uint64_t, uint32_t>> parts;  // (interval sequence number, part index)
    double energy_j = 0;
    int shares_known = 0, shares_equal = 0, shares_mixed = 0;
  };

  void settle(Request& request, RequestEnergy* out);
  // The weight of `part` of `request` now, or a negative value when it is not known yet.
  double known_weight(const Part& part, const Request& request) const;
  // Re-weighs the untaken parts of `request` after what is known of it changed.
  void reweigh(Request& request);

  AttributionOptions options_;
  bool sampled_ = false;
  double last_time_s_ = 0;
  double last_energy_j_ = 0;
  double measured_j_ = 0, idle_j_ = 0, attributed_j_ = 0;
  size_t in_flight_ = 0;
  double busy_since_s_ = 0;  // while in_flight_ > 0
  double busy_s_ = 0;        // busy time in the current interval
  std::unordered_map<RequestId, Request> requests_;
  std::deque<Interval> intervals_;  // pending, intervals_[i] has sequence number first_seq_ + i
  uint64_t first_seq_ = 0;
  std::vector<RequestEnergy> finished_;
};

}  // namespace zeus::proxy
