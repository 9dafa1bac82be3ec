#include "zeus/serving/replica_router.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace zeus {
namespace {

constexpr double kNoPower = std::numeric_limits<double>::infinity();  // also: never updated
// A steady state needs the iteration's fixed point to have room: below this share of the time
// left for the memory-bound part, the queue grows without bound (the replica cannot keep up).
constexpr double kLeastSlack = 0.05;
// Two counts' predicted powers this close (relative) are a tie, and the fewer replicas win.
constexpr double kPowerTie = 0.005;

bool serving_or_waking(ReplicaState s) {
  return s == ReplicaState::kServing || s == ReplicaState::kWaking;
}

}  // namespace

const char* routing_policy_name(RoutingPolicy policy) {
  return policy == RoutingPolicy::kPack ? "pack" : "least-loaded";
}

Result<RoutingPolicy> parse_routing_policy(const std::string& name) {
  if (name == "least-loaded") return RoutingPolicy::kLeastLoaded;
  if (name == "pack") return RoutingPolicy::kPack;
  return fail(ErrorCode::kInvalidArgument,
              "routing policy '" + name +
                  "' is not known: least-loaded (every replica serves) or pack (the fewest "
                  "replicas that hold the SLOs serve, the others sleep)");
}

const char* replica_state_name(ReplicaState state) {
  switch (state) {
    case ReplicaState::kServing:
      return "serving";
    case ReplicaState::kWaking:
      return "waking";
    case ReplicaState::kDraining:
      return "draining";
    case ReplicaState::kAsleep:
      return "asleep";
  }
  return "?";
}

Result<void> RouterOptions::validate() const {
  auto out_of = [](const char* knob, double v, const char* range) {
    char text[64];
    std::snprintf(text, sizeof text, "%g", v);
    return fail(ErrorCode::kInvalidArgument,
                std::string(knob) + " is " + text + "; it must be " + range);
  };
  if (!(fill > 0 && fill <= 1)) return out_of("fill", fill, "above 0 and at most 1, e.g. 0.7");
  if (!(wake_s >= 0 && wake_s <= 600)) return out_of("wake_s", wake_s, "from 0 to 600 s");
  if (!(hold_s >= 0 && hold_s <= 3600)) return out_of("hold_s", hold_s, "from 0 to 3600 s");
  if (!(load_tau_s > 0 && load_tau_s <= 3600)) {
    return out_of("load_tau_s", load_tau_s, "above 0 and at most 3600 s");
  }
  if (!(sticky_slack >= 0 && sticky_slack <= 1e6)) {
    return out_of("sticky_slack", sticky_slack, "from 0 to 1,000,000 requests");
  }
  return ok();
}

ReplicaRouter::ReplicaRouter(ServingProfile profile, GovernorOptions slos, RouterOptions options,
                             int replicas)
    : profile_(std::move(profile)),
      slos_(slos),
      options_(options),
      states_(static_cast<size_t>(replicas), ReplicaState::kServing),
      ready_at_s_(static_cast<size_t>(replicas), 0) {}

Result<std::unique_ptr<ReplicaRouter>> ReplicaRouter::create(ServingProfile profile,
                                                             GovernorOptions slos,
                                                             RouterOptions options, int replicas) {
  if (replicas < 1 || replicas > kMaxReplicas) {
    return fail(ErrorCode::kInvalidArgument,
                "the router was given " + std::to_string(replicas) + " replicas; it routes 1 to " +
                    std::to_string(kMaxReplicas));
  }
  if (Result<void> valid = profile.validate(); !valid) return fail(valid.error());
  if (Result<void> valid = slos.validate(); !valid) return fail(valid.error());
  if (Result<void> valid = options.validate(); !valid) return fail(valid.error());
  return std::unique_ptr<ReplicaRouter>(
      new ReplicaRouter(std::move(profile), slos, options, replicas));
}

