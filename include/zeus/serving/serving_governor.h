// The SLO-aware GPU clock governor for LLM serving: from what a proxy in front of an inference
// server sees (requests in flight and waiting, prompt tokens arriving, the TTFT and TPOT of
// requests that just produced tokens) it chooses the lowest locked SM clock at which the
// latency SLOs still hold, using a serving profile (how one iteration's time and power depend on
// the clock and the batch: measured by calibration, or the parametric model) corrected online by
// the latencies it observes.
//
// The decision, each control period (docs/proxy.md, "Saving energy"):
//   1. Blind (no request seen yet, or readings missing): the maximum clock.
//   2. Predict, for each clock, the TPOT of the running batch (a mean over an answer's length:
//      one decode iteration plus the queued prompts spread over the answers' mean length,
//      stretched by the prefill work arriving, at most one prefill chunk per iteration) and the TTFT of a
//      typical prompt (the prompt tokens queued ahead of it and its own, at the prefill
//      throughput of chunked iterations), for the load smoothed over load_tau_s (one period's arrivals are
//      too noisy to steer by), each times a correction: the measured quantile of the window over
//      the same quantile of the predictions made over that window at the clocks then in force
//      (so a burst's tail is compared with the burst's predictions, not with a quiet moment's;
//      the target is the measured quantile scaled by how the profile says latency changes with
//      the clock).
//      The target is the lowest clock whose corrected predictions sit under `headroom` x each SLO
//      and whose uncorrected TPOT and TTFT meet their SLOs (the headroom discounts the
//      correction's tail; a queue of long prompts behind short answers has none, nor has a queue
//      of prompts still to prefill) (for the queue, prompt rate and prompt size, the larger of
//      smoothed and current: a burst raises at once). The headroom in use is the error budget's
//      (GovernorOptions::headroom) times a factor integrating the run's whole budget: spent
//      beyond it the factor falls (to 0.3, in about 30 s per budget overspent), within it the
//      factor recovers to 1. Capacity guard: never a clock whose prefill throughput (a full
//      chunk beside each decode iteration of the running batch) falls below the sustained
//      prompt arrival rate, whatever the SLOs (a queue that grows without bound breaks them
//      later, when no clock can catch up). Sustained: smoothed over 30 s or twice the TTFT SLO,
//      the longer (a burst's seconds are the queue's, which the TTFT prediction answers).
//   3. Up at once, down slowly: a target above the clock in force is applied at once, and a
//      measured quantile over `alarm` x its SLO raises the clock at least one step even when the
//      prediction disagrees; a lower target must stay the target for `hold_s` before the clock
//      moves, and then one step at a time (hysteresis: no oscillation between neighbours);
//      while idle (nothing running or waiting) the clock stays: a lower one saves nothing then,
//      and the next burst would start on it.
//   4. A measured quantile over its SLO even at the maximum clock: the maximum clock, and the
//      reason says the SLO cannot be met.
// Prefill-heavy load (long prompts, TTFT-bound: compute-bound, ~1/clock) keeps clocks high;
// decode-heavy load (TPOT-bound: memory-bound, nearly clock-independent) lets them fall.
// Pure: no I/O and no clock of its own (times come in the observations). Thread-safety: one
// governor per thread. Failure: create() answers InvalidArgument for an empty clock list or
// options that GovernorOptions::validate() refuses.
//
//   auto governor = ServingGovernor::create(profile, options);
//   ClockDecision d = governor->decide(observation);   // d.clock_mhz, d.reason
//
// Where it lives: the serving wing, src/serving/ (docs/architecture.md, "The serving wing").
// This header and serving_calibration.h are its governor/ folder (serving_governor.cc,
// serving_fit.cc: pure, in libzeus, including nothing of the wing's other folders); live/ runs it
// in `zeus proxy --govern`, simulation/ replays traces through it (zeus/serving/sim_serving.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/result.h"

