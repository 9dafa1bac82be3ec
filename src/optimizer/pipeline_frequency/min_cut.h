// Minimum s-t cut of a network whose edges carry a flow lower bound and an upper bound
// (PERSEUS.md §4.5), by two maximum flows (Dinic):
//   1. a feasible flow: capacities ub - lb, a super source feeding every node the lower bounds
//      of its incoming edges and a super sink draining those of its outgoing edges, t -> s
//      unbounded; infeasible when a super edge is left unsaturated by more than `tolerance`;
//   2. from that flow, the maximum s -> t flow in the residual network (forward ub - f,
//      backward f - lb).
// The source side is every node reachable from s in the final residual network through
// residuals above `tolerance`: the inclusion-minimal minimum cut, the same whatever max-flow
// algorithm found the flow. Pure; the object keeps scratch buffers between calls.
#pragma once

#include <optional>
#include <vector>

namespace zeus::pfo {

struct BoundedEdge {
  int from = 0;
  int to = 0;
  double lower = 0.0;
  double upper = 0.0;
};

class BoundedMinCut {
 public:
  explicit BoundedMinCut(double tolerance = 1e-6) : tolerance_(tolerance) {}

  // Node ids are 0..num_nodes-1. Returns, per node, whether it is on the source side; nullopt
  // when no flow satisfies the lower bounds.
  std::optional<std::vector<char>> solve(int num_nodes, const std::vector<BoundedEdge>& edges,
                                         int source, int sink);

 private:
  struct Residual {
    int to;
    int reverse;  // index of the paired edge in adjacency_[to]
    double capacity;
  };
  void reset(int num_nodes);
  int add(int from, int to, double capacity);  // returns the index in adjacency_[from]
  double max_flow(int source, int sink);
  bool levels_from(int source, int sink);
  double push(int node, int sink, double limit);

  double tolerance_;
  std::vector<std::vector<Residual>> adjacency_;
  std::vector<int> level_;
  std::vector<std::size_t> next_edge_;
  std::vector<int> queue_;
};

}  // namespace zeus::pfo
