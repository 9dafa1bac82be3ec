// The 1F1B pipeline DAG in activity-on-arc form, and the critical-path method on it
// (docs/perseus.md). Instruction i (flat index, stage-major in execution order) becomes the
// arc left(i) -> right(i); a dependency u -> v of the activity-on-node DAG becomes a dummy arc
// right(u) -> left(v); a dummy source and sink close the graph. Pure.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "zeus/perseus/pfo_planner.h"

namespace zeus::pfo {

struct Arc {
  int tail = 0;
  int head = 0;
  int instruction = -1;  // flat instruction index, -1 for a dummy arc
};

class PipelineDag {
 public:
  // The DAG of `schedule` (per stage, execution order): same-stage order, F(s,j) -> F(s+1,j),
  // B(s+1,j) -> B(s,j), source -> every instruction without a predecessor, every one without a
  // successor -> sink.
  explicit PipelineDag(const std::vector<std::vector<PipelineInstruction>>& schedule);
  // Any DAG: instructions 0..num_instructions-1 and dependency pairs (from, to) among them.
  PipelineDag(int num_instructions, std::vector<std::pair<int, int>> dependencies);

  int num_nodes() const { return num_nodes_; }
  int num_instructions() const { return num_instructions_; }
  int source() const { return source_; }
  int sink() const { return sink_; }
  const std::vector<Arc>& arcs() const { return arcs_; }
  // Number of dependency edges of the activity-on-node form (without the instruction arcs).
  int num_dependencies() const { return static_cast<int>(arcs_.size()) - num_instructions_ - 2; }

  // Critical-path method for `durations` (units, by flat instruction index): fills `critical`
  // with the indices of arcs whose earliest finish equals their latest finish and returns the
  // iteration time (earliest finish at the sink).
  int64_t critical_arcs(const std::vector<int64_t>& durations, std::vector<int>& critical) const;

 private:
  void build(int num_instructions, std::vector<std::pair<int, int>> dependencies);
  int64_t duration_of(const Arc& arc, const std::vector<int64_t>& durations) const {
    return arc.instruction < 0 ? 0 : durations[static_cast<std::size_t>(arc.instruction)];
  }

  int num_nodes_ = 0;
  int num_instructions_ = 0;
  int source_ = 0;
  int sink_ = 0;
  std::vector<Arc> arcs_;
  std::vector<int> topo_order_;             // nodes in topological order
  std::vector<std::vector<int>> out_arcs_;  // arc indices by tail
  mutable std::vector<int64_t> earliest_;   // scratch: earliest time at each node
  mutable std::vector<int64_t> latest_;     // scratch: latest time at each node
};

}  // namespace zeus::pfo
