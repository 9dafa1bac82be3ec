// InstructionRecorder: what a Perseus rank measures while it runs a schedule — each iteration's
// time and GPU energy, and per instruction name, each instance's — accumulated into the
// ProfilingResult that the client reports to the server (docs/perseus.md, "Runtime").
//
// Measured with EnergyMonitor windows: one per iteration (step begin to step end) and one per
// instruction (begin to end). At every window edge the sync callback runs first (it waits for the
// GPU's queued work, as Zeus's sync_execution does, so the time covers the instruction's kernels),
// then the monitor reads its counters without syncing again. Energy is the sum over the monitor's
// GPUs (the rank's GPU); CPU energy is not part of a ProfilingResult.
// Shape: every breakdown holds one list per recorded iteration (empty where the name did not
// run in that iteration), so time_breakdown[name][i] lines up with iter_time[i].
// Units: seconds and joules. Thread-safety: one thread (the training loop), like the monitor.
// Failure: the monitor's errors, and InvalidArgument for an instruction outside a step, a step
// begun twice, or an instruction ended that did not begin.
//
//   InstructionRecorder recorder(*monitor, rank, [] { cudaDeviceSynchronize(); });
//   recorder.on_step_begin();
//   recorder.on_instruction_begin("forward"); forward(); recorder.on_instruction_end("forward");
//   recorder.on_step_end();
//   ProfilingResult result = recorder.take();   // POST /result; the recorder starts afresh
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/energy_monitor.h"
#include "zeus/pfo_runtime_types.h"
#include "zeus/result.h"

namespace zeus::pfo {

class InstructionRecorder {
 public:
  // `monitor` must outlive the recorder; `sync` may be empty (nothing to wait for).
  InstructionRecorder(EnergyMonitor& monitor, int rank, std::function<void()> sync);

  Result<void> on_step_begin();
  Result<void> on_instruction_begin(std::string_view name);
  Result<void> on_instruction_end(std::string_view name);
  // Ends the iteration and adds it to the result.
  Result<void> on_step_end();
  // Cancels the open windows (an iteration abandoned by an error); nothing is added.
  void abandon_step();

  // Iterations recorded since the last take().
  size_t iterations() const { return result_.iter_time.size(); }
  // The result so far; the recorder starts a new one (an open step stays open).
  ProfilingResult take();

 private:
  static std::string window_name(std::string_view instruction);

  EnergyMonitor& monitor_;
  std::function<void()> sync_;
  ProfilingResult result_;
  bool in_step_ = false;
  // The open step's instances per name: (time_s, energy_j).
  std::map<std::string, std::vector<std::pair<double, double>>> step_;
  std::optional<std::string> open_instruction_;
};

}  // namespace zeus::pfo
