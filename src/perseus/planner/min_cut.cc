#include "perseus/planner/min_cut.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace zeus::pfo {
namespace {

// Augmenting paths below this residual are not worth following (exact zeros after saturation
// are the common case; this guards against endless dust).
constexpr double kAugmentEpsilon = 1e-12;

}  // namespace

void BoundedMinCut::reset(int num_nodes) {
  adjacency_.resize(static_cast<std::size_t>(num_nodes));
  for (auto& list : adjacency_) list.clear();
  level_.assign(static_cast<std::size_t>(num_nodes), -1);
  next_edge_.assign(static_cast<std::size_t>(num_nodes), 0);
}

int BoundedMinCut::add(int from, int to, double forward, double backward) {
  auto& out = adjacency_[static_cast<std::size_t>(from)];
  auto& in = adjacency_[static_cast<std::size_t>(to)];
  out.push_back({to, static_cast<int>(in.size()), forward});
  in.push_back({from, static_cast<int>(out.size()) - 1, backward});
  return static_cast<int>(out.size()) - 1;
}

bool BoundedMinCut::levels_from(int source, int sink) {
  std::fill(level_.begin(), level_.end(), -1);
  queue_.clear();
  queue_.push_back(source);
  level_[static_cast<std::size_t>(source)] = 0;
  for (std::size_t head = 0; head < queue_.size(); ++head) {
    const int node = queue_[head];
    // Nodes at the sink's level or beyond lead nowhere in this phase (a path climbs one level per
    // arc and ends at the sink): left unlabelled, the blocking flow never walks into them. The
    // flow it pushes, and its order, are those of the full labelling.
    const int sink_level = level_[static_cast<std::size_t>(sink)];
    if (sink_level >= 0 && level_[static_cast<std::size_t>(node)] >= sink_level) break;
    for (const Residual& edge : adjacency_[static_cast<std::size_t>(node)]) {
      if (edge.capacity > kAugmentEpsilon && level_[static_cast<std::size_t>(edge.to)] < 0) {
        level_[static_cast<std::size_t>(edge.to)] = level_[static_cast<std::size_t>(node)] + 1;
        queue_.push_back(edge.to);
      }
    }
  }
  return level_[static_cast<std::size_t>(sink)] >= 0;
}

double BoundedMinCut::blocking_flow(int source, int sink) {
  // A depth-first search along the level graph that keeps each node's current edge, so that no
  // path prefix is walked twice. Written with an explicit stack of frames (an augmenting path is
  // as long as the critical path, which grows with the microbatches): frame k pushes at most
  // `limit` through its node; a child's result returns to its parent as `returned`. The
  // arithmetic, and its order, is that of the plain recursive form.
  constexpr double kUnlimited = std::numeric_limits<double>::infinity();
  frames_.clear();
  frames_.push_back({source, kUnlimited, 0.0});
  double returned = 0.0;
  bool child_returned = false;
  while (!frames_.empty()) {
    Frame& frame = frames_.back();
    if (frame.node == sink) {
      returned = frame.limit;
      frames_.pop_back();
      child_returned = true;
      continue;
    }
    auto& edges = adjacency_[static_cast<std::size_t>(frame.node)];
    std::size_t& i = next_edge_[static_cast<std::size_t>(frame.node)];
    if (child_returned) {
      child_returned = false;
      if (returned > 0.0) {
        Residual& edge = edges[i];
        edge.capacity -= returned;
        adjacency_[static_cast<std::size_t>(edge.to)][static_cast<std::size_t>(edge.reverse)]
            .capacity += returned;
        frame.pushed += returned;
        if (frame.pushed >= frame.limit) {  // keep this edge: it may carry more next time
          returned = frame.pushed;
          frames_.pop_back();
          child_returned = true;
          continue;
        }
      }
      ++i;
    }
    const int next_level = level_[static_cast<std::size_t>(frame.node)] + 1;
    for (; i < edges.size(); ++i) {
      const Residual& edge = edges[i];
      if (edge.capacity > kAugmentEpsilon &&
          level_[static_cast<std::size_t>(edge.to)] == next_level)
        break;
    }
    if (i < edges.size()) {
      const Frame child{edges[i].to, std::min(frame.limit - frame.pushed, edges[i].capacity), 0.0};
      frames_.push_back(child);  // `frame` is not used after this
      continue;
    }
    level_[static_cast<std::size_t>(frame.node)] = -1;  // a dead end for the rest of this phase
    returned = frame.pushed;
    frames_.pop_back();
    child_returned = true;
  }
  return returned;
}

