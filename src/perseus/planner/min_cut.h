// Minimum s-t cut of a network whose edges carry a flow lower bound and an upper bound
// (docs/perseus.md), by two maximum flows (Dinic):
//   1. a feasible flow: capacities ub - lb over the edges' starting flows, a super source and
//      sink that settle every node's imbalance, t -> s unbounded; infeasible when a super edge
//      is left unsaturated by more than `tolerance`;
//   2. from that flow, the maximum s -> t flow in the residual network (forward ub - f,
//      backward f - lb).
// The source side is every node reachable from s in the final residual network through
// residuals above `tolerance`: the inclusion-minimal minimum cut, the same whatever max-flow
// algorithm found the flow and whatever flow it started from. A good starting flow (the last
// step's) only makes it faster. Pure; the object keeps scratch buffers between calls.
#pragma once

#include <optional>
#include <vector>

namespace zeus::pfo {

struct BoundedEdge {
  int from = 0;
  int to = 0;
  double lower = 0.0;
  double upper = 0.0;
  double flow = 0.0;  // starting flow (clamped into [lower, upper]); the final flow on return
};

class BoundedMinCut {
 public:
  explicit BoundedMinCut(double tolerance = 1e-6) : tolerance_(tolerance) {}

  // Node ids are 0..num_nodes-1. Returns, per node, whether it is on the source side, and sets
  // each edge's `flow` to a maximum flow; nullopt when no flow satisfies the lower bounds.
  std::optional<std::vector<char>> solve(int num_nodes, std::vector<BoundedEdge>& edges, int source,
                                         int sink);

 private:
  struct Residual {
    int to;
    int reverse;  // index of the paired edge in adjacency_[to]
    double capacity;
  };
  void reset(int num_nodes);
  // Adds from -> to with residual `forward` and its pair with `backward`; returns its index.
  int add(int from, int to, double forward, double backward);
  double max_flow(int source, int sink);
  bool levels_from(int source, int sink);
  // One phase of Dinic: the blocking flow of the level graph; returns the flow pushed.
  double blocking_flow(int source, int sink);
  struct Frame {
    int node;
    double limit;   // the most this node may pass on
    double pushed;  // what it has passed on so far
  };

  double tolerance_;
  std::vector<std::vector<Residual>> adjacency_;
  std::vector<int> level_;
  std::vector<std::size_t> next_edge_;
  std::vector<int> queue_;
  std::vector<Frame> frames_;
  std::vector<double> imbalance_;
  std::vector<int> edge_index_;
};

}  // namespace zeus::pfo