namespace zeus {

// One iteration of a continuously batching server at SM clock f (MHz), with max_clock the
// highest: time_s = (prefill_s_per_token * prefill_tokens + decode_s_per_seq * batch) *
// (max_clock / f) + memory_s + kv_s_per_token * context_tokens, the first part compute-bound,
// the rest memory-bound. Busy power = base_w + compute_w * (f / max)^3 * compute share +
// memory_w * (f / max)^1.5 * memory share; idle_w when no request is in the server.
struct ServingProfile {
  std::vector<double> clocks_mhz;  // supported SM clocks, highest first
  double prefill_s_per_token = 3e-5;
  double decode_s_per_seq = 3.2e-5;
  double memory_s = 5e-3;
  double kv_s_per_token = 4e-8;
  double base_w = 150;
  double compute_w = 500;
  double memory_w = 250;
  double idle_w = 90;
  double prefill_chunk_tokens = 2048;  // prompt tokens per iteration at most (chunked prefill)

  double max_clock() const { return clocks_mhz.empty() ? 0 : clocks_mhz.front(); }
  // Seconds of one iteration.
  double iteration_s(double clock_mhz, double prefill_tokens, double batch,
                     double context_tokens) const;
  // Watts during that iteration.
  double iteration_w(double clock_mhz, double prefill_tokens, double batch,
                     double context_tokens) const;
  // Whether this could be a GPU's profile, naming the field when not: 1 to 1,024 clocks, each
  // from 10 to 10,000 MHz and distinct, highest first; coefficients finite and >= 0; powers
  // (idle_w, base_w, compute_w, memory_w) at most 10,000 W; a chunk of 1 to 10^6 whole tokens;
  // and one iteration at the highest clock (a full prefill chunk beside one sequence) under 60 s.
  Result<void> validate() const;
  // The parametric model of an 8B-class model on an H100 (SM clocks 1980 down to 930 MHz): the
  // defaults above; docs/proxy.md says where its shape comes from.
  static ServingProfile parametric_h100();
};

// The clocks a live governor steps through, from a GPU's supported SM clocks (any order): the
// highest, then each next one at least step_fraction x the highest below the last kept, down to
// floor_fraction x the highest (an H100's 15 MHz steps would take minutes to walk one at a time;
// lower clocks save little and stretch prefill a lot). Highest first.
std::vector<double> serving_clock_ladder(const std::vector<uint32_t>& supported_mhz,
                                         double step_fraction = 0.075,
                                         double floor_fraction = 0.45);

// What the proxy saw over the last control period.
struct ServingObservation {
  double now_s = 0;             // any monotonic time
  bool readings_ok = true;      // false: the proxy cannot see (then the maximum clock)
  double running = 0;           // requests producing tokens now (the decode batch)
  double waiting = 0;           // requests not yet answered a first token
  double mean_context_tokens = 0;   // prompt + output so far, mean over the running batch
  double prompt_tokens_per_s = 0;   // prompt tokens arriving (the prefill load)
  double mean_prompt_tokens = 0;    // of the requests arriving
  double mean_output_tokens = 0;    // of the requests finished (0: none finished)
  std::vector<double> ttft_s;   // requests whose first token came in this period
  std::vector<double> tpot_s;   // requests finished in this period (their mean TPOT)
};

// The governor's knobs: the one options struct of `zeus proxy --govern` (proxy::GovernOptions
// holds it) and `zeus simulate serving` (sim::ServingSimOptions holds it), checked in one place,
// validate(), which both commands call (and create() again).
struct GovernorOptions {
  double ttft_slo_s = 1.0;    // > 0 and finite (seconds)
  double tpot_slo_s = 0.1;    // > 0 and finite (seconds)
  // The quantile of the window's latencies compared with the SLOs: above 0.5 and below 1. The
  // SLOs bound a tail: a governor holding the median or a lower quantile under them would leave
  // half the requests or more over them, and lower the clock on that.
  double quantile = 0.99;
  // Corrected predictions may reach headroom x SLO while the error budget is unspent: the
  // correction carries the window's worst latencies (its quantile over window_s, bursts
  // included), which over-state a whole run's quantile. The headroom in use falls linearly to 1
  // as the share of requests over an SLO in the last budget_window_s reaches 1 - quantile (the
  // budget), and below 1 (to 0.8) beyond it: an error budget, spent where it saves most.
  double headroom = 2.0;          // 1 to 10
  double budget_window_s = 600.0; // above 0, at most a day
  double alarm = 0.9;         // a measured quantile over alarm x SLO raises the clock: (0, 1]
  double hold_s = 1.5;        // a lower target must hold this long before a step down: 0 to 1 h
  double window_s = 30.0;     // latencies kept for the quantiles (at most max_samples): (0, 1 day]
  double load_tau_s = 3.0;    // the load the predictions use is smoothed over about this: (0, 1 h]
  size_t max_samples = 4096;  // kFewestSamples to 100,000 (outcomes kept: 16 x this)

