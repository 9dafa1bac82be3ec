#include "optimizer/pipeline_frequency/min_cut.h"

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

int BoundedMinCut::add(int from, int to, double capacity) {
  auto& out = adjacency_[static_cast<std::size_t>(from)];
  auto& in = adjacency_[static_cast<std::size_t>(to)];
  out.push_back({to, static_cast<int>(in.size()), capacity});
  in.push_back({from, static_cast<int>(out.size()) - 1, 0.0});
  return static_cast<int>(out.size()) - 1;
}

bool BoundedMinCut::levels_from(int source, int sink) {
  std::fill(level_.begin(), level_.end(), -1);
  queue_.clear();
  queue_.push_back(source);
  level_[static_cast<std::size_t>(source)] = 0;
  for (std::size_t head = 0; head < queue_.size(); ++head) {
    const int node = queue_[head];
    for (const Residual& edge : adjacency_[static_cast<std::size_t>(node)]) {
      if (edge.capacity > kAugmentEpsilon && level_[static_cast<std::size_t>(edge.to)] < 0) {
        level_[static_cast<std::size_t>(edge.to)] = level_[static_cast<std::size_t>(node)] + 1;
        queue_.push_back(edge.to);
      }
    }
  }
  return level_[static_cast<std::size_t>(sink)] >= 0;
}

double BoundedMinCut::push(int node, int sink, double limit) {
  if (node == sink) return limit;
  auto& edges = adjacency_[static_cast<std::size_t>(node)];
  for (std::size_t& i = next_edge_[static_cast<std::size_t>(node)]; i < edges.size(); ++i) {
    Residual& edge = edges[i];
    if (edge.capacity <= kAugmentEpsilon ||
        level_[static_cast<std::size_t>(edge.to)] != level_[static_cast<std::size_t>(node)] + 1) {
      continue;
    }
    const double pushed = push(edge.to, sink, std::min(limit, edge.capacity));
    if (pushed > 0.0) {
      edge.capacity -= pushed;
      adjacency_[static_cast<std::size_t>(edge.to)][static_cast<std::size_t>(edge.reverse)]
          .capacity += pushed;
      return pushed;
    }
  }
  return 0.0;
}

double BoundedMinCut::max_flow(int source, int sink) {
  double total = 0.0;
  while (levels_from(source, sink)) {
    std::fill(next_edge_.begin(), next_edge_.end(), 0);
    while (true) {
      const double pushed = push(source, sink, std::numeric_limits<double>::infinity());
      if (pushed <= 0.0) break;
      total += pushed;
    }
  }
  return total;
}

std::optional<std::vector<char>> BoundedMinCut::solve(int num_nodes,
                                                      const std::vector<BoundedEdge>& edges,
                                                      int source, int sink) {
  const int super_source = num_nodes;
  const int super_sink = num_nodes + 1;
  reset(num_nodes + 2);
  std::vector<double> lower_in(static_cast<std::size_t>(num_nodes), 0.0);
  std::vector<double> lower_out(static_cast<std::size_t>(num_nodes), 0.0);
  for (const BoundedEdge& edge : edges) {
    add(edge.from, edge.to, edge.upper - edge.lower);
    lower_in[static_cast<std::size_t>(edge.to)] += edge.lower;
    lower_out[static_cast<std::size_t>(edge.from)] += edge.lower;
  }
  const std::size_t back_index =
      static_cast<std::size_t>(add(sink, source, std::numeric_limits<double>::infinity()));
  for (int v = 0; v < num_nodes; ++v) {
    add(super_source, v, lower_in[static_cast<std::size_t>(v)]);
    add(v, super_sink, lower_out[static_cast<std::size_t>(v)]);
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
  for (Residual& edge : adjacency_[static_cast<std::size_t>(super_source)]) {
    edge.capacity = 0.0;
    adjacency_[static_cast<std::size_t>(edge.to)][static_cast<std::size_t>(edge.reverse)].capacity =
        0.0;
  }
  for (Residual& edge : adjacency_[static_cast<std::size_t>(super_sink)]) {
    edge.capacity = 0.0;
    adjacency_[static_cast<std::size_t>(edge.to)][static_cast<std::size_t>(edge.reverse)].capacity =
        0.0;
  }
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
  return source_side;
}

}  // namespace zeus::pfo