ReplicaRouter::Steady ReplicaRouter::predict(double clock_mhz, double arrivals_per_s,
                                             double prompt_tokens_per_s, double output_tokens,
                                             double context_tokens) const {
  const ServingProfile& p = profile_;
  const double slow = p.max_clock() / std::max(clock_mhz, 1.0);
  const double tokens_per_s = arrivals_per_s * output_tokens;
  const double prefill_share = p.prefill_s_per_token * slow * prompt_tokens_per_s;
  const double slack = 1 - (p.decode_s_per_seq * slow + p.kv_s_per_token * context_tokens) *
                               tokens_per_s - prefill_share;
  Steady s;
  if (!(slack > kLeastSlack)) return s;
  const double t = p.memory_s / slack;
  const double prefill_tokens = prompt_tokens_per_s * t;
  if (prefill_tokens > p.prefill_chunk_tokens) return s;  // more prompt than chunks carry
  const double batch = tokens_per_s * t;
  const double mean_prompt = arrivals_per_s > 0 ? prompt_tokens_per_s / arrivals_per_s : 0;
  s.feasible = true;
  s.tpot_s = t;
  // The prompt's own chunks, each an iteration, stretched by the prefill queue's occupancy.
  s.ttft_s = t * (1 + mean_prompt / p.prefill_chunk_tokens) / (1 - std::min(prefill_share, 0.95));
  const double busy = std::min(1.0, batch + prefill_share);
  s.watts = busy * p.iteration_w(clock_mhz, prefill_tokens, batch, batch * context_tokens) +
            (1 - busy) * p.idle_w;
  return s;
}

int ReplicaRouter::wanted_for(double arrivals_per_s, double prompt_tokens_per_s,
                              double output_tokens, double context_tokens, double in_cluster,
                              double* predicted_w) const {
  const int n = replicas();
  if (predicted_w) *predicted_w = 0;
  if (arrivals_per_s <= 0 && in_cluster <= 0) return 1;
  if (output_tokens <= 0) return n;  // no answer finished yet: blind, every replica
  // The fewest replicas the requests in the cluster need at one replica's SLO-bound batch.
  const double per_seq = profile_.decode_s_per_seq + profile_.kv_s_per_token * context_tokens;
  const double batch_cap =
      std::max(1.0, (options_.fill * slos_.tpot_slo_s - profile_.memory_s) / per_seq);
  const int floor = std::clamp(static_cast<int>(std::ceil(in_cluster / batch_cap)), 1, n);
  int best = n;
  double best_w = kNoPower;
  for (int k = floor; k <= n; ++k) {
    double replica_w = kNoPower;
    for (double f : profile_.clocks_mhz) {
      const Steady s = predict(f, arrivals_per_s / k, prompt_tokens_per_s / k, output_tokens,
                               context_tokens);
      if (!s.feasible || s.tpot_s > options_.fill * slos_.tpot_slo_s ||
          s.ttft_s > options_.fill * slos_.ttft_slo_s) {
        continue;
      }
      replica_w = std::min(replica_w, s.watts);
    }
    if (replica_w == kNoPower) continue;
    const double total = k * replica_w + (n - k) * profile_.idle_w;
    if (total < best_w * (1 - kPowerTie)) {
      best = k;
      best_w = total;
    }
  }
  if (predicted_w && best_w < kNoPower) *predicted_w = best_w;
  return best;
}

