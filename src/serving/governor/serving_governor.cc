#include "zeus/serving/serving_governor.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <limits>

namespace zeus {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// The error budget's integral: its time constant (s) and the least factor on the headroom.
constexpr double kOverspendS = 30;
constexpr double kLeastOverspend = 0.3;
// The capacity guard: the sustained prompt rate at most this share of a clock's prefill
// throughput, sustained over at least kSustainedS (s) or twice the TTFT SLO.
constexpr double kMostPrefillShare = 1.0;
constexpr double kSustainedS = 30;

}  // namespace

double ServingProfile::iteration_s(double clock_mhz, double prefill_tokens, double batch,
                                   double context_tokens) const {
  const double slow = max_clock() / std::max(clock_mhz, 1.0);
  return (prefill_s_per_token * prefill_tokens + decode_s_per_seq * batch) * slow + memory_s +
         kv_s_per_token * context_tokens;
}

double ServingProfile::iteration_w(double clock_mhz, double prefill_tokens, double batch,
                                   double context_tokens) const {
  const double slow = max_clock() / std::max(clock_mhz, 1.0);
  const double compute = (prefill_s_per_token * prefill_tokens + decode_s_per_seq * batch) * slow;
  const double total = compute + memory_s + kv_s_per_token * context_tokens;
  const double share = total > 0 ? compute / total : 0;
  const double ratio = clock_mhz / max_clock();
  return base_w + compute_w * std::pow(ratio, 3) * share +
         memory_w * std::pow(ratio, 1.5) * (1 - share);
}

Result<void> ServingProfile::validate() const {
  auto bad = [](const std::string& why) { return fail(ErrorCode::kInvalidArgument, why); };
  if (clocks_mhz.empty() || clocks_mhz.size() > 1024) {
    return bad("clocks_mhz lists " + std::to_string(clocks_mhz.size()) +
               " clocks; a GPU has 1 to a few hundred");
  }
  for (size_t i = 0; i < clocks_mhz.size(); ++i) {
    const double f = clocks_mhz[i];
    if (!std::isfinite(f) || !(f >= 10) || f > 10000) {
      return bad("clocks_mhz[" + std::to_string(i) + "] is " + std::to_string(f) +
                 " MHz; a GPU's clocks are from 10 to 10,000 MHz");
    }
    if (i > 0 && !(f < clocks_mhz[i - 1])) {
      return bad("clocks_mhz[" + std::to_string(i) + "] (" + std::to_string(f) +
                 " MHz) is not below the clock before it: list distinct clocks, highest first");
    }
  }
  const std::pair<const char*, double> coefficients[] = {
      {"prefill_s_per_token", prefill_s_per_token}, {"decode_s_per_seq", decode_s_per_seq},
      {"memory_s", memory_s}, {"kv_s_per_token", kv_s_per_token}, {"base_w", base_w},
      {"compute_w", compute_w}, {"memory_w", memory_w}, {"idle_w", idle_w}};
  for (const auto& [name, v] : coefficients) {
    if (!std::isfinite(v) || !(v >= 0)) {
      return bad(std::string(name) + " is " + std::to_string(v) + "; it must be finite and >= 0");
    }
  }
  for (const auto& [name, v] : {std::pair<const char*, double>{"idle_w", idle_w},
                                {"base_w", base_w}, {"compute_w", compute_w},
                                {"memory_w", memory_w}}) {
    if (v > 10000) {
      return bad(std::string(name) + " is " + std::to_string(v) +
                 " W; no GPU draws more than 10,000 W");
    }
  }
  if (!(prefill_chunk_tokens >= 1 && prefill_chunk_tokens <= 1e6) ||
      prefill_chunk_tokens != std::floor(prefill_chunk_tokens)) {
    return bad("prefill_chunk_tokens must be a whole number of tokens from 1 to 1,000,000");
  }
  const double longest = iteration_s(max_clock(), prefill_chunk_tokens, 1, 0);
  if (!(longest < 60)) {
    return bad("one iteration at the highest clock would take " + std::to_string(longest) +
               " s (prefill_s_per_token, decode_s_per_seq, memory_s); no GPU is that slow: "
               "calibrate again (zeus proxy calibrate)");
  }
  return ok();
}

