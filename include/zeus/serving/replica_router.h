// The replica router: where each request runs when one model is served by several replicas
// (one server each, its own GPUs), and how many replicas stay awake. Two policies:
//   - least-loaded (the default): every replica serves; a request goes to the replica with the
//     least work in it (requests running and waiting, plus its queued prompt tokens in prefill
//     chunks).
//   - pack (energy-aware): the fewest replicas that hold the SLOs serve, the others drain (they
//     get no new request, finish what they run) and then sleep at their lowest clock. A larger
//     batch costs less energy per token (a decode iteration reads the weights once for the whole
//     batch), so the router predicts, for every count k of serving replicas, the steady state of
//     one replica carrying 1/k of the load (the profile's iteration time as a fixed point of the
//     batch it sustains: t = memory_s / (1 - (decode_s x slow + kv_s x context) x tokens_per_s
//     - prefill_s x slow x prompt_tokens_per_s), slow = max / f), finds the lowest clock at which
//     its TPOT and TTFT stay under `fill` x their SLOs, and serves with the k of least predicted
//     power (ties: fewer). It also never serves with fewer replicas than the requests in the
//     cluster need at the batch one replica can carry within the SLOs at its highest clock.
//     The rates are smoothed over load_tau_s; a burst raises the floor at once. More replicas are woken at once (a sleeper takes `wake_s` to serve: a GPU clock raised, or
//     an engine's sleep mode left); fewer only after the lower count was enough for `hold_s`,
//     and then one replica at a time. A replica that is not alive gets nothing and is not
//     counted.
// Per-request routing among the serving replicas is least-loaded under both policies; a request
// with an affinity (the same conversation) stays on its replica while that replica serves and is
// at most `sticky_slack` requests busier than the least loaded.
// Pure: no I/O, no clock of its own (times come in the observations). Thread-safety: one router
// per thread. Failure: create() answers InvalidArgument for no replica, more than kMaxReplicas,
// options out of range, or a profile that ServingProfile::validate() refuses.
//
//   auto router = ReplicaRouter::create(profile, slos, RouterOptions{.policy = RoutingPolicy::kPack}, 4);
//   router->plan(cluster_observation);               // each control period
//   int replica = router->route(views, affinity);    // each request (-1: none can take it)
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/serving/serving_governor.h"

namespace zeus {

enum class RoutingPolicy { kLeastLoaded, kPack };
const char* routing_policy_name(RoutingPolicy policy);  // "least-loaded", "pack"
Result<RoutingPolicy> parse_routing_policy(const std::string& name);

struct RouterOptions {
  RoutingPolicy policy = RoutingPolicy::kLeastLoaded;
  double fill = 0.7;          // predicted latencies at most fill x SLO: (0, 1]
  double wake_s = 0.5;        // a sleeping replica's time until it serves: 0 to 600 s
  double hold_s = 30;         // fewer replicas enough this long before one drains: 0 to 1 h
  double load_tau_s = 5;      // the arrival rate is smoothed over about this: (0, 1 h]
  double sticky_slack = 4;    // an affinity holds while its replica is this much busier: >= 0
  Result<void> validate() const;  // InvalidArgument naming the knob, its value and its range
};

// A replica as the router sees it.
struct ReplicaView {
  bool alive = true;                 // answering (false: routed around, never counted)
  double running = 0;                // requests producing tokens
  double waiting = 0;                // requests not yet answered a first token
  double queued_prompt_tokens = 0;   // prompt tokens of the waiting requests not yet prefilled
};

// What the router sees each control period, over the whole cluster.
struct ClusterObservation {
  double now_s = 0;
  double arrivals_per_s = 0;        // requests arriving over the last period
  double prompt_tokens_per_s = 0;   // their prompt tokens
  double mean_output_tokens = 0;    // of the requests finished (0: none yet)
  double mean_context_tokens = 0;   // prompt + output so far, mean over the running requests
  std::vector<ReplicaView> replicas;  // one per replica, in the router's order
};

// A replica's work: requests running and waiting, plus its queued prompt tokens in prefill
// chunks of `chunk_tokens`. The least-loaded replica of `replicas` by it, among the live ones
// (the first of equals; -1: none alive). The router's rule, and the simulator's within a pool.
double replica_work(const ReplicaView& replica, double chunk_tokens);
int least_loaded_replica(std::span<const ReplicaView> replicas, double chunk_tokens);

enum class ReplicaState {
  kServing,   // takes requests
  kWaking,    // will serve from `ready_at_s`; takes none before
  kDraining,  // takes none; finishes its requests, then sleeps
  kAsleep,    // takes none; at its lowest clock
};
const char* replica_state_name(ReplicaState state);

struct RouterPlan {
  int wanted = 0;              // replicas the load needs now (before the hold)
  int serving = 0;             // replicas serving or waking after this plan
  double predicted_w = 0;      // the cluster's predicted power at `wanted` (0: not predicted)
  std::string reason;          // why, in words (logged)
};

class ReplicaRouter {
 public:
  static constexpr int kMaxReplicas = 256;
  static Result<std::unique_ptr<ReplicaRouter>> create(ServingProfile profile,
                                                       GovernorOptions slos,
                                                       RouterOptions options, int replicas);

  // Each control period: the states, from the load.
  RouterPlan plan(const ClusterObservation& observation);
  // Each request: the serving replica with the least work (or the affinity's; -1: none alive).
  // `affinity` is the replica that served the same conversation before (-1: none).
  int route(std::span<const ReplicaView> replicas, int affinity = -1) const;

  ReplicaState state(int replica) const { return states_[static_cast<size_t>(replica)]; }
  int replicas() const { return static_cast<int>(states_.size()); }
  // Replicas not asleep (serving, waking or draining): those drawing more than idle power.
  int awake() const;

  // The predicted steady state of one replica at clock f carrying the given rates: iteration
  // seconds (the TPOT), the TTFT of a mean prompt, watts (busy share included); false when the
  // replica could not keep up (prefill and decode work reach the iteration time).
  struct Steady {
    bool feasible = false;
    double tpot_s = 0, ttft_s = 0, watts = 0;
  };
  Steady predict(double clock_mhz, double arrivals_per_s, double prompt_tokens_per_s,
                 double output_tokens, double context_tokens) const;
  // The least-power count of serving replicas for a cluster load (0 requests: 1).
  int wanted_for(double arrivals_per_s, double prompt_tokens_per_s, double output_tokens,
                 double context_tokens, double in_cluster, double* predicted_w) const;

 private:
  ReplicaRouter(ServingProfile profile, GovernorOptions slos, RouterOptions options, int replicas);

  ServingProfile profile_;
  GovernorOptions slos_;
  RouterOptions options_;
  std::vector<ReplicaState> states_;
  std::vector<double> ready_at_s_;  // kWaking: when it serves
  double smoothed_at_s_ = -1;       // when the smoothed load was last updated (-1: never)
  double arrivals_per_s_ = 0, prompt_tokens_per_s_ = 0;  // smoothed
  double output_tokens_ = 0;        // smoothed mean answer length (0: none seen)
  double lower_since_s_ = -1;       // when fewer replicas first sufficed (-1: not now)
};

}  // namespace zeus