  // Fewer latencies than this say nothing yet (the governor reads no quantile from them).
  static constexpr size_t kFewestSamples = 5;

  // A knob's name as the caller's user knows it, e.g. {"quantile", "--slo-quantile"}; a field
  // not listed is named as above.
  struct KnobName {
    std::string_view field;
    std::string_view shown;
  };
  // Whether every knob is in its range above. Failure: InvalidArgument naming the first knob
  // out of range (by `names`), its value and its range: "--slo-quantile is 0.3; it must be above
  // 0.5 and below 1, e.g. 0.99 (...)".
  Result<void> validate(std::span<const KnobName> names = {}) const;
};

// Why the clock is what it is (logged with each decision).
enum class GovernorReason {
  kBlind,            // nothing seen yet or readings missing: maximum clock
  kPredicted,        // the profile's lowest clock meeting the SLOs with headroom
  kRaisedOnLatency,  // a measured quantile neared its SLO: raised
  kHolding,          // a lower target, not held long enough yet
  kSteppedDown,      // one step down after the hold
  kSloUnreachable,   // over the SLO even at the maximum clock
};
const char* governor_reason_name(GovernorReason reason);

struct ClockDecision {
  double clock_mhz = 0;
  GovernorReason reason = GovernorReason::kBlind;
  double ttft_quantile_s = 0;  // measured over the window (0: none yet)
  double tpot_quantile_s = 0;
  double predicted_ttft_s = 0;  // at the chosen clock
  double predicted_tpot_s = 0;
  double headroom = 0;          // in use (the error budget's)
};

class ServingGovernor {
 public:
  static Result<std::unique_ptr<ServingGovernor>> create(ServingProfile profile,
                                                         GovernorOptions options);
  ClockDecision decide(const ServingObservation& observation);
  double clock_mhz() const { return profile_.clocks_mhz[index_]; }

  // The profile's predictions at `clock_mhz` for the load in `o` (before correction).
  double predict_tpot_s(double clock_mhz, const ServingObservation& o) const;
  double predict_ttft_s(double clock_mhz, const ServingObservation& o) const;

 private:
  ServingGovernor(ServingProfile profile, GovernorOptions options);
  void remember(const ServingObservation& o);
  // Whether the prefill throughput at this clock keeps up with the smoothed prompt rate (the
  // capacity guard; step 2 of the decision).
  bool keeps_up(double clock_mhz) const;
  double quantile(const std::deque<std::pair<double, double>>& samples) const;  // 0: too few
  double quantile_of(const std::deque<std::pair<double, double>>& samples) const;

  ServingProfile profile_;
  GovernorOptions options_;
  size_t index_ = 0;            // clock in force (0: the maximum)
  bool seen_ = false;           // a request was seen
  double lower_since_s_ = -1;   // when a lower target first appeared (-1: none)
  double idle_since_s_ = -1;    // when nothing ran or waited since (-1: busy)
  ServingObservation load_;     // the load, smoothed (exponentially, load_tau_s)
  double load_at_s_ = -1;       // when load_ was last updated (-1: never)
  double sustained_prompt_tokens_per_s_ = 0;  // the capacity guard's (30 s or 2 x TTFT SLO)
  double ttft_correction_ = 1;  // observed / predicted, smoothed
  double tpot_correction_ = 1;
  std::deque<std::pair<double, double>> ttft_;  // (time, seconds)
  std::deque<std::pair<double, double>> tpot_;
  // (time, the prediction at the clock then in force), over the same window as the latencies:
  // the correction compares a window's measured quantile with the same quantile of what the
  // profile predicted over that window (not with the prediction now, whose load differs).
  std::deque<std::pair<double, double>> ttft_predicted_;
  std::deque<std::pair<double, double>> tpot_predicted_;
  std::deque<std::pair<double, bool>> outcomes_;  // (time, over an SLO) for the error budget
  double headroom_now_ = 1;                       // the headroom in use (error budget)
  double outcomes_total_ = 0, over_total_ = 0;  // every outcome since the start, and those over
  double overspend_ = 1;  // the run's budget, integrated: a factor on the headroom, [0.3, 1]
};

}  // namespace zeus