ServingProfile ServingProfile::parametric_h100() {
  ServingProfile p;
  p.clocks_mhz = {1980, 1830, 1680, 1530, 1380, 1230, 1080, 930};
  return p;
}

std::vector<double> serving_clock_ladder(const std::vector<uint32_t>& supported_mhz,
                                         double step_fraction, double floor_fraction) {
  std::vector<uint32_t> sorted = supported_mhz;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  std::vector<double> ladder;
  if (sorted.empty() || sorted.front() == 0) return ladder;
  const double top = sorted.front();
  ladder.push_back(top);
  for (uint32_t mhz : sorted) {
    if (mhz < floor_fraction * top) break;
    if (ladder.back() - mhz >= step_fraction * top - 1e-9) ladder.push_back(mhz);
  }
  return ladder;
}

const char* governor_reason_name(GovernorReason reason) {
  switch (reason) {
    case GovernorReason::kBlind:
      return "blind";
    case GovernorReason::kPredicted:
      return "predicted";
    case GovernorReason::kRaisedOnLatency:
      return "raised_on_latency";
    case GovernorReason::kHolding:
      return "holding";
    case GovernorReason::kSteppedDown:
      return "stepped_down";
    case GovernorReason::kSloUnreachable:
      return "slo_unreachable";
  }
  return "?";
}

ServingGovernor::ServingGovernor(ServingProfile profile, GovernorOptions options)
    : profile_(std::move(profile)), options_(options) {}

Result<std::unique_ptr<ServingGovernor>> ServingGovernor::create(ServingProfile profile,
                                                                 GovernorOptions options) {
  if (profile.clocks_mhz.empty()) {
    return fail(ErrorCode::kInvalidArgument, "the serving profile lists no SM clock");
  }
  std::sort(profile.clocks_mhz.begin(), profile.clocks_mhz.end(), std::greater<>());
  if (!(profile.clocks_mhz.back() > 0)) {
    return fail(ErrorCode::kInvalidArgument, "SM clocks must be positive (MHz)");
  }
  ZEUS_TRY(options.validate());
  return std::unique_ptr<ServingGovernor>(new ServingGovernor(std::move(profile), options));
}

double ServingGovernor::predict_tpot_s(double clock_mhz, const ServingObservation& o) const {
  const double slow = profile_.max_clock() / clock_mhz;
  const double batch = std::max(1.0, o.running);
  const double decode = profile_.iteration_s(clock_mhz, 0, batch, batch * o.mean_context_tokens);
  // Prompt tokens ride along in decode iterations, a chunk at most each. A request's TPOT is the
  // mean over its n output tokens: the prompts queued now are spread over those n iterations and
  // the prompts arriving meanwhile stretch each by 1 / (1 - share), up to a full chunk in every
  // one (a long queue of long prompts). With no n known yet, a queue counts as a full chunk.
  const double per_token = profile_.prefill_s_per_token * slow;
  const double full = decode + profile_.prefill_chunk_tokens * per_token;
  const double share = o.prompt_tokens_per_s * per_token;
  const bool length_known = o.mean_output_tokens > 1;
  if (share >= 1 || (o.waiting > 0 && !length_known)) return full;
  const double backlog = length_known ? o.waiting * std::max(1.0, o.mean_prompt_tokens) : 0;
  const double spread = backlog / std::max(1.0, o.mean_output_tokens);  // tokens per iteration
  return std::min(full, (decode + per_token * spread) / (1 - share));
}

