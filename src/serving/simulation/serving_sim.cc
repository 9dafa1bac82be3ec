// run_serving_experiment (zeus/serving/sim_serving.h): the clock policies and the comparison; the
// server model and its replicas are serving_cluster.cc's.
#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <memory>
#include <optional>

#include "serving_cluster.h"
#include "zeus/serving/power_budget.h"
#include "zeus/serving/sim_serving.h"

namespace zeus::sim {
namespace {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  const size_t k = std::min(values.size() - 1, static_cast<size_t>(std::ceil(q * values.size())) - 1);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return values[k];
}

ServingPolicyResult summarise(const std::string& name, const ClusterRun& run,
                              const ServingExperiment& e, double start_s) {
  ServingPolicyResult out;
  out.name = name;
  out.routing = name.rfind("pack-", 0) == 0 ? "pack"
                : name.rfind("pd-", 0) == 0  ? "prefill-decode"
                                             : "least-loaded";
  out.energy_j = run.energy_j;
  out.j_per_token = e.output_tokens > 0 ? run.energy_j / static_cast<double>(e.output_tokens) : 0;
  std::vector<double> ttft, tpot;
  size_t violations = 0, ttft_over = 0, tpot_over = 0;
  for (const RequestOutcome& r : run.outcomes) {
    ttft.push_back(r.ttft_s);
    if (r.tpot_s >= 0) tpot.push_back(r.tpot_s);
    if (r.ttft_s > e.ttft_slo_s || r.tpot_s > e.tpot_slo_s) ++violations;
    ttft_over += r.ttft_s > e.ttft_slo_s;
    tpot_over += r.tpot_s > e.tpot_slo_s;
  }
  out.ttft_p50_s = quantile(ttft, 0.5);
  out.ttft_p99_s = quantile(ttft, 0.99);
  out.tpot_p50_s = quantile(tpot, 0.5);
  out.tpot_p99_s = quantile(tpot, 0.99);
  const double requests = static_cast<double>(std::max<size_t>(1, run.outcomes.size()));
  out.slo_violation_rate = static_cast<double>(violations) / requests;
  out.ttft_violation_rate = static_cast<double>(ttft_over) / requests;
  out.tpot_violation_rate = static_cast<double>(tpot_over) / requests;
  const double span = run.end_s - start_s;
  out.mean_clock_mhz = span > 0 ? run.clock_integral / (span * e.replicas) : 0;
  out.mean_awake = span > 0 ? run.awake_integral / span : e.replicas;
  out.clock_timeline = run.clocks.points;
  out.load_timeline = run.load.points;
  out.awake_timeline = run.awake.points;
  if (e.power_budget_w > 0) {
    out.budget_held = run.windows > 0 ? 1.0 - static_cast<double>(run.windows_over) / run.windows : 1.0;
    out.peak_window_w = run.peak_window_w;
  }
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
  if (o.replicas < 1 || o.replicas > ReplicaRouter::kMaxReplicas) {
    return fail(ErrorCode::kInvalidArgument,
                "--replicas is " + std::to_string(o.replicas) + "; it must be from 1 to " +
                    std::to_string(ReplicaRouter::kMaxReplicas));
  }
  ZEUS_TRY(o.router.validate());
  if (o.prefill_replicas != 0 && !(o.prefill_replicas >= 1 && o.prefill_replicas < o.replicas)) {
    return fail(ErrorCode::kInvalidArgument,
                "--prefill-replicas is " + std::to_string(o.prefill_replicas) +
                    "; with --replicas " + std::to_string(o.replicas) +
                    " it must be from 1 to " + std::to_string(o.replicas - 1) +
                    " (the rest decode; --replicas counts both pools)");
  }
  if (!(o.kv_transfer_s_per_token >= 0 && o.kv_transfer_s_per_token <= 1e-3)) {
    return fail(ErrorCode::kInvalidArgument,
                "the KV transfer time must be from 0 to 1 ms a token");
  }
  if (o.power_budget_w != 0 && !(o.power_budget_w > 0 && o.power_budget_w <= 1e6)) {
    return fail(ErrorCode::kInvalidArgument,
                "--power-budget is " + std::to_string(o.power_budget_w) +
                    " W; give the GPUs' total in watts (above 0, at most 1,000,000) or a share "
                    "of their limit, e.g. 60%");
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
  e.replicas = o.replicas;
  e.power_budget_w = o.power_budget_w;
  const double start = trace.requests.front().arrival_s / o.time_scale;
  const double max_clock = o.profile.max_clock();

  // One replay: a fresh router (routing state is per run) and a clock policy per replica.
  GovernorOptions g = o.governor;
  enum class Power { kFree, kBudget, kEqualCaps };
  auto replay = [&](RoutingPolicy routing, const std::function<ClockPolicy(int)>& policy,
                    Power power = Power::kFree, bool disaggregated = false) -> ClusterRun {
    RouterOptions ro = o.router;
    ro.policy = routing;
    // Least-loaded routing reads no SLO; before they are derived, any valid ones do.
    GovernorOptions slos = g;
    if (routing == RoutingPolicy::kLeastLoaded) slos = GovernorOptions{};
    // Cannot fail: the profile, replicas and router knobs were checked above, the SLOs by
    // g.validate() before any pack replay.
    auto router = ReplicaRouter::create(o.profile, slos, ro, o.replicas);
    ZEUS_CHECK(router.has_value(), router.error().message);
    ClusterSetup setup{o.replicas, policy, router->get()};
    setup.budget_w = o.power_budget_w;
    std::unique_ptr<PowerBudget> budget;
    if (power == Power::kBudget) {
      auto made = PowerBudget::create(o.power_budget_w, o.profile.clocks_mhz);
      ZEUS_CHECK(made.has_value(), made.error().message);
      budget = std::move(*made);
      setup.budget = budget.get();
    }
    if (power == Power::kEqualCaps) setup.cap_w = o.power_budget_w / o.replicas;
    if (disaggregated) {
      setup.prefill_replicas = o.prefill_replicas;
      setup.kv_transfer_s_per_token = o.kv_transfer_s_per_token;
    }
    return replay_cluster(trace, o, setup);
  };
  // Static clocks by pool (P/D: replicas [0, prefill_replicas) prefill; otherwise one pool).
  auto pair = [pools = o.prefill_replicas](double prefill, double decode) {
    return [=](int i) -> ClockPolicy {
      const double f = i < pools ? prefill : decode;
      return [f](const ServingObservation&) { return f; };
    };
  };
  const ClusterRun at_max = replay(RoutingPolicy::kLeastLoaded, pair(max_clock, max_clock));
  e.duration_s = at_max.end_s - start;
  std::vector<double> ttft, tpot;
  for (const RequestOutcome& r : at_max.outcomes) {
    ttft.push_back(r.ttft_s);
    if (r.tpot_s >= 0) tpot.push_back(r.tpot_s);
  }
  // The governor's options, with the SLOs not given derived from this run; every knob checked
  // before the other policies run (GovernorOptions::validate).
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

  // The best static clock under a routing: the least energy within one point of the maximum
  // clock's violations (least-loaded: the baseline's).
  // The best static clocks under a routing: the least energy whose violations stay within one
  // point of `reference`; one clock for every replica, or, disaggregated, one per pool. `at_top`:
  // the run at the maximum clocks, already made (null: replayed here, and the first candidate).
  auto best_static = [&](RoutingPolicy routing, const std::string& name,
                         const ServingPolicyResult* at_top, double reference,
                         bool disaggregated) -> ServingPolicyResult {
    std::optional<ServingPolicyResult> best;
    if (at_top) {
      best = *at_top;
      best->name = name;
      best->static_clock_mhz = max_clock;
      if (disaggregated) best->prefill_clock_mhz = max_clock;
    }
    for (double fp : o.profile.clocks_mhz) {
      for (double fd : o.profile.clocks_mhz) {
        if ((!disaggregated && fp != fd) || (at_top && fp == max_clock && fd == max_clock)) continue;
        ServingPolicyResult r =
            summarise(name, replay(routing, pair(fp, fd), Power::kFree, disaggregated), e, start);
        r.static_clock_mhz = fd;
        if (disaggregated) r.prefill_clock_mhz = fp;
        const bool within = r.slo_violation_rate <= reference + 0.01;
        if (!best || (within && r.energy_j < best->energy_j)) best = r;
      }
    }
    return *best;
  };
  auto governed = [&](int) -> ClockPolicy {
    // One governor per replica (create() cannot fail here: g and the profile were checked).
    std::shared_ptr<ServingGovernor> governor = std::move(*ServingGovernor::create(o.profile, g));
    return [governor](const ServingObservation& ob) { return governor->decide(ob).clock_mhz; };
  };
  const ServingPolicyResult best = best_static(RoutingPolicy::kLeastLoaded, "best-static",
                                               &max_result, max_result.slo_violation_rate, false);
  const ClusterRun dual_run = replay(RoutingPolicy::kLeastLoaded,
                               [&](int) { return dual_loop(o, g); });
  const ClusterRun ours_run = replay(RoutingPolicy::kLeastLoaded, governed);
  const ServingPolicyResult dual = summarise("dual-loop", dual_run, e, start);
  const ServingPolicyResult ours = summarise("governor", ours_run, e, start);
  e.policies = {max_result, best, dual, ours};
  if (o.power_budget_w > 0) {
    const ClusterRun budgeted = replay(RoutingPolicy::kLeastLoaded, governed, Power::kBudget);
    const ClusterRun capped = replay(RoutingPolicy::kLeastLoaded, governed, Power::kEqualCaps);
    e.policies.push_back(summarise("governor-budget", budgeted, e, start));
    e.policies.push_back(summarise("governor-equal-caps", capped, e, start));
  }
  if (o.prefill_replicas > 0) {
    // Prefill and decode apart: the pools at the maximum clock, each pair of static clocks, and
    // governors.
    const ServingPolicyResult pd_max = summarise(
        "pd-max-clock", replay(RoutingPolicy::kLeastLoaded, pair(max_clock, max_clock), Power::kFree, true),
        e, start);
    const ServingPolicyResult pd_best = best_static(RoutingPolicy::kLeastLoaded, "pd-best-static",
                                                    &pd_max, pd_max.slo_violation_rate, true);
    e.policies.push_back(pd_max);
    e.policies.push_back(pd_best);
    e.policies.push_back(summarise(
        "pd-governor", replay(RoutingPolicy::kLeastLoaded, governed, Power::kFree, true), e, start));
  }
  if (o.replicas > 1) {
    const ClusterRun pack_max = replay(RoutingPolicy::kPack, pair(max_clock, max_clock));
    const ServingPolicyResult pack_top = summarise("pack-max-clock", pack_max, e, start);
    const ServingPolicyResult pack_best = best_static(RoutingPolicy::kPack, "pack-best-static",
                                                      nullptr, max_result.slo_violation_rate, false);
    const ClusterRun pack_ours = replay(RoutingPolicy::kPack, governed);
    e.policies.push_back(pack_top);
    e.policies.push_back(pack_best);
    e.policies.push_back(summarise("pack-governor", pack_ours, e, start));
  }
  return e;
}

}  // namespace zeus::sim
