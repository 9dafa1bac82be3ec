// The serving simulator's engine: a trace replayed through one or more replicas of a
// continuously batching server (zeus/serving/sim_serving.h describes the model), each under its
// own clock policy, with a ReplicaRouter (zeus/serving/replica_router.h) choosing where each
// request runs and which replicas sleep. One replica under a least-loaded router is the
// single-server model. Pure; internal to src/serving/simulation/.
//
// Events in time order: a control tick (the router's plan, then each replica's clock policy),
// an iteration's end (tokens, first tokens, finished requests), an arrival (routed at once: the
// proxy sees it then; the replica takes it into its batch at its next iteration). A replica
// asleep sits at its lowest clock and idle power; a waking one starts no iteration before the
// router says it serves. Under a power budget the budget lowers the policies' clocks each tick;
// under a power cap each iteration's clock is throttled until its power fits the cap.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "zeus/serving/power_budget.h"
#include "zeus/serving/replica_router.h"
#include "zeus/serving/sim_serving.h"

namespace zeus::sim {

// What a clock policy answers each control period: the SM clock (MHz).
using ClockPolicy = std::function<double(const ServingObservation&)>;

struct RequestOutcome {
  double ttft_s = -1;
  double tpot_s = -1;  // -1: one output token, no TPOT
};

// Points of a timeline (a chart's), at most 2 x kMaxPoints: past that, every other point is
// dropped and from then on only every `stride`-th is kept (a month of periods stays small).
struct Timeline {
  static constexpr size_t kMaxPoints = 20000;
  std::vector<std::pair<double, double>> points;
  size_t stride = 1, seen = 0;
  void push(double t, double value);
};

struct ClusterRun {
  double energy_j = 0;
  double clock_integral = 0;  // MHz x s, summed over replicas
  double awake_integral = 0;  // replicas awake x s
  double end_s = 0;
  std::vector<RequestOutcome> outcomes;
  Timeline clocks;  // the mean clock over replicas, at each change
  Timeline load;    // requests running and waiting, each period
  Timeline awake;   // replicas not asleep, at each change
  // Whole seconds of the run (from the first arrival), and those whose mean power over every
  // replica exceeded `budget_w` (when given).
  int windows = 0, windows_over = 0;
  double peak_window_w = 0;
};

struct ClusterSetup {
  int replicas = 1;
  // The clock policy of replica i (called once per replica, before the replay).
  std::function<ClockPolicy(int replica)> clock_policy;
  ReplicaRouter* router = nullptr;  // required; its replica count is `replicas`
  // Clocks under a power budget: each tick, after the policies, the budget lowers what they
  // propose (null: none).
  PowerBudget* budget = nullptr;
  // A per-GPU power cap the firmware holds: each iteration runs at the highest clock at or under
  // the one in force whose power stays under it (0: none).
  double cap_w = 0;
  double budget_w = 0;  // the windows are counted against this (0: not counted)
  // Prefill and decode apart (vLLM's and SGLang's P/D): replicas [0, prefill_replicas) only
  // prefill (requests arrive there, least-loaded), the others only decode; a prompt's KV cache
  // reaches the least-loaded decode replica kv_transfer_s_per_token x its tokens after its first
  // token (0 replicas: every replica does both).
  int prefill_replicas = 0;
  double kv_transfer_s_per_token = 2e-6;
};

ClusterRun replay_cluster(const ServingTrace& trace, const ServingSimOptions& options,
                          const ClusterSetup& setup);

}  // namespace zeus::sim
