// The replica router (issue 50): least-loaded routing, the pack policy's count of serving
// replicas from the profile's steady state, wake-ups at once and drains after a hold, the floor
// the requests in the cluster set, dead replicas routed around, affinity, and refused knobs.
#include "zeus/serving/replica_router.h"

#include <gtest/gtest.h>

namespace zeus {
namespace {

GovernorOptions slos() { return GovernorOptions{.ttft_slo_s = 0.5, .tpot_slo_s = 0.02}; }

std::unique_ptr<ReplicaRouter> make(RoutingPolicy policy, int replicas, RouterOptions o = {}) {
  o.policy = policy;
  auto router = ReplicaRouter::create(ServingProfile::parametric_h100(), slos(), o, replicas);
  EXPECT_TRUE(router.has_value()) << router.error().to_string();
  return std::move(*router);
}

ClusterObservation load(double now, double arrivals_per_s, int replicas, double running = 0) {
  ClusterObservation o;
  o.now_s = now;
  o.arrivals_per_s = arrivals_per_s;
  o.prompt_tokens_per_s = arrivals_per_s * 800;
  o.mean_output_tokens = 200;
  o.mean_context_tokens = 900;
  o.replicas.assign(static_cast<size_t>(replicas), ReplicaView{});
  for (auto& r : o.replicas) r.running = running / replicas;
  return o;
}

int serving(const ReplicaRouter& r) {
  int n = 0;
  for (int i = 0; i < r.replicas(); ++i) n += r.state(i) == ReplicaState::kServing;
  return n;
}

TEST(ReplicaRouterTest, LeastLoadedSendsEachRequestWhereTheLeastWorkIsAndSkipsTheDead) {
  auto router = make(RoutingPolicy::kLeastLoaded, 3);
  std::vector<ReplicaView> v(3);
  v[0].running = 5;
  v[1].running = 2;
  v[2].running = 2;
  v[2].queued_prompt_tokens = 4096;  // two chunks of prefill waiting: more work than replica 1
  EXPECT_EQ(router->route(v), 1);
  v[1].alive = false;
  EXPECT_EQ(router->route(v), 2);
  v[0].alive = v[2].alive = false;
  EXPECT_EQ(router->route(v), -1);  // nobody can take it
  router->plan(load(1, 50, 3));
  EXPECT_EQ(serving(*router), 3);  // least-loaded: everyone serves, whatever the load
}

TEST(ReplicaRouterTest, AnAffinityHoldsWhileItsReplicaIsNotMuchBusier) {
  auto router = make(RoutingPolicy::kLeastLoaded, 2, RouterOptions{.sticky_slack = 3});
  std::vector<ReplicaView> v(2);
  v[0].running = 4;
  v[1].running = 2;
  EXPECT_EQ(router->route(v, 0), 0);  // 2 busier: within the slack
  v[0].running = 6;
  EXPECT_EQ(router->route(v, 0), 1);  // 4 busier: the least loaded wins
  EXPECT_EQ(router->route(v, 7), 1);  // an affinity that is no replica is ignored
}

TEST(ReplicaRouterTest, ThePredictedSteadyStateSlowsWithLoadAndLowerClocksAndSaturates) {
  auto router = make(RoutingPolicy::kPack, 4);
  const auto light = router->predict(1980, 1, 800, 200, 900);
  const auto heavy = router->predict(1980, 8, 6400, 200, 900);
  const auto slow = router->predict(930, 8, 6400, 200, 900);
  ASSERT_TRUE(light.feasible && heavy.feasible && slow.feasible);
  EXPECT_LT(light.tpot_s, heavy.tpot_s);
  EXPECT_LT(heavy.tpot_s, slow.tpot_s);
  EXPECT_LT(light.watts, heavy.watts);
  EXPECT_LT(slow.watts, heavy.watts);  // a lower clock draws less
  EXPECT_FALSE(router->predict(1980, 200, 160000, 200, 900).feasible);  // cannot keep up
}

TEST(ReplicaRouterTest, PackServesWithTheFewestReplicasALightLoadNeedsAndMoreAsItGrows) {
  auto router = make(RoutingPolicy::kPack, 4);
  double light_w = 0, heavy_w = 0;
  const int light = router->wanted_for(1, 800, 200, 900, 2, &light_w);
  const int heavy = router->wanted_for(40, 32000, 200, 900, 100, &heavy_w);
  EXPECT_EQ(light, 1);
  EXPECT_GT(heavy, light);
  EXPECT_GT(heavy_w, light_w);
  EXPECT_EQ(router->wanted_for(0, 0, 0, 0, 0, nullptr), 1);     // nothing to serve
  EXPECT_EQ(router->wanted_for(1, 800, 0, 900, 1, nullptr), 4);  // no answer seen: blind, all
  // The requests in the cluster set a floor: 300 running need several replicas' batches.
  EXPECT_GE(router->wanted_for(1, 800, 200, 900, 300, nullptr), 2);
}

TEST(ReplicaRouterTest, PackDrainsOneReplicaPerHoldAndWakesAtOnceWithTheWakeLatency) {
  auto router = make(RoutingPolicy::kPack, 4, RouterOptions{.wake_s = 2, .hold_s = 10});
  double t = 0;
  router->plan(load(t, 1, 4, 2));
  EXPECT_EQ(serving(*router), 4);  // a lower count must hold first
  for (t = 0.5; t < 10; t += 0.5) router->plan(load(t, 1, 4, 2));
  EXPECT_EQ(serving(*router), 4);
  router->plan(load(10.5, 1, 4, 2));
  EXPECT_EQ(serving(*router), 3);  // one replica drains after the hold
  int draining = -1;
  for (int i = 0; i < 4; ++i) {
    if (router->state(i) == ReplicaState::kDraining) draining = i;
  }
  ASSERT_GE(draining, 0);
  std::vector<ReplicaView> v(4);
  EXPECT_NE(router->route(v), draining);  // it gets no new request
  // Empty, it falls asleep; more drain, one per hold, down to the one the load needs.
  for (t = 11; t < 60; t += 0.5) router->plan(load(t, 1, 4, 0));
  EXPECT_EQ(serving(*router), 1);
  EXPECT_EQ(router->awake(), 1);
  // A heavy load wakes sleepers at once; they serve after wake_s.
  RouterPlan woken = router->plan(load(60, 60, 4, 200));
  EXPECT_GT(woken.wanted, 1);
  int waking = 0;
  for (int i = 0; i < 4; ++i) waking += router->state(i) == ReplicaState::kWaking;
  EXPECT_GT(waking, 0);
  EXPECT_EQ(serving(*router), 1);
  router->plan(load(62.5, 60, 4, 200));
  EXPECT_GT(serving(*router), 1);
}

TEST(ReplicaRouterTest, ADeadReplicaIsNotCountedAndAnotherWakesInItsPlace) {
  auto router = make(RoutingPolicy::kPack, 3, RouterOptions{.wake_s = 0, .hold_s = 0});
  for (double t = 0; t < 5; t += 0.5) router->plan(load(t, 1, 3, 0));
  ASSERT_EQ(serving(*router), 1);
  int alive_one = -1;
  for (int i = 0; i < 3; ++i) {
    if (router->state(i) == ReplicaState::kServing) alive_one = i;
  }
  ClusterObservation o = load(6, 1, 3, 0);
  o.replicas[static_cast<size_t>(alive_one)].alive = false;
  router->plan(o);
  int serving_alive = 0;
  for (int i = 0; i < 3; ++i) {
    serving_alive += i != alive_one && router->state(i) == ReplicaState::kServing;
  }
  EXPECT_EQ(serving_alive, 1);
  EXPECT_NE(router->route(o.replicas), alive_one);
}

TEST(ReplicaRouterTest, BadKnobsAreRefusedByName) {
  const ServingProfile p = ServingProfile::parametric_h100();
  EXPECT_FALSE(ReplicaRouter::create(p, slos(), {}, 0).has_value());
  EXPECT_FALSE(ReplicaRouter::create(p, slos(), {}, ReplicaRouter::kMaxReplicas + 1).has_value());
  auto fill = ReplicaRouter::create(p, slos(), RouterOptions{.fill = 1.5}, 2);
  ASSERT_FALSE(fill.has_value());
  EXPECT_NE(fill.error().message.find("fill is 1.5"), std::string::npos) << fill.error().message;
  EXPECT_FALSE(ReplicaRouter::create(p, slos(), RouterOptions{.wake_s = -1}, 2).has_value());
  EXPECT_FALSE(ReplicaRouter::create(p, GovernorOptions{.tpot_slo_s = 0}, {}, 2).has_value());
  EXPECT_TRUE(parse_routing_policy("pack").has_value());
  EXPECT_FALSE(parse_routing_policy("random").has_value());
}

}  // namespace
}  // namespace zeus
