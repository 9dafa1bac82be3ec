// InstructionRecorder: what a Perseus rank measures while it runs a schedule — each iteration's
// time and GPU energy, and per instruction name, each instance's — accumulated into the
// ProfilingResult that the client reports to the server (docs/perseus.md, "Runtime").
//
// Measured with EnergyMonitor windows: one per iteration (step begin to step end) and one per
// instruction (begin to end). At every window edge the sync callback runs first (it waits for the
// GPU's queued work, as Zeus's sync_execution does, so the time covers the instruction's kernels),
// then the monitor reads its counters without syncing again. Energy is the sum over the monitor's
// GPUs (the rank's GPU); CPU energy is not part of a ProfilingResult.
// With an EnergyCounter (what PipelineFrequencyOptimizer gives it: the rank's GPU's energy
// counter), instructions are timed on its clock and their energy is the counter interpolated
// between its published values (counter_timeline.h): a GPU that publishes its counter every
// ~100 ms (an H200) would read 0 J for most 20 ms instructions otherwise. The counter is read at
// every edge and, with background_s, by a thread during steps (counter_poller.h); take() waits
// (at most wait_s) for a value published after the last instruction,
// then settles every instruction of the result; one it cannot settle (before the counter's first
// change, or no change within wait_s) gets the counter's extrapolated estimate.
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
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perseus/runtime/counter_poller.h"
#include "zeus/common/clock.h"
#include "zeus/common/result.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/perseus/pfo_runtime_types.h"

namespace zeus::pfo {

// The rank's GPU energy counter, read directly (J) on `clock` (both outlive the recorder).
struct EnergyCounter {
  Clock* clock = nullptr;
  std::function<Result<double>()> read_j;  // empty: instructions use monitor windows
  double wait_s = 1.0;    // take()'s longest wait for a value published after the last instruction
  double poll_s = 0.001;  // its reads' spacing
  double background_s = 0;  // > 0: a thread also reads it this often during steps (counter_poller.h)
};

class InstructionRecorder {
 public:
  // `monitor` must outlive the recorder; `sync` may be empty (nothing to wait for).
  InstructionRecorder(EnergyMonitor& monitor, int rank, std::function<void()> sync,
                      EnergyCounter counter = {});

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
  bool counting() const { return poller_ != nullptr; }
  void settle_instructions();

  struct Instance {
    double time_s = 0;
    double energy_j = 0;
    double begin_s = 0;  // on the counter's clock (with an EnergyCounter)
    double end_s = 0;
  };
  // An instruction of result_ whose energy take() settles from the timeline.
  struct Unsettled {
    std::string name;
    size_t iteration = 0;
    size_t index = 0;
    double begin_s = 0;
    double end_s = 0;
  };

  EnergyMonitor& monitor_;
  std::function<void()> sync_;
  EnergyCounter counter_;
  std::unique_ptr<CounterPoller> poller_;
  ProfilingResult result_;
  bool in_step_ = false;
  std::map<std::string, std::vector<Instance>> step_;  // the open step's instances per name
  std::optional<std::string> open_instruction_;
  double open_begin_s_ = 0;
  std::vector<Unsettled> unsettled_;
};

}  // namespace zeus::pfo
