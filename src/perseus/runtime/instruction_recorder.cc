#include "perseus/runtime/instruction_recorder.h"

#include <algorithm>
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
                                         std::function<void()> sync, EnergyCounter counter)
    : monitor_(monitor), sync_(std::move(sync)), counter_(std::move(counter)) {
  result_.rank = rank;
  if (counter_.clock != nullptr && counter_.read_j) {
    poller_ = std::make_unique<CounterPoller>(*counter_.clock, counter_.read_j,
                                              counter_.background_s);
  }
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
  if (counting()) {
    poller_->set_active(true);
    poller_->read();
  }
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
  if (counting()) {
    open_begin_s_ = poller_->read();
  } else {
    ZEUS_TRY(monitor_.begin_window(window_name(name), /*sync=*/false));
  }
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
  Instance instance;
  if (counting()) {
    instance.begin_s = open_begin_s_;
    instance.end_s = poller_->read();
    instance.time_s = instance.end_s - instance.begin_s;
  } else {
    auto measured = monitor_.end_window(window_name(name), /*sync=*/false);
    if (!measured) return fail(measured.error());
    instance.time_s = measured->time_s;
    instance.energy_j = gpu_energy_j(*measured);
  }
  open_instruction_.reset();
  step_[std::string(name)].push_back(instance);
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
  if (counting()) poller_->read();
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
      for (const Instance& instance : found->second) {
        if (counting()) {
          unsettled_.push_back(
              {name, before, energies.size(), instance.begin_s, instance.end_s});
        }
        times.push_back(instance.time_s);
        energies.push_back(instance.energy_j);
      }
    }
  }
  step_.clear();
  return ok();
}

void InstructionRecorder::abandon_step() {
  if (open_instruction_ && !counting()) {
    (void)monitor_.end_window(window_name(*open_instruction_), false, /*cancel=*/true);
  }
  open_instruction_.reset();
  if (counting()) poller_->set_active(false);  // the next step wakes it
  if (in_step_) (void)monitor_.end_window(kIterationWindow, false, /*cancel=*/true);
  in_step_ = false;
  step_.clear();
}

void InstructionRecorder::settle_instructions() {
  if (unsettled_.empty()) return;
  double last_end_s = 0;
  for (const Unsettled& u : unsettled_) last_end_s = std::max(last_end_s, u.end_s);
  // Wait for the counter to publish a value after the last instruction (~one update period).
  Clock& clock = *counter_.clock;
  const double deadline_s = clock.now_s() + counter_.wait_s;
  while (!poller_->failed() && poller_->last_change_s().value_or(-1) < last_end_s &&
         clock.now_s() < deadline_s) {
    clock.sleep_until_s(clock.now_s() + counter_.poll_s);
    poller_->read();
  }
  for (const Unsettled& u : unsettled_) {
    std::optional<double> begin_j = poller_->at(u.begin_s);
    std::optional<double> end_j = poller_->at(u.end_s);
    if (!begin_j || !end_j) {
      begin_j = poller_->estimate(u.begin_s);
      end_j = poller_->estimate(u.end_s);
    }
    if (!begin_j || !end_j) continue;
    result_.energy_breakdown[u.name][u.iteration][u.index] = std::max(0.0, *end_j - *begin_j);
  }
  unsettled_.clear();
  poller_->forget_before(last_end_s);
  if (!in_step_) poller_->set_active(false);
}

ProfilingResult InstructionRecorder::take() {
  if (counting()) settle_instructions();
  ProfilingResult taken = std::move(result_);
  result_ = ProfilingResult{};
  result_.rank = taken.rank;
  return taken;
}

}  // namespace zeus::pfo