double ServingGovernor::predict_ttft_s(double clock_mhz, const ServingObservation& o) const {
  const double slow = profile_.max_clock() / clock_mhz;
  const double batch = std::max(1.0, o.running);
  const double decode = profile_.iteration_s(clock_mhz, 0, batch, batch * o.mean_context_tokens);
  // FIFO: the prompts queued ahead and this one's, a chunk per iteration of decode + chunk.
  const double prompt = std::max(1.0, o.mean_prompt_tokens);
  const double tokens = (o.waiting + 1) * prompt;
  const double chunk = std::max(1.0, profile_.prefill_chunk_tokens);
  const double per_token = (decode + chunk * profile_.prefill_s_per_token * slow) / chunk;
  return decode + tokens * std::max(per_token, profile_.prefill_s_per_token * slow);
}

bool ServingGovernor::keeps_up(double clock_mhz) const {
  // The capacity guard: the prompt tokens arriving (sustained, not a burst's seconds, which the
  // queue absorbs and the TTFT prediction answers) must not outrun the prefill throughput at this
  // clock, a full chunk beside each decode iteration of the running batch. Past it the queue
  // grows without bound, whether or not an SLO notices in time.
  const double batch = std::max(1.0, load_.running);
  const double decode =
      profile_.iteration_s(clock_mhz, 0, batch, batch * load_.mean_context_tokens);
  const double chunk = std::max(1.0, profile_.prefill_chunk_tokens);
  const double iteration = decode + chunk * profile_.prefill_s_per_token *
                                        (profile_.max_clock() / clock_mhz);
  return sustained_prompt_tokens_per_s_ <= kMostPrefillShare * chunk / iteration;
}

void ServingGovernor::remember(const ServingObservation& o) {
  auto keep = [&](std::deque<std::pair<double, double>>& samples, const std::vector<double>& in) {
    for (double s : in) {
      if (std::isfinite(s) && s >= 0) samples.emplace_back(o.now_s, s);
    }
    while (!samples.empty() && (samples.size() > options_.max_samples ||
                                samples.front().first < o.now_s - options_.window_s)) {
      samples.pop_front();
    }
  };
  keep(ttft_, o.ttft_s);
  keep(tpot_, o.tpot_s);
  for (double s : o.ttft_s) outcomes_.emplace_back(o.now_s, s > options_.ttft_slo_s);
  for (double s : o.tpot_s) outcomes_.emplace_back(o.now_s, s > options_.tpot_slo_s);
  for (double s : o.ttft_s) over_total_ += s > options_.ttft_slo_s;
  for (double s : o.tpot_s) over_total_ += s > options_.tpot_slo_s;
  outcomes_total_ += static_cast<double>(o.ttft_s.size() + o.tpot_s.size());
  while (!outcomes_.empty() && (outcomes_.size() > 16 * options_.max_samples ||
                                outcomes_.front().first < o.now_s - options_.budget_window_s)) {
    outcomes_.pop_front();
  }
}

double ServingGovernor::quantile(const std::deque<std::pair<double, double>>& samples) const {
  if (samples.size() < GovernorOptions::kFewestSamples) return 0;
  return quantile_of(samples);
}

double ServingGovernor::quantile_of(const std::deque<std::pair<double, double>>& samples) const {
  if (samples.empty()) return 0;
  std::vector<double> values;
  values.reserve(samples.size());
  for (const auto& [when, value] : samples) values.push_back(value);
  const size_t k = std::min(values.size() - 1,
                            static_cast<size_t>(std::ceil(options_.quantile * values.size())) - 1);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return values[k];
}

