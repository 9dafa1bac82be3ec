// Unit tests of the planner's steps on hand-checkable inputs (docs/perseus.md).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "perseus/planner/execution_options.h"
#include "perseus/planner/exponential_fit.h"
#include "perseus/planner/pd_step.h"
#include "perseus/planner/pipeline_dag.h"
#include "perseus/planner/python_float.h"

namespace zeus::pfo {
namespace {

TEST(PythonFloat, FloorDivisionFollowsPython) {
  EXPECT_EQ(python_floordiv(1.0, 0.1), 9.0);  // floor(1.0 / 0.1) would be 10
  EXPECT_EQ(python_floordiv(0.05016166687011708, 0.001), 50.0);
  EXPECT_EQ(python_floordiv(7.0, 2.0), 3.0);
  EXPECT_EQ(python_floordiv(-7.0, 2.0), -4.0);
  EXPECT_EQ(python_floordiv(0.3, 0.1), 2.0);  // Python: 0.3 // 0.1 == 2.0
  EXPECT_EQ(python_floordiv(2.5e-6, 1e-6), 2.0);
}

std::string order_text(int stages, int microbatches, int stage) {
  std::string text;
  for (const PipelineInstruction& inst : one_f_one_b_order(stages, microbatches, stage)) {
    if (!text.empty()) text += ' ';
    text += (inst.kind == InstructionKind::kForward ? "F" : "B") + std::to_string(inst.microbatch);
  }
  return text;
}

TEST(OneFOneB, OrderForFourStagesEightMicrobatches) {
  EXPECT_EQ(order_text(4, 8, 0), "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  EXPECT_EQ(order_text(4, 8, 1), "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7");
  EXPECT_EQ(order_text(4, 8, 2), "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7");
  EXPECT_EQ(order_text(4, 8, 3), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
}

TEST(OneFOneB, FewerMicrobatchesThanStages) {
  EXPECT_EQ(order_text(4, 2, 0), "F0 F1 B0 B1");
  EXPECT_EQ(order_text(4, 1, 3), "F0 B0");
}

TEST(PipelineDag, SizeOfEightByTwelve) {
  std::vector<std::vector<PipelineInstruction>> schedule;
  for (int s = 0; s < 8; ++s) schedule.push_back(one_f_one_b_order(8, 12, s));
  PipelineDag dag(schedule);
  // 194 activity-on-node nodes and 354 edges: 2 * 194 arc nodes, 354 + 194 arcs.
  EXPECT_EQ(dag.num_instructions(), 192);
  EXPECT_EQ(dag.num_nodes(), 2 * 194);
  EXPECT_EQ(dag.arcs().size(), 354u + 194u);
}

TEST(PipelineDag, CriticalPathOfHandMadeDag) {
  // 0 -> 1 -> 3 and 0 -> 2 -> 3: with durations 2, 5, 1, 2 the path 0-1-3 (9) is critical.
  PipelineDag dag(4, {{0, 1}, {1, 3}, {0, 2}, {2, 3}});
  std::vector<int> critical;
  EXPECT_EQ(dag.critical_arcs({2, 5, 1, 2}, critical), 9);
  std::vector<int> critical_instructions;
  for (int a : critical) {
    if (dag.arcs()[static_cast<std::size_t>(a)].instruction >= 0) {
      critical_instructions.push_back(dag.arcs()[static_cast<std::size_t>(a)].instruction);
    }
  }
  EXPECT_EQ(critical_instructions, (std::vector<int>{0, 1, 3}));
  // Ties: both branches critical.
  EXPECT_EQ(dag.critical_arcs({2, 5, 5, 2}, critical), 9);
  int instructions = 0;
  for (int a : critical) instructions += dag.arcs()[static_cast<std::size_t>(a)].instruction >= 0;
  EXPECT_EQ(instructions, 4);
}

std::vector<ProfileRow> rows(std::vector<std::tuple<int, double, double>> clocks) {
  std::vector<ProfileRow> out;
  for (auto [mhz, time, energy] : clocks)
    out.push_back({0, InstructionKind::kForward, mhz, time, energy});
  return out;
}

TEST(ExecutionOptions, ParetoFilterQuantiseDedupAndEffectiveEnergy) {
  // 900 MHz is dominated (slower and costlier than 1000); 1300 and 1400 share q = 5.
  auto options = candidate_options(rows({{1400, 0.0051, 30.0},
                                         {1300, 0.0058, 28.0},
                                         {1200, 0.0065, 27.0},
                                         {1100, 0.0072, 26.5},
                                         {1000, 0.0081, 26.0},
                                         {900, 0.0090, 26.5}}),
                                   0.001, 10.0, 0.95);
  ASSERT_TRUE(options) << options.error().to_string();
  std::vector<int> clocks;
  std::vector<int64_t> quant;
  for (const auto& o : *options) {
    clocks.push_back(o.frequency_mhz);
    quant.push_back(o.quant_time);
  }
  EXPECT_EQ(clocks,
            (std::vector<int>{1000, 1100, 1200, 1400}));  // 1400 kept over 1300 (larger energy)
  EXPECT_EQ(quant, (std::vector<int64_t>{8, 7, 6, 5}));
  EXPECT_DOUBLE_EQ(options->front().effective_energy_j, 26.0 - 10.0 * 8 * 0.001);
}

TEST(ExecutionOptions, NoiseFallbackKeepsNearlyDominatedOptions) {
  // Strictly, only 2 survive; within 5 % noise all 5 do.
  auto options = candidate_options(rows({{1400, 0.0051, 30.0},
                                         {1300, 0.0061, 30.5},
                                         {1200, 0.0071, 30.8},
                                         {1100, 0.0081, 31.0},
                                         {1000, 0.0091, 29.9}}),
                                   0.001, 0.0, 0.95);
  ASSERT_TRUE(options) << options.error().to_string();
  EXPECT_EQ(options->size(), 5u);
}

TEST(ExecutionOptions, EffectiveParetoKeepsSlowerClocksThatSaveBlockingEnergy) {
  // 900 MHz is slower and costlier than 1000 MHz in measured energy (26.05 > 26.0) but cheaper
  // in effective energy at 100 W of blocking power (26.05 - 0.9 = 25.15 < 26.0 - 0.8 = 25.2).
  const auto input = rows({{1400, 0.0051, 30.0},
                           {1200, 0.0065, 27.0},
                           {1100, 0.0072, 26.5},
                           {1000, 0.0081, 26.0},
                           {900, 0.0091, 26.05}});
  auto measured = candidate_options(input, 0.001, 100.0, 0.95, ParetoEnergy::kMeasured);
  auto effective = candidate_options(input, 0.001, 100.0, 0.95, ParetoEnergy::kEffective);
  ASSERT_TRUE(measured && effective);
  EXPECT_EQ(measured->front().frequency_mhz, 1000);
  EXPECT_EQ(effective->front().frequency_mhz, 900);
  EXPECT_DOUBLE_EQ(effective->front().energy_j, 26.05);  // the measured energy is kept
  EXPECT_DOUBLE_EQ(effective->front().effective_energy_j, 26.05 - 100.0 * 9 * 0.001);
}

TEST(ExecutionOptions, TooFewOptionsIsAClearError) {
  auto options =
      candidate_options(rows({{1400, 0.0050, 30.0}, {1300, 0.0060, 29.0}}), 0.001, 0.0, 0.95);
  ASSERT_FALSE(options);
  EXPECT_NE(options.error().message.find("at least 4"), std::string::npos);
}

TEST(ExecutionOptions, KnobLookupTakesTheSlowestThatFits) {
  OperationModel model;
  model.options = {{1000, 0.0081, 26, 8, 0}, {1100, 0.0072, 26.5, 7, 0}, {1400, 0.0051, 30, 5, 0}};
  EXPECT_EQ(model.option_for(9).frequency_mhz, 1000);
  EXPECT_EQ(model.option_for(8).frequency_mhz, 1000);
  EXPECT_EQ(model.option_for(7).frequency_mhz, 1100);
  EXPECT_EQ(model.option_for(6).frequency_mhz, 1400);  // nothing at 6: the next faster
  EXPECT_EQ(model.option_for(3).frequency_mhz, 1400);  // below the fastest: the fastest
}

TEST(ExponentialFit, RecoversKnownCoefficients) {
  const ExponentialCost truth{15184.20, -0.149501, 10.9399};
  std::vector<FitPoint> points;
  for (int q = 50; q <= 62; ++q) points.push_back({static_cast<double>(q), truth(q)});
  auto fit = fit_exponential(points, 0.001);
  ASSERT_TRUE(fit) << fit.error().to_string();
  EXPECT_NEAR(fit->cost.a / truth.a, 1.0, 1e-6);
  EXPECT_NEAR(fit->cost.b / truth.b, 1.0, 1e-6);
  EXPECT_NEAR(fit->cost.c / truth.c, 1.0, 1e-6);
  EXPECT_LT(fit->mse, 1e-12);
}

TEST(ExponentialFit, RejectsFitsWithTooFewPoints) {
  EXPECT_FALSE(fit_exponential({{1, 3}, {2, 2}, {3, 1.5}}, 0.001));
}

// Minimum cut with lower bounds against brute force on small random feasible networks.
struct Network {
  int nodes = 0;
  std::vector<BoundedEdge> edges;
};

Network random_feasible_network(std::mt19937& rng) {
  std::uniform_int_distribution<int> node_count(3, 7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Network net;
  net.nodes = node_count(rng);
  // A DAG on nodes in index order; 0 = source, nodes-1 = sink; a path through all nodes keeps it
  // connected. Flows: a random positive flow along random source-sink paths.
  std::vector<std::vector<double>> flow(
      static_cast<std::size_t>(net.nodes),
      std::vector<double>(static_cast<std::size_t>(net.nodes), -1.0));
  for (int u = 0; u + 1 < net.nodes; ++u) flow[u][u + 1] = 0.0;
  for (int u = 0; u < net.nodes; ++u) {
    for (int v = u + 2; v < net.nodes; ++v) {
      if (unit(rng) < 0.4) flow[u][v] = 0.0;
    }
  }
  for (int path = 0; path < 3; ++path) {
    double amount = std::round(unit(rng) * 5.0 + 1.0);
    int u = 0;
    while (u != net.nodes - 1) {
      std::vector<int> next;
      for (int v = u + 1; v < net.nodes; ++v) {
        if (flow[u][v] >= 0.0) next.push_back(v);
      }
      int v = next[static_cast<std::size_t>(rng() % next.size())];
      flow[u][v] += amount;
      u = v;
    }
  }
  for (int u = 0; u < net.nodes; ++u) {
    for (int v = 0; v < net.nodes; ++v) {
      if (flow[u][v] < 0.0) continue;
      const double lower = std::max(0.0, flow[u][v] - std::round(unit(rng) * 3.0));
      const double upper = flow[u][v] + std::round(unit(rng) * 3.0);
      net.edges.push_back({u, v, lower, upper});
    }
  }
  return net;
}

TEST(BoundedMinCut, MatchesBruteForceMinimalMinimumCut) {
  std::mt19937 rng(7);
  BoundedMinCut solver;
  for (int trial = 0; trial < 300; ++trial) {
    Network net = random_feasible_network(rng);
    const int source = 0;
    const int sink = net.nodes - 1;
    double best = 1e300;
    unsigned minimal = 0;
    // Every S with source in and sink out; capacity = sum ub(S->T) - sum lb(T->S).
    for (unsigned mask = 0; mask < (1u << net.nodes); ++mask) {
      if (!(mask & 1u) || (mask >> sink) & 1u) continue;
      double capacity = 0.0;
      for (const BoundedEdge& e : net.edges) {
        const bool from_s = (mask >> e.from) & 1u;
        const bool to_s = (mask >> e.to) & 1u;
        if (from_s && !to_s) capacity += e.upper;
        if (!from_s && to_s) capacity -= e.lower;
      }
      if (capacity < best - 1e-9) {
        best = capacity;
        minimal = mask;
      } else if (std::abs(capacity - best) <= 1e-9) {
        minimal &= mask;  // minimum cuts are closed under intersection
      }
    }
    auto cut = solver.solve(net.nodes, net.edges, source, sink);
    // A warm start from the flow just found gives the same cut.
    auto again = solver.solve(net.nodes, net.edges, source, sink);
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, *cut);
    ASSERT_TRUE(cut) << "trial " << trial;
    unsigned got = 0;
    for (int v = 0; v < net.nodes; ++v) got |= ((*cut)[static_cast<std::size_t>(v)] ? 1u : 0u) << v;
    EXPECT_EQ(got, minimal) << "trial " << trial;
  }
}

TEST(BoundedMinCut, InfeasibleLowerBounds) {
  BoundedMinCut solver;
  // s -> a must carry at least 5 but a -> t carries at most 3.
  std::vector<BoundedEdge> edges = {{0, 1, 5.0, 10.0}, {1, 2, 0.0, 3.0}};
  EXPECT_FALSE(solver.solve(3, edges, 0, 2));
}

// Two chains between source and sink: A (instructions 0 -> 1) and B (instruction 2).
TEST(PhillipsDessoukyStep, TwoChainsSpeedUpTheCheaperCriticalInstruction) {
  PipelineDag dag(3, {{0, 1}});
  auto linear = [](int64_t min_q, int64_t max_q, double slope) {
    return step_operation(min_q, max_q,
                          [slope](int64_t d) { return 100.0 - slope * static_cast<double>(d); });
  };
  // A0: 2..5 at 2 J per unit, A1: 3..5 at 1 J per unit, B: 4..10 at 4 J per unit.
  StepOperation a0 = linear(2, 5, 2.0), a1 = linear(3, 5, 1.0), b = linear(4, 10, 4.0);
  std::vector<const StepOperation*> ops = {&a0, &a1, &b};
  std::vector<int64_t> durations = {5, 5, 6};  // A takes 10, B 6: only A is critical
  std::vector<int> critical;
  ASSERT_EQ(dag.critical_arcs(durations, critical), 10);
  PhillipsDessoukyStep step;
  StepResult result = step.run(dag, critical, ops, durations);
  ASSERT_FALSE(result.stop);
  EXPECT_EQ(result.sped_up, (std::vector<int>{1}));  // A1 is the cheaper one to speed up
  EXPECT_TRUE(result.slowed_down.empty());
  EXPECT_NEAR(result.cost_change, 1.0, 1e-9);
  EXPECT_EQ(durations, (std::vector<int64_t>{5, 4, 6}));
  EXPECT_EQ(dag.critical_arcs(durations, critical), 9);
  // Now until both chains are critical at 6: then both must shorten together.
  for (int k = 0; k < 3; ++k) {
    ASSERT_FALSE(step.run(dag, critical, ops, durations).stop);
    dag.critical_arcs(durations, critical);
  }
  EXPECT_EQ(dag.critical_arcs(durations, critical), 6);
  StepResult both = step.run(dag, critical, ops, durations);
  ASSERT_FALSE(both.stop);
  EXPECT_EQ(both.sped_up.size(), 2u);  // A0 and B together
  EXPECT_NEAR(both.cost_change, 6.0, 1e-9);
  EXPECT_EQ(durations, (std::vector<int64_t>{2, 3, 5}));
  EXPECT_EQ(dag.critical_arcs(durations, critical), 5);
  // A is at its fastest: nothing can shorten the iteration further.
  EXPECT_TRUE(step.run(dag, critical, ops, durations).stop);
}

TEST(PhillipsDessoukyStep, StopsAtTheFastestClocks) {
  PipelineDag dag(1, {});
  const std::vector<double> costs = {20, 15, 12, 10};  // d = 2..5
  StepOperation op =
      step_operation(3, 4, [&costs](int64_t d) { return costs[static_cast<std::size_t>(d - 2)]; });
  std::vector<const StepOperation*> ops = {&op};
  std::vector<int64_t> durations = {3};
  std::vector<int> critical;
  dag.critical_arcs(durations, critical);
  PhillipsDessoukyStep step;
  StepResult result = step.run(dag, critical, ops, durations);
  ASSERT_TRUE(result.stop);
  EXPECT_EQ(durations, (std::vector<int64_t>{3}));
}

}  // namespace
}  // namespace zeus::pfo
