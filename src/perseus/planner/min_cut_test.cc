#include "perseus/planner/min_cut.h"

#include <gtest/gtest.h>

#include <vector>

namespace zeus::pfo {
namespace {

// An augmenting path is as long as the pipeline's critical path, which grows with
// the microbatches; a search that recursed once per node of the path overflowed the stack. A
// chain of half a million nodes (a path far deeper than any call stack allows) must be solved.
TEST(BoundedMinCut, LongAugmentingPathNeedsNoDeepStack) {
  constexpr int kNodes = 500'000;
  constexpr int kNarrow = kNodes / 2;  // the edge kNarrow -> kNarrow + 1 is the bottleneck
  std::vector<BoundedEdge> edges;
  for (int v = 0; v + 1 < kNodes; ++v) {
    edges.push_back({v, v + 1, 1.0, v == kNarrow ? 2.0 : 3.0});
  }
  BoundedMinCut solver;
  auto cut = solver.solve(kNodes, edges, 0, kNodes - 1);
  ASSERT_TRUE(cut);
  for (int v = 0; v < kNodes; ++v) {
    ASSERT_EQ((*cut)[static_cast<std::size_t>(v)] != 0, v <= kNarrow) << "node " << v;
  }
  for (const BoundedEdge& edge : edges) ASSERT_DOUBLE_EQ(edge.flow, 2.0);
}

}  // namespace
}  // namespace zeus::pfo
