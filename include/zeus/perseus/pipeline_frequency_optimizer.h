// PipelineFrequencyOptimizer: one rank of a pipeline-parallel training job under Perseus
// (docs/perseus.md, "Client hooks in a training loop"). It gets the rank's per-instruction SM
// clocks from the pipeline-frequency server, locks each one as its instruction begins, measures
// every instruction, and reports the measurements so the server can profile and re-plan.
//
// create(): rank 0 registers the job (POST /register_job) and the caller's broadcast hands its id
// to every other rank; a FrequencyController starts on the rank's GPU (power limit to default,
// memory clock and SM clock at their maximum); the rank registers with its supported clocks and
// waits for the first round's schedule (a barrier over all ranks).
// Hooks, called by the training loop on one thread:
//   on_step_begin, then per pipeline instruction on_instruction_begin(name) and
//   on_instruction_end(name) ("forward", "backward", as the schedule names them), then
//   on_step_end. Each instruction takes the schedule's next (name, MHz): the name must match and
//   the schedule must not run out; at step end it must be fully consumed. The clock is handed to
//   the controller, which applies it in the background (the loop never waits for the driver).
// Measuring: time and GPU energy of each step and each instruction, with an EnergyMonitor on the
// rank's GPU; the sync callback (e.g. cudaDeviceSynchronize) runs first at every edge. Every
// `steps_per_round` steps the rank POSTs the round's ProfilingResult to /result and asks for the
// next round's schedule; a schedule that differs from the current one replaces it.
// Restore: the controller unlocks the clocks on stop(), destruction, exit() and SIGINT/SIGTERM;
// with ZEUSD_SOCK_PATH (devices from zeus::discover_devices) also after SIGKILL, by zeusd's
// leases.
// Units: MHz, s, J. Thread-safety: the hooks from one thread; stop() and the accessors from it too.
// Failure: create() returns bad options (InvalidArgument naming the fix), the server's refusal,
// the device's error (PermissionDenied: root or zeusd's gpu-control); a hook returns
// InvalidArgument for a name that does not match the schedule or a schedule consumed too early
// or not fully — that iteration is then abandoned (not measured), and the next on_step_begin
// starts afresh — and the server's error at a round boundary.
//
//   auto service = zeus::make_pfo_http_client("http://127.0.0.1:7787");
//   auto pfo = zeus::PipelineFrequencyOptimizer::create(devices, 0, clock, std::move(*service), o);
//   (*pfo)->on_step_begin();
//   (*pfo)->on_instruction_begin("forward"); forward(); (*pfo)->on_instruction_end("forward");
//   (*pfo)->on_step_end();
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "zeus/common/clock.h"
#include "zeus/common/result.h"
#include "zeus/device/device.h"
#include "zeus/device_control/frequency_controller.h"
#include "zeus/perseus/pfo_runtime_types.h"
#include "zeus/perseus/pfo_service.h"

namespace zeus {

// Hands rank 0's job id to every rank: each rank of the job calls it once, at the same point of
// create(); rank 0 passes the id ("" when it could not register the job), the others pass "" and
// get rank 0's value (e.g. torch.distributed.broadcast_object_list, MPI_Bcast, a shared file).
using JobIdBroadcast = std::function<Result<std::string>(const std::string& value_on_rank_0)>;

struct PipelineFrequencyOptimizerOptions {
  // The rank's global rank and its position in each parallel dimension, and the job's degrees;
  // world_size = dp_degree · pp_degree · tp_degree.
  int rank = 0;
  int dp_rank = 0;
  int pp_rank = 0;
  int tp_rank = 0;
  int dp_degree = 1;
  int pp_degree = 1;
  int tp_degree = 1;
  int world_size = 1;
  // Part of the job id (no '/', '\' or control characters, at most 200 bytes).
  std::optional<std::string> job_metadata;
  // Required when world_size > 1.
  JobIdBroadcast broadcast;
  // Waits for the GPU's queued work before each measurement edge; empty: nothing to wait for.
  std::function<void()> sync;
  // Steps per round: after this many steps the round's measurements are reported and the next
  // schedule fetched (a barrier over all ranks). 0: never (one schedule for the whole job, as
  // Zeus 0.16's client; a scheduler that needs results then never gets them).
  uint32_t steps_per_round = 5;
  // The controller restores the clocks on SIGINT/SIGTERM
  // (zeus/device_control/frequency_controller.h).
  bool handle_signals = true;
  // How often a background thread reads the GPU's energy counter during steps, so that a counter
  // published in steps (~100 ms on an H200) is placed to within a few ms however sparse the
  // instructions' edges are (docs/perseus.md); 0: read at the edges only.
  double counter_poll_s = 0.005;
};

class PipelineFrequencyOptimizer {
 public:
  // Controls and measures devices.gpus[gpu_index]; `devices` and `clock` must outlive the
  // optimizer. Blocks until every rank of the job has asked for its first schedule.
  static Result<std::unique_ptr<PipelineFrequencyOptimizer>> create(
      Devices& devices, int gpu_index, Clock& clock,
      std::unique_ptr<PipelineFrequencyService> service, PipelineFrequencyOptimizerOptions options);
  // stop().
  ~PipelineFrequencyOptimizer();
  PipelineFrequencyOptimizer(const PipelineFrequencyOptimizer&) = delete;
  PipelineFrequencyOptimizer& operator=(const PipelineFrequencyOptimizer&) = delete;

  Result<void> on_step_begin();
  // Takes the schedule's next entry for `name` and asks the controller for its clock.
  Result<void> on_instruction_begin(std::string_view name);
  Result<void> on_instruction_end(std::string_view name);
  // Checks the schedule was consumed; at a round's end reports and fetches the next schedule.
  Result<void> on_step_end();

  // Blocks until the clock asked for last is applied (tests and measurements; a training loop
  // never needs it).
  void wait_for_clock();
  // Unlocks the clocks (the controller's stop). Idempotent; hooks after it fail.
  Result<void> stop();

  const std::string& job_id() const;
  // The schedule of the current round.
  const pfo::FrequencySchedule& schedule() const;
  // Schedules received so far (1 after create()).
  int rounds() const;
  // What the clock controller did so far.
  FrequencyControllerStats controller_stats() const;

  class Impl;

 private:
  explicit PipelineFrequencyOptimizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zeus