RouterPlan ReplicaRouter::plan(const ClusterObservation& o) {
  RouterPlan out;
  const size_t n = states_.size();
  const size_t seen = std::min(n, o.replicas.size());
  auto alive = [&](size_t i) { return i < seen && o.replicas[i].alive; };
  // The arrival rate, smoothed: one period's arrivals are too noisy to size a cluster by (a
  // burst shows in the requests in the cluster, which set the floor at once).
  const double dt = smoothed_at_s_ < 0 ? kNoPower : std::max(0.0, o.now_s - smoothed_at_s_);
  const double a = 1 - std::exp(-dt / options_.load_tau_s);
  arrivals_per_s_ += a * (o.arrivals_per_s - arrivals_per_s_);
  prompt_tokens_per_s_ += a * (o.prompt_tokens_per_s - prompt_tokens_per_s_);
  if (o.mean_output_tokens > 0) {
    output_tokens_ = output_tokens_ > 0 ? output_tokens_ + a * (o.mean_output_tokens - output_tokens_)
                                        : o.mean_output_tokens;
  }
  smoothed_at_s_ = o.now_s;
  double in_cluster = 0;
  int alive_count = 0;
  for (size_t i = 0; i < seen; ++i) {
    if (!alive(i)) continue;
    ++alive_count;
    in_cluster += o.replicas[i].running + o.replicas[i].waiting;
  }
  if (options_.policy == RoutingPolicy::kLeastLoaded) {
    for (size_t i = 0; i < n; ++i) states_[i] = ReplicaState::kServing;
    out.wanted = out.serving = alive_count;
    out.reason = "least-loaded: every live replica serves";
    return out;
  }
  // Wake-ups done; drained replicas asleep.
  for (size_t i = 0; i < n; ++i) {
    if (states_[i] == ReplicaState::kWaking && o.now_s >= ready_at_s_[i]) {
      states_[i] = ReplicaState::kServing;
    }
    if (states_[i] == ReplicaState::kDraining && alive(i) && o.replicas[i].running <= 0 &&
        o.replicas[i].waiting <= 0) {
      states_[i] = ReplicaState::kAsleep;
    }
  }
  const int wanted = std::min(
      std::max(1, alive_count),
      wanted_for(arrivals_per_s_, prompt_tokens_per_s_, output_tokens_, o.mean_context_tokens,
                 in_cluster, &out.predicted_w));
  out.wanted = wanted;
  int serving = 0;
  for (size_t i = 0; i < n; ++i) serving += alive(i) && serving_or_waking(states_[i]);
  if (wanted > serving) {
    lower_since_s_ = -1;
    // Draining replicas first (they serve at once), then sleepers (after wake_s).
    for (ReplicaState from : {ReplicaState::kDraining, ReplicaState::kAsleep}) {
      for (size_t i = 0; i < n && serving < wanted; ++i) {
        if (!alive(i) || states_[i] != from) continue;
        const bool at_once = from == ReplicaState::kDraining || options_.wake_s <= 0;
        states_[i] = at_once ? ReplicaState::kServing : ReplicaState::kWaking;
        ready_at_s_[i] = o.now_s + (at_once ? 0 : options_.wake_s);
        ++serving;
      }
    }
    out.reason = "woken: the load needs " + std::to_string(wanted) + " replicas";
  } else if (wanted < serving) {
    if (lower_since_s_ < 0) lower_since_s_ = o.now_s;
    out.reason = "holding: " + std::to_string(wanted) + " replicas would do";
    if (o.now_s - lower_since_s_ >= options_.hold_s) {
      // Drain the serving replica with the least work (it empties first).
      int victim = -1;
      for (size_t i = 0; i < seen; ++i) {
        if (!alive(i) || states_[i] != ReplicaState::kServing) continue;
        if (victim < 0 || replica_work(o.replicas[i], profile_.prefill_chunk_tokens) <
                              replica_work(o.replicas[static_cast<size_t>(victim)],
                                   profile_.prefill_chunk_tokens)) {
          victim = static_cast<int>(i);
        }
      }
      int serving_now = 0;
      for (size_t i = 0; i < n; ++i) serving_now += alive(i) && states_[i] == ReplicaState::kServing;
      if (victim >= 0 && serving_now > 1) {
        states_[static_cast<size_t>(victim)] = ReplicaState::kDraining;
        --serving;
        out.reason = "drained replica " + std::to_string(victim) + ": " + std::to_string(wanted) +
                     " replicas were enough for the hold";
      }
      lower_since_s_ = o.now_s;  // the next drain waits a hold of its own
    }
  } else {
    lower_since_s_ = -1;
    out.reason = "steady: " + std::to_string(serving) + " replicas serve";
  }
  out.serving = serving;
  return out;
}

double replica_work(const ReplicaView& v, double chunk_tokens) {
  return v.running + v.waiting + v.queued_prompt_tokens / std::max(chunk_tokens, 1.0);
}

int least_loaded_replica(std::span<const ReplicaView> replicas, double chunk_tokens) {
  int best = -1;
  for (size_t i = 0; i < replicas.size(); ++i) {
    if (!replicas[i].alive) continue;
    if (best < 0 || replica_work(replicas[i], chunk_tokens) <
                        replica_work(replicas[static_cast<size_t>(best)], chunk_tokens)) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

int ReplicaRouter::route(std::span<const ReplicaView> replicas, int affinity) const {
  const size_t n = std::min(replicas.size(), states_.size());
  const double chunk = profile_.prefill_chunk_tokens;
  // Serving replicas first; with none, whatever is alive soonest to serve (never refuse a
  // request a live replica could take).
  for (ReplicaState wanted : {ReplicaState::kServing, ReplicaState::kWaking,
                              ReplicaState::kDraining, ReplicaState::kAsleep}) {
    int best = -1;
    for (size_t i = 0; i < n; ++i) {
      if (!replicas[i].alive || states_[i] != wanted) continue;
      if (best < 0 || replica_work(replicas[i], chunk) < replica_work(replicas[static_cast<size_t>(best)], chunk)) {
        best = static_cast<int>(i);
      }
    }
    if (best < 0) continue;
    if (affinity >= 0 && static_cast<size_t>(affinity) < n && replicas[affinity].alive &&
        states_[static_cast<size_t>(affinity)] == wanted &&
        replica_work(replicas[affinity], chunk) -
                replica_work(replicas[static_cast<size_t>(best)], chunk) <=
            options_.sticky_slack) {
      return affinity;
    }
    return best;
  }
  return -1;
}

int ReplicaRouter::awake() const {
  int count = 0;
  for (ReplicaState s : states_) count += s != ReplicaState::kAsleep;
  return count;
}

}  // namespace zeus