ClockDecision ServingGovernor::decide(const ServingObservation& o) {
  remember(o);
  ClockDecision d;
  if (o.running > 0 || o.waiting > 0 || !ttft_.empty()) seen_ = true;
  if (!o.readings_ok || !seen_) {
    index_ = 0;
    lower_since_s_ = -1;
    d.clock_mhz = clock_mhz();
    d.reason = GovernorReason::kBlind;
    return d;
  }
  // Smooth the load the predictions see.
  const double weight =
      load_at_s_ < 0 ? 1.0 : 1.0 - std::exp(-std::max(0.0, o.now_s - load_at_s_) / options_.load_tau_s);
  auto smooth = [&](double& into, double value) { into += weight * (value - into); };
  smooth(load_.running, o.running);
  smooth(load_.waiting, o.waiting);
  smooth(load_.mean_context_tokens, o.mean_context_tokens);
  smooth(load_.prompt_tokens_per_s, o.prompt_tokens_per_s);
  const double slow_weight =
      load_at_s_ < 0 ? 1.0
                     : 1.0 - std::exp(-std::max(0.0, o.now_s - load_at_s_) /
                                      std::max(kSustainedS, 2 * options_.ttft_slo_s));
  sustained_prompt_tokens_per_s_ += slow_weight * (o.prompt_tokens_per_s - sustained_prompt_tokens_per_s_);
  if (o.mean_prompt_tokens > 0) smooth(load_.mean_prompt_tokens, o.mean_prompt_tokens);
  if (o.mean_output_tokens > 0) {
    // The first finished requests set it; later ones are smoothed in.
    if (load_.mean_output_tokens > 0) {
      smooth(load_.mean_output_tokens, o.mean_output_tokens);
    } else {
      load_.mean_output_tokens = o.mean_output_tokens;
    }
  }
  const double since_last_s = load_at_s_ < 0 ? 0 : std::max(0.0, o.now_s - load_at_s_);
  if (o.running > 0 || o.waiting > 0) idle_since_s_ = -1;
  load_at_s_ = o.now_s;
  // A burst shows in the queue before it shows in any latency: the predictions take the larger
  // of the smoothed and the current queue and prompt rate (up at once, down after the hold).
  ServingObservation load = load_;
  load.waiting = std::max(load.waiting, o.waiting);
  load.prompt_tokens_per_s = std::max(load.prompt_tokens_per_s, o.prompt_tokens_per_s);
  load.running = std::max(load.running, o.running);
  load.mean_prompt_tokens = std::max(load.mean_prompt_tokens, o.mean_prompt_tokens);
  d.ttft_quantile_s = quantile(ttft_);
  d.tpot_quantile_s = quantile(tpot_);
  // Observed / predicted at the clock in force: what the profile gets wrong about this server.
  // The profile predicts a typical latency; the SLO bounds a quantile, which bursts and queueing
  // stretch: the correction carries that ratio (so a target is the measured quantile scaled by how
  // the profile says the latency changes with the clock).
  auto learn = [](double& correction, double measured, double predicted) {
    if (measured > 0 && std::isfinite(predicted) && predicted > 0) {
      correction = 0.5 * correction + 0.5 * std::clamp(measured / predicted, 0.1, 1000.0);
    }
  };
  auto predicted = [&](std::deque<std::pair<double, double>>& history, double now_predicted) {
    history.emplace_back(o.now_s, now_predicted);
    while (!history.empty() && (history.size() > options_.max_samples ||
                                history.front().first < o.now_s - options_.window_s)) {
      history.pop_front();
    }
    return quantile_of(history);
  };
  learn(ttft_correction_, d.ttft_quantile_s,
        predicted(ttft_predicted_, predict_ttft_s(clock_mhz(), load)));
  learn(tpot_correction_, d.tpot_quantile_s,
        predicted(tpot_predicted_, predict_tpot_s(clock_mhz(), load)));

  // The error budget: the share of recent latencies over their SLO against 1 - quantile.
  size_t over = 0;
  for (const auto& [when, violated] : outcomes_) over += violated ? 1 : 0;
  // Half the budget each: a request may go over either SLO, and it counts once against it.
  const double budget = (1 - options_.quantile) / 2;
  const double spent = outcomes_.size() < 50 ? 1.0 : static_cast<double>(over) / outcomes_.size() / budget;
  // The run's budget so far, integrated: spent beyond it, the headroom shrinks (down to
  // kLeastOverspend of itself) until the run's share is back within it; within it, it recovers.
  // The window's budget above forgets an overspend after budget_window_s, and a governor that
  // spends each window's whole budget late (a correction lags a burst) ends every run over it.
  if (outcomes_total_ >= 50) {
    const double run_spent = over_total_ / outcomes_total_ / budget;
    overspend_ = std::clamp(overspend_ * std::exp(since_last_s / kOverspendS * (1 - run_spent)),
                            kLeastOverspend, 1.0);
  }
  headroom_now_ = overspend_ * std::clamp(1 + (1 - spent) * (options_.headroom - 1), 0.8, std::max(1.0, options_.headroom));
  d.headroom = headroom_now_;
  // The lowest clock whose corrected predictions keep the headroom (clocks fall with the index).
  size_t target = 0;
  for (size_t i = 0; i < profile_.clocks_mhz.size(); ++i) {
    const double f = profile_.clocks_mhz[i];
    // The headroom is for the tail the correction carries; the profile's own TPOT and TTFT must
    // meet the SLOs (a queue of long prompts behind short answers puts a full prefill chunk in
    // every iteration, and a queue's prompts cannot be prefilled faster than the profile says:
    // neither has a tail to discount, and a correction learnt before a queue grew, from
    // requests that never waited in it, would discount it).
    const double tpot = predict_tpot_s(f, load);
    const double ttft = predict_ttft_s(f, load);
    if (!keeps_up(f) || tpot > options_.tpot_slo_s || ttft > options_.ttft_slo_s ||
        ttft_correction_ * ttft > headroom_now_ * options_.ttft_slo_s ||
        tpot_correction_ * tpot > headroom_now_ * options_.tpot_slo_s) {
      break;
    }
    target = i;
  }
  const bool over_slo = d.ttft_quantile_s > options_.ttft_slo_s || d.tpot_quantile_s > options_.tpot_slo_s;
  const bool alarm = d.ttft_quantile_s > options_.alarm * options_.ttft_slo_s ||
                     d.tpot_quantile_s > options_.alarm * options_.tpot_slo_s;
  if (alarm) {
    lower_since_s_ = -1;
    if (index_ == 0) {
      d.reason = over_slo ? GovernorReason::kSloUnreachable : GovernorReason::kRaisedOnLatency;
    } else {
      index_ = std::min(target, index_ - 1);
      d.reason = GovernorReason::kRaisedOnLatency;
      // Latencies measured at the old clock say nothing about the new one.
      ttft_.clear();
      tpot_.clear();
      ttft_predicted_.clear();
      tpot_predicted_.clear();
    }
  } else if (o.running == 0 && o.waiting == 0 && target > index_) {
    // Idle: a lower clock saves nothing now, and the next burst would start on it. A hold
    // already running is paused, not restarted (a trickle of requests with gaps still steps
    // down, after a hold of busy time).
    // An idle spell longer than a hold restarts it: the next burst starts from scratch.
    if (idle_since_s_ < 0) idle_since_s_ = o.now_s;
    if (o.now_s - idle_since_s_ > options_.hold_s) {
      lower_since_s_ = -1;
    } else if (lower_since_s_ >= 0) {
      lower_since_s_ += since_last_s;
    }
    d.reason = GovernorReason::kHolding;
  } else if (target <= index_) {
    index_ = target;
    lower_since_s_ = -1;
    d.reason = GovernorReason::kPredicted;
  } else if (lower_since_s_ < 0 || o.now_s - lower_since_s_ < options_.hold_s) {
    if (lower_since_s_ < 0) lower_since_s_ = o.now_s;
    d.reason = GovernorReason::kHolding;
  } else {
    ++index_;
    lower_since_s_ = o.now_s;  // the next step waits a whole hold again
    d.reason = GovernorReason::kSteppedDown;
  }
  d.clock_mhz = clock_mhz();
  d.predicted_ttft_s = ttft_correction_ * predict_ttft_s(d.clock_mhz, load);
  d.predicted_tpot_s = tpot_correction_ * predict_tpot_s(d.clock_mhz, load);
  return d;
}

}  // namespace zeus
