#include <string>

#include "zeus/perseus/pfo_planner.h"

namespace zeus::pfo {

const ExecutionOption& OperationModel::option_for(int64_t duration) const {
  // options are sorted slowest first: the first one with quant_time <= duration.
  for (const ExecutionOption& option : options) {
    if (option.quant_time <= duration) return option;
  }
  return options.back();
}

std::string_view stop_reason_text(StopReason reason) {
  switch (reason) {
    case StopReason::kNoFeasibleFlow:
      return "no feasible flow (no cut shortens the iteration further)";
    case StopReason::kCannotSpeedUp:
      return "the critical path is at the fastest clocks";
    case StopReason::kCannotSlowDown:
      return "the cheapest cut would slow an instruction past its slowest clock";
    case StopReason::kNoCostChange:
      return "the cheapest cut changes no cost";
  }
  return "unknown";
}

const OperationModel& Frontier::model(int stage, InstructionKind kind) const {
  return models_[static_cast<std::size_t>(2 * stage + (kind == InstructionKind::kForward ? 0 : 1))];
}

void Frontier::apply(std::size_t index, std::vector<int64_t>& flat_durations) const {
  for (std::size_t c = change_offsets_[index]; c < change_offsets_[index + 1]; ++c) {
    flat_durations[changes_[c].instruction] += changes_[c].delta;
  }
}

std::vector<std::vector<int>> Frontier::clocks_from(
    const std::vector<int64_t>& flat_durations) const {
  std::vector<std::vector<int>> clocks(schedule_.size());
  std::size_t flat = 0;
  for (std::size_t s = 0; s < schedule_.size(); ++s) {
    for (const PipelineInstruction& inst : schedule_[s]) {
      clocks[s].push_back(
          model(inst.stage, inst.kind).option_for(flat_durations[flat++]).frequency_mhz);
    }
  }
  return clocks;
}

std::vector<std::vector<int64_t>> Frontier::durations(std::size_t index) const {
  std::vector<int64_t> flat = initial_durations_;
  for (std::size_t i = 0; i <= index && i < points_.size(); ++i) apply(i, flat);
  std::vector<std::vector<int64_t>> out(schedule_.size());
  std::size_t k = 0;
  for (std::size_t s = 0; s < schedule_.size(); ++s) {
    for (std::size_t j = 0; j < schedule_[s].size(); ++j) out[s].push_back(flat[k++]);
  }
  return out;
}

std::vector<std::vector<int>> Frontier::clocks_mhz(std::size_t index) const {
  std::vector<int64_t> flat = initial_durations_;
  for (std::size_t i = 0; i <= index && i < points_.size(); ++i) apply(i, flat);
  return clocks_from(flat);
}

std::vector<std::vector<int>> Frontier::all_slowest_clocks_mhz() const {
  return clocks_from(initial_durations_);
}

void Frontier::for_each_plan(
    const std::function<void(std::size_t, const std::vector<std::vector<int>>&)>& fn) const {
  std::vector<int64_t> flat = initial_durations_;
  for (std::size_t i = 0; i < points_.size(); ++i) {
    apply(i, flat);
    fn(i, clocks_from(flat));
  }
}

}  // namespace zeus::pfo
