// run_serving_experiment (zeus/serving/sim_serving.h): the continuously batching server model, its
// clock
// policies, and the four-policy comparison.
#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <memory>

#include "zeus/serving/sim_serving.h"

namespace zeus::sim {
namespace {

// What a policy answers each control period: the SM clock (MHz).
using ClockPolicy = std::function<double(const ServingObservation&)>;

struct RequestOutcome {
  double ttft_s = -1;
  double tpot_s = -1;  // -1: one output token, no TPOT
};

// Points of a timeline (a chart's), at most 2 x kMaxTimelinePoints: past that, every other point
// is dropped and from then on only every `stride`-th is kept (a month of busy periods stays a
// few hundred kB).
constexpr size_t kMaxTimelinePoints = 20000;
struct Timeline {
  std::vector<std::pair<double, double>> points;
  size_t stride = 1, seen = 0;
  void push(double t, double value) {
    if (seen++ % stride != 0) return;
    points.emplace_back(t, value);
    if (points.size() < 2 * kMaxTimelinePoints) return;
    for (size_t i = 0; 2 * i < points.size(); ++i) points[i] = points[2 * i];
    points.resize((points.size() + 1) / 2);
    stride *= 2;
  }
};

struct Run {
  double energy_j = 0;
  double clock_integral = 0;  // MHz x s
  double end_s = 0;
  std::vector<RequestOutcome> outcomes;
  Timeline clocks, load;
};

struct Active {
  size_t request = 0;
  int prompt_left = 0;
  int generated = 0;
  double first_token_s = 0;
};

// One replay of the trace under `policy`.
Run replay(const ServingTrace& trace, const ServingSimOptions& o, const ClockPolicy& policy) {
  const ServingProfile& p = o.profile;
  const auto& reqs = trace.requests;
  Run run;
  run.outcomes.resize(reqs.size());
  std::deque<Active> waiting;
  std::vector<Active> running;
  size_t next = 0;
  double now = reqs.front().arrival_s / o.time_scale;
  double clock = p.max_clock();
  double next_tick = now + o.control_period_s;
  run.clocks.push(now, clock);
  // What happened since the last control tick.
  ServingObservation period;
  double period_prompt_tokens = 0, period_arrivals = 0;
  double period_output_tokens = 0, period_finished = 0;

  auto tick = [&](double at) {
    period.now_s = at;
    period.running = static_cast<double>(running.size());
    period.waiting = static_cast<double>(waiting.size());
    double context = 0;
    for (const Active& a : running) context += reqs[a.request].prompt_tokens + a.generated;
    period.mean_context_tokens = running.empty() ? 0 : context / static_cast<double>(running.size());
    period.prompt_tokens_per_s = period_prompt_tokens / o.control_period_s;
    period.mean_prompt_tokens = period_arrivals > 0 ? period_prompt_tokens / period_arrivals : 0;
    period.mean_output_tokens = period_finished > 0 ? period_output_tokens / period_finished : 0;
    const double chosen = policy(period);
    if (chosen != clock) run.clocks.push(at, chosen);
    clock = chosen;
    run.load.push(at, period.running + period.waiting);
    period = ServingObservation{};
    period_prompt_tokens = period_arrivals = 0;
    period_output_tokens = period_finished = 0;
  };
  auto advance = [&](double until, double watts) {  // runs the ticks up to `until`
    while (next_tick <= until) {
      run.energy_j += watts * (next_tick - now);
      run.clock_integral += clock * (next_tick - now);
      now = next_tick;
      tick(now);
      next_tick += o.control_period_s;
    }
    run.energy_j += watts * (until - now);
    run.clock_integral += clock * (until - now);
    now = until;
  };

  while (next < reqs.size() || !waiting.empty() || !running.empty()) {
    while (next < reqs.size() && reqs[next].arrival_s / o.time_scale <= now) {
      waiting.push_back({next, reqs[next].prompt_tokens, 0, 0});
      period_prompt_tokens += reqs[next].prompt_tokens;
      period_arrivals += 1;
      ++next;
    }
    if (waiting.empty() && running.empty()) {
      advance(reqs[next].arrival_s / o.time_scale, p.idle_w);  // idle until the next arrival
      continue;
    }
    // One iteration: a token for each running request, prompt chunks for the waiting ones.
    double context = 0;
    for (const Active& a : running) context += reqs[a.request].prompt_tokens + a.generated;
    int budget = o.prefill_chunk_tokens;
    size_t slots = static_cast<size_t>(o.max_batch) > running.size() ? o.max_batch - running.size() : 0;
    std::vector<std::pair<size_t, int>> chunks;  // (position in waiting, tokens)
    for (size_t w = 0; w < waiting.size() && budget > 0 && slots > 0; ++w, --slots) {
      const int chunk = std::min(waiting[w].prompt_left, budget);
      chunks.emplace_back(w, chunk);
      budget -= chunk;
    }
    const double prefill = o.prefill_chunk_tokens - budget;
    const double batch = static_cast<double>(running.size());
    const double seconds = std::max(1e-6, p.iteration_s(clock, prefill, batch, context));
    const double watts = p.iteration_w(clock, prefill, batch, context);
    // Ticks that fall inside the iteration see its start's clock; the end is what counts.
    advance(now + seconds, watts);
    for (auto it = running.begin(); it != running.end();) {
      const ServingRequest& r = reqs[it->request];
      if (++it->generated >= r.output_tokens) {
        const double tpot = (now - it->first_token_s) / (r.output_tokens - 1);
        run.outcomes[it->request].tpot_s = tpot;
        period.tpot_s.push_back(tpot);
        period_output_tokens += r.output_tokens;
        period_finished += 1;
        *it = running.back();
        running.pop_back();
      } else {
        ++it;
      }
    }
    size_t done_prefills = 0;
    for (const auto& [w, tokens] : chunks) {
      Active& a = waiting[w];
      a.prompt_left -= tokens;
      if (a.prompt_left > 0) continue;
      const ServingRequest& r = reqs[a.request];
      a.generated = 1;
      a.first_token_s = now;
      const double ttft = now - r.arrival_s / o.time_scale;
      run.outcomes[a.request].ttft_s = ttft;
      period.ttft_s.push_back(ttft);
      if (r.output_tokens > 1) {
        running.push_back(a);
      } else {
        period_output_tokens += 1;
        period_finished += 1;
      }
      ++done_prefills;
    }
    // Prefills finish in FIFO order: the finished ones are the queue's front.
    waiting.erase(waiting.begin(), waiting.begin() + static_cast<std::ptrdiff_t>(done_prefills));
  }
  run.end_s = now;
  return run;
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  const size_t k = std::min(values.size() - 1, static_cast<size_t>(std::ceil(q * values.size())) - 1);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return values[k];
}

ServingPolicyResult summarise(const std::string& name, const Run& run, const ServingExperiment& e,
                              double start_s) {
  ServingPolicyResult out;
  out.name = name;
  out.energy_j = run.energy_j;
  out.j_per_token = e.output_tokens > 0 ? run.energy_j / static_cast<double>(e.output_tokens) : 0;
  std::vector<double> ttft, tpot;
  size_t violations = 0;
  for (const RequestOutcome& r : run.outcomes) {
    ttft.push_back(r.ttft_s);
    if (r.tpot_s >= 0) tpot.push_back(r.tpot_s);
    if (r.ttft_s > e.ttft_slo_s || r.tpot_s > e.tpot_slo_s) ++violations;
  }
  out.ttft_p50_s = quantile(ttft, 0.5);
  out.ttft_p99_s = quantile(ttft, 0.99);
  out.tpot_p50_s = quantile(tpot, 0.5);
  out.tpot_p99_s = quantile(tpot, 0.99);
  out.slo_violation_rate = run.outcomes.empty() ? 0 : static_cast<double>(violations) / run.outcomes.size();
  out.mean_clock_mhz = run.end_s > start_s ? run.clock_integral / (run.end_s - start_s) : 0;
  out.clock_timeline = run.clocks.points;
  out.load_timeline = run.load.points;
  return out;
}

// GreenLLM-style dual loop (reactive, no profile): the TPOT loop steps the clock one level per
// period on its slack; the TTFT loop (or a queue longer than the batch) jumps to the maximum.
ClockPolicy dual_loop(const ServingSimOptions& o, const GovernorOptions& g) {
  struct State {
    size_t index = 0;
    std::deque<std::pair<double, double>> ttft, tpot;
  };
  auto state = std::make_shared<State>();
  const std::vector<double> clocks = o.profile.clocks_mhz;
  const double ttft_slo = g.ttft_slo_s, tpot_slo = g.tpot_slo_s, held = g.quantile;
  const int max_batch = o.max_batch;
  return [state, clocks, ttft_slo, tpot_slo, held, max_batch](const ServingObservation& ob) {
    for (double v : ob.ttft_s) state->ttft.emplace_back(ob.now_s, v);
    for (double v : ob.tpot_s) state->tpot.emplace_back(ob.now_s, v);
    for (auto* d : {&state->ttft, &state->tpot}) {
      while (!d->empty() && d->front().first < ob.now_s - 10) d->pop_front();
    }
    auto q = [&](const std::deque<std::pair<double, double>>& d) {
      std::vector<double> v;
      for (const auto& [t, x] : d) v.push_back(x);
      return v.size() < 5 ? 0.0 : quantile(v, held);
    };
    const double ttft = q(state->ttft), tpot = q(state->tpot);
    if (ttft > 0.9 * ttft_slo || ob.waiting > max_batch) {
      state->index = 0;
    } else if (tpot > 0.9 * tpot_slo) {
      state->index = state->index > 0 ? state->index - 1 : 0;
    } else if (tpot > 0 && tpot < 0.6 * tpot_slo && ttft < 0.6 * ttft_slo) {
      state->index = std::min(state->index + 1, clocks.size() - 1);
    }
    return clocks[state->index];
  };
}

}  // namespace

Result<ServingExperiment> run_serving_experiment(const ServingTrace& trace,
                                                 const ServingSimOptions& o) {
  if (trace.requests.empty()) return fail(ErrorCode::kInvalidArgument, "the trace holds no request");
  if (o.profile.clocks_mhz.empty()) return fail(ErrorCode::kInvalidArgument, "the profile lists no clock");
  if (!(o.control_period_s > 0) || o.max_batch < 1 || o.prefill_chunk_tokens < 1 ||
      !(o.time_scale > 0) || !(o.slo_margin > 0)) {
    return fail(ErrorCode::kInvalidArgument,
                "control period, batch, prefill chunk, time scale and SLO margin must be positive");
  }
  if (Result<void> valid = o.profile.validate(); !valid) {
    return fail(ErrorCode::kInvalidArgument, "the serving profile: " + valid.error().message);
  }
  // What a replay steps through is bounded: a month of simulated time at most (every control
  // period is a tick of the policy, idle or not, so that a gap replays as a server would live
  // it: about 0.1 us a tick, a few seconds for a month's replays; the timelines are bounded).
  const double span_s =
      (trace.requests.back().arrival_s - trace.requests.front().arrival_s) / o.time_scale;
  constexpr double kMaxSpanS = 31 * 86400.0;
  if (!(span_s <= kMaxSpanS)) {
    return fail(ErrorCode::kInvalidArgument,
                "the trace's arrivals span " + std::to_string(span_s / 86400) +
                    " days of simulated time (first at " +
                    std::to_string(trace.requests.front().arrival_s) + " s, last at " +
                    std::to_string(trace.requests.back().arrival_s) + " s" +
                    (o.time_scale != 1 ? ", stretched by --time-scale" : "") +
                    "); the simulator replays at most 31 days: cut the trace, or raise "
                    "--time-scale");
  }
  ServingExperiment e;
  e.trace = trace.name;
  e.profile_source = o.profile_source;
  e.requests = static_cast<int>(trace.requests.size());
  for (const ServingRequest& r : trace.requests) e.output_tokens += r.output_tokens;
  const double start = trace.requests.front().arrival_s / o.time_scale;
  const double max_clock = o.profile.max_clock();

  const Run at_max = replay(trace, o, [max_clock](const ServingObservation&) { return max_clock; });
  e.duration_s = at_max.end_s - start;
  std::vector<double> ttft, tpot;
  for (const RequestOutcome& r : at_max.outcomes) {
    ttft.push_back(r.ttft_s);
    if (r.tpot_s >= 0) tpot.push_back(r.tpot_s);
  }
  // The governor's options, with the SLOs not given derived from this run; every knob checked
  // before the other policies run (GovernorOptions::validate).
  GovernorOptions g = o.governor;
  if (g.tpot_slo_s == 0 && tpot.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "no request in the trace has a TPOT (every GeneratedTokens is 1 or less), so "
                "no TPOT SLO can be derived from it: give --tpot-slo");
  }
  if (g.ttft_slo_s == 0) g.ttft_slo_s = o.slo_margin * quantile(ttft, 0.99);
  if (g.tpot_slo_s == 0) g.tpot_slo_s = o.slo_margin * quantile(tpot, 0.99);
  ZEUS_TRY(g.validate());
  e.ttft_slo_s = g.ttft_slo_s;
  e.tpot_slo_s = g.tpot_slo_s;
  e.quantile = g.quantile;
  const ServingPolicyResult max_result = summarise("max-clock", at_max, e, start);

  // The best static clock: the least energy within one point of the maximum's violations.
  ServingPolicyResult best = max_result;
  best.name = "best-static";
  best.static_clock_mhz = max_clock;
  for (size_t i = 1; i < o.profile.clocks_mhz.size(); ++i) {
    const double f = o.profile.clocks_mhz[i];
    ServingPolicyResult r =
        summarise("best-static", replay(trace, o, [f](const ServingObservation&) { return f; }), e, start);
    r.static_clock_mhz = f;
    if (r.slo_violation_rate <= max_result.slo_violation_rate + 0.01 && r.energy_j < best.energy_j) {
      best = r;
    }
  }
  const ServingPolicyResult dual =
      summarise("dual-loop", replay(trace, o, dual_loop(o, g)), e, start);

  auto governor = ServingGovernor::create(o.profile, g);
  if (!governor) return fail(governor.error());
  std::shared_ptr<ServingGovernor> shared = std::move(*governor);
  const ServingPolicyResult ours = summarise(
      "governor",
      replay(trace, o, [shared](const ServingObservation& ob) { return shared->decide(ob).clock_mhz; }),
      e, start);
  e.policies = {max_result, best, dual, ours};
  return e;
}

}  // namespace zeus::sim