double BoundedMinCut::max_flow(int source, int sink) {
  double total = 0.0;
  while (levels_from(source, sink)) {
    std::fill(next_edge_.begin(), next_edge_.end(), 0);
    total += blocking_flow(source, sink);
  }
  return total;
}

std::optional<std::vector<char>> BoundedMinCut::solve(int num_nodes,
                                                      std::vector<BoundedEdge>& edges, int source,
                                                      int sink) {
  const int super_source = num_nodes;
  const int super_sink = num_nodes + 1;
  reset(num_nodes + 2);
  imbalance_.assign(static_cast<std::size_t>(num_nodes), 0.0);
  edge_index_.clear();
  for (const BoundedEdge& edge : edges) {
    const double flow = std::max(edge.lower, std::min(edge.upper, edge.flow));
    const double above_lower = flow - edge.lower;
    edge_index_.push_back(
        add(edge.from, edge.to, edge.upper - edge.lower - above_lower, above_lower));
    imbalance_[static_cast<std::size_t>(edge.to)] += flow;
    imbalance_[static_cast<std::size_t>(edge.from)] -= flow;
  }
  const std::size_t back_index =
      static_cast<std::size_t>(add(sink, source, std::numeric_limits<double>::infinity(), 0.0));
  // The super edges come last in every list, so that they can be cut off after the first flow;
  // super edges of capacity zero are left out (they carry nothing and only cost scanning).
  std::vector<std::size_t> original_size(adjacency_.size());
  for (std::size_t v = 0; v < adjacency_.size(); ++v) original_size[v] = adjacency_[v].size();
  // Each node's imbalance (inflow - outflow of the starting flow) goes to the super source/sink.
  for (int v = 0; v < num_nodes; ++v) {
    const double excess = imbalance_[static_cast<std::size_t>(v)];
    if (excess > 0.0) add(super_source, v, excess, 0.0);
    if (excess < 0.0) add(v, super_sink, -excess, 0.0);
  }
  max_flow(super_source, super_sink);
  // Feasible only when every super edge is saturated.
  for (const Residual& edge : adjacency_[static_cast<std::size_t>(super_source)]) {
    if (std::abs(edge.capacity) > tolerance_) return std::nullopt;
  }
  for (const Residual& edge : adjacency_[static_cast<std::size_t>(super_sink)]) {
    // The reverse residual of v -> t' holds its flow; its forward residual must be ~0.
    const Residual& forward =
        adjacency_[static_cast<std::size_t>(edge.to)][static_cast<std::size_t>(edge.reverse)];
    if (std::abs(forward.capacity) > tolerance_) return std::nullopt;
  }
  // Remove the super edges and t -> s; what remains is the residual network of a feasible flow.
  for (std::size_t v = 0; v < adjacency_.size(); ++v) adjacency_[v].resize(original_size[v]);
  Residual& back = adjacency_[static_cast<std::size_t>(sink)][back_index];
  back.capacity = 0.0;
  adjacency_[static_cast<std::size_t>(source)][static_cast<std::size_t>(back.reverse)].capacity =
      0.0;
  // Residuals within the tolerance of zero count as zero (as the reference's second flow does).
  for (auto& list : adjacency_) {
    for (Residual& edge : list) {
      if (std::abs(edge.capacity) < tolerance_) edge.capacity = 0.0;
    }
  }
  max_flow(source, sink);
  // Source side: reachable through residuals above the tolerance.
  std::vector<char> source_side(static_cast<std::size_t>(num_nodes), 0);
  queue_.clear();
  queue_.push_back(source);
  source_side[static_cast<std::size_t>(source)] = 1;
  for (std::size_t head = 0; head < queue_.size(); ++head) {
    const int node = queue_[head];
    for (const Residual& edge : adjacency_[static_cast<std::size_t>(node)]) {
      if (edge.to >= num_nodes || source_side[static_cast<std::size_t>(edge.to)]) continue;
      if (std::abs(edge.capacity) > tolerance_) {
        source_side[static_cast<std::size_t>(edge.to)] = 1;
        queue_.push_back(edge.to);
      }
    }
  }
  for (std::size_t e = 0; e < edges.size(); ++e) {
    const Residual& forward = adjacency_[static_cast<std::size_t>(edges[e].from)]
                                        [static_cast<std::size_t>(edge_index_[e])];
    edges[e].flow =
        edges[e].lower +
        adjacency_[static_cast<std::size_t>(forward.to)][static_cast<std::size_t>(forward.reverse)]
            .capacity;
  }
  return source_side;
}

}  // namespace zeus::pfo
