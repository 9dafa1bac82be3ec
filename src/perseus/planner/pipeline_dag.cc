#include "perseus/planner/pipeline_dag.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "zeus/common/result.h"

namespace zeus::pfo {

PipelineDag::PipelineDag(const std::vector<std::vector<PipelineInstruction>>& schedule) {
  // Flat indices and a lookup of (stage, kind, microbatch) -> index.
  std::map<std::tuple<int, int, int>, int> index_of;
  std::vector<std::vector<int>> stage_indices(schedule.size());
  int next = 0;
  for (std::size_t s = 0; s < schedule.size(); ++s) {
    for (const PipelineInstruction& inst : schedule[s]) {
      index_of[{inst.stage, static_cast<int>(inst.kind), inst.microbatch}] = next;
      stage_indices[s].push_back(next++);
    }
  }
  // Activity-on-node dependencies between instructions.
  std::vector<std::pair<int, int>> deps;
  for (const auto& indices : stage_indices) {
    for (std::size_t k = 1; k < indices.size(); ++k) deps.emplace_back(indices[k - 1], indices[k]);
  }
  for (const auto& [key, from] : index_of) {
    const auto [stage, kind, microbatch] = key;
    const bool forward = kind == static_cast<int>(InstructionKind::kForward);
    auto to = index_of.find({forward ? stage + 1 : stage - 1, kind, microbatch});
    if (to != index_of.end()) deps.emplace_back(from, to->second);
  }
  build(next, std::move(deps));
}

PipelineDag::PipelineDag(int num_instructions, std::vector<std::pair<int, int>> dependencies) {
  build(num_instructions, std::move(dependencies));
}

void PipelineDag::build(int num_instructions, std::vector<std::pair<int, int>> deps) {
  num_instructions_ = num_instructions;
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  std::vector<int> in_degree(static_cast<std::size_t>(num_instructions_), 0);
  std::vector<int> out_degree(static_cast<std::size_t>(num_instructions_), 0);
  for (const auto& [from, to] : deps) {
    ++out_degree[static_cast<std::size_t>(from)];
    ++in_degree[static_cast<std::size_t>(to)];
  }
  // AON node ids: instructions 0..n-1, source n, sink n+1; AOA left(v) = 2v, right(v) = 2v+1.
  const int aon_source = num_instructions_;
  const int aon_sink = num_instructions_ + 1;
  num_nodes_ = 2 * (num_instructions_ + 2);
  source_ = 2 * aon_source;
  sink_ = 2 * aon_sink + 1;
  for (int v = 0; v < num_instructions_; ++v) arcs_.push_back({2 * v, 2 * v + 1, v});
  arcs_.push_back({2 * aon_source, 2 * aon_source + 1, -1});
  arcs_.push_back({2 * aon_sink, 2 * aon_sink + 1, -1});
  for (const auto& [from, to] : deps) arcs_.push_back({2 * from + 1, 2 * to, -1});
  for (int v = 0; v < num_instructions_; ++v) {
    if (in_degree[static_cast<std::size_t>(v)] == 0)
      arcs_.push_back({2 * aon_source + 1, 2 * v, -1});
    if (out_degree[static_cast<std::size_t>(v)] == 0)
      arcs_.push_back({2 * v + 1, 2 * aon_sink, -1});
  }
  // Topological order (Kahn).
  out_arcs_.assign(static_cast<std::size_t>(num_nodes_), {});
  std::vector<int> pending(static_cast<std::size_t>(num_nodes_), 0);
  for (std::size_t a = 0; a < arcs_.size(); ++a) {
    out_arcs_[static_cast<std::size_t>(arcs_[a].tail)].push_back(static_cast<int>(a));
    ++pending[static_cast<std::size_t>(arcs_[a].head)];
  }
  std::vector<int> ready = {source_};
  while (!ready.empty()) {
    const int node = ready.back();
    ready.pop_back();
    topo_order_.push_back(node);
    for (int a : out_arcs_[static_cast<std::size_t>(node)]) {
      const int head = arcs_[static_cast<std::size_t>(a)].head;
      if (--pending[static_cast<std::size_t>(head)] == 0) ready.push_back(head);
    }
  }
  ZEUS_CHECK(static_cast<int>(topo_order_.size()) == num_nodes_,
             "the 1F1B DAG must be acyclic and connected");
  earliest_.assign(static_cast<std::size_t>(num_nodes_), 0);
  latest_.assign(static_cast<std::size_t>(num_nodes_), 0);
}

int64_t PipelineDag::critical_arcs(const std::vector<int64_t>& durations,
                                   std::vector<int>& critical) const {
  std::fill(earliest_.begin(), earliest_.end(), 0);
  for (int node : topo_order_) {
    const int64_t start = earliest_[static_cast<std::size_t>(node)];
    for (int a : out_arcs_[static_cast<std::size_t>(node)]) {
      const Arc& arc = arcs_[static_cast<std::size_t>(a)];
      int64_t& head = earliest_[static_cast<std::size_t>(arc.head)];
      head = std::max(head, start + duration_of(arc, durations));
    }
  }
  const int64_t finish = earliest_[static_cast<std::size_t>(sink_)];
  std::fill(latest_.begin(), latest_.end(), std::numeric_limits<int64_t>::max());
  latest_[static_cast<std::size_t>(sink_)] = finish;
  for (auto it = topo_order_.rbegin(); it != topo_order_.rend(); ++it) {
    int64_t& node_latest = latest_[static_cast<std::size_t>(*it)];
    for (int a : out_arcs_[static_cast<std::size_t>(*it)]) {
      const Arc& arc = arcs_[static_cast<std::size_t>(a)];
      node_latest = std::min(
          node_latest, latest_[static_cast<std::size_t>(arc.head)] - duration_of(arc, durations));
    }
  }
  critical.clear();
  for (std::size_t a = 0; a < arcs_.size(); ++a) {
    const Arc& arc = arcs_[a];
    const int64_t earliest_finish =
        earliest_[static_cast<std::size_t>(arc.tail)] + duration_of(arc, durations);
    if (earliest_finish == latest_[static_cast<std::size_t>(arc.head)])
      critical.push_back(static_cast<int>(a));
  }
  return finish;
}

}  // namespace zeus::pfo
