#include "train/instruction_recorder.h"

#include <utility>

namespace zeus::pfo {
namespace {

constexpr const char* kIterationWindow = "pfo:iteration";

double gpu_energy_j(const Measurement& measurement) {
  double total_j = 0.0;
  for (const auto& [index, energy_j] : measurement.gpu_energy_j) total_j += energy_j;
  return total_j;
}

}  // namespace

InstructionRecorder::InstructionRecorder(EnergyMonitor& monitor, int rank,
                                         std::function<void()> sync)
    : monitor_(monitor), sync_(std::move(sync)) {
  result_.rank = rank;
}

std::string InstructionRecorder::window_name(std::string_view instruction) {
  return "pfo:instruction:" + std::string(instruction);
}

Result<void> InstructionRecorder::on_step_begin() {
  if (in_step_) {
    return fail(ErrorCode::kInvalidArgument, "a step began before the previous one ended");
  }
  if (sync_) sync_();
  ZEUS_TRY(monitor_.begin_window(kIterationWindow, /*sync=*/false));
  in_step_ = true;
  step_.clear();
  return ok();
}

Result<void> InstructionRecorder::on_instruction_begin(std::string_view name) {
  if (!in_step_) {
    return fail(ErrorCode::kInvalidArgument,
                "instruction '" + std::string(name) + "' began outside a step (on_step_begin)");
  }
  if (open_instruction_) {
    return fail(ErrorCode::kInvalidArgument, "instruction '" + std::string(name) +
                                                 "' began while '" + *open_instruction_ +
                                                 "' had not ended");
  }
  if (sync_) sync_();
  ZEUS_TRY(monitor_.begin_window(window_name(name), /*sync=*/false));
  open_instruction_ = std::string(name);
  return ok();
}

Result<void> InstructionRecorder::on_instruction_end(std::string_view name) {
  if (open_instruction_ != name) {
    return fail(ErrorCode::kInvalidArgument,
                "instruction '" + std::string(name) + "' ended but " +
                    (open_instruction_ ? "'" + *open_instruction_ + "'" : std::string("none")) +
                    " had begun");
  }
  if (sync_) sync_();
  auto measured = monitor_.end_window(window_name(name), /*sync=*/false);
  if (!measured) return fail(measured.error());
  open_instruction_.reset();
  step_[std::string(name)].emplace_back(measured->time_s, gpu_energy_j(*measured));
  return ok();
}

Result<void> InstructionRecorder::on_step_end() {
  if (!in_step_) return fail(ErrorCode::kInvalidArgument, "a step ended that had not begun");
  if (open_instruction_) {
    return fail(ErrorCode::kInvalidArgument,
                "the step ended while instruction '" + *open_instruction_ + "' had not ended");
  }
  if (sync_) sync_();
  auto measured = monitor_.end_window(kIterationWindow, /*sync=*/false);
  if (!measured) return fail(measured.error());
  in_step_ = false;
  const size_t before = result_.iter_time.size();
  result_.iter_time.push_back(measured->time_s);
  result_.iter_energy.push_back(gpu_energy_j(*measured));
  // A name first seen now gets empty lists for the iterations before.
  for (const auto& [name, instances] : step_) {
    result_.time_breakdown.try_emplace(name, before);
    result_.energy_breakdown.try_emplace(name, before);
  }
  for (auto& [name, per_iteration] : result_.time_breakdown) {
    std::vector<double>& times = per_iteration.emplace_back();
    std::vector<double>& energies = result_.energy_breakdown[name].emplace_back();
    if (auto found = step_.find(name); found != step_.end()) {
      for (const auto& [time_s, energy_j] : found->second) {
        times.push_back(time_s);
        energies.push_back(energy_j);
      }
    }
  }
  step_.clear();
  return ok();
}

void InstructionRecorder::abandon_step() {
  if (open_instruction_) {
    (void)monitor_.end_window(window_name(*open_instruction_), false, /*cancel=*/true);
    open_instruction_.reset();
  }
  if (in_step_) (void)monitor_.end_window(kIterationWindow, false, /*cancel=*/true);
  in_step_ = false;
  step_.clear();
}

ProfilingResult InstructionRecorder::take() {
  ProfilingResult taken = std::move(result_);
  result_ = ProfilingResult{};
  result_.rank = taken.rank;
  return taken;
}

}  // namespace zeus::pfo
