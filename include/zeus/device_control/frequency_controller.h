// FrequencyController: changes one GPU's SM clock from a training loop without ever blocking it
// (the Perseus runtime's clock controller, docs/perseus.md, "Runtime: the clock controller").
//
// The loop asks for a clock at each pipeline instruction; a background thread applies it. Only
// the newest request matters: requests go into a single lock-free slot that each new one
// overwrites, so they never queue up behind a slow driver call, and the thread skips a clock
// equal to the one it applied last. 0 MHz means "leave the clock as it is".
// At start (before start() returns): the power limit goes back to the default, the memory clock
// is locked at its maximum (a GPU that cannot lock memory clocks, NotSupported, is left alone
// with a debug log), and the SM clock is locked at its maximum. At exit: SM clocks are unlocked,
// and memory clocks too if they were locked; the power limit stays at the default. The exit runs
// on stop(), the destructor (normal return and exceptions), exit() and SIGINT/SIGTERM (the same
// process-wide restorer as the power-limit optimizer: the signal handler only wakes a watcher
// thread that restores, then the signal takes its previous course). SIGKILL cannot be caught:
// with GPUs discovered through zeusd (ZEUSD_SOCK_PATH, zeus/zeusd_client/zeusd_client.h) every
// lock is a
// zeusd lease that the daemon undoes when the process dies, however it dies.
// Units: MHz; apply times in seconds (steady clock, for latency reports, never for decisions).
// Thread-safety: request() and the read-only accessors may be called from any thread;
// stop() from one thread. Device calls are serialised with the exit restore. A forked child's
// copy does nothing when destroyed (the thread and the GPU's settings stay the parent's).
// Failure: start() returns the device's error (PermissionDenied names the fix: root or zeusd's
// gpu-control); a failed change is counted and kept as last_error, and the thread carries on.
//
//   auto controller = zeus::FrequencyController::start(*devices->gpus[0], {});
//   (*controller)->request(1410);   // returns at once; applied in the background
//   (*controller)->stop();          // or let the destructor restore the clocks
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/device/device.h"

namespace zeus {

struct FrequencyControllerOptions {
  // Restore on SIGINT/SIGTERM (see the header comment); exit() and destructors always restore.
  bool handle_signals = true;
};

// What the controller did so far.
struct FrequencyControllerStats {
  uint64_t requests = 0;  // non-zero clocks asked for through request()
  uint64_t taken = 0;     // requests the thread took from the slot (the others were replaced)
  uint64_t applied = 0;   // SM clock locks that succeeded after start
  uint64_t skipped = 0;   // taken requests equal to the clock already applied
  uint64_t failed = 0;    // SM clock locks the device refused
  std::optional<Error> last_error;
  // Time per applied change: total and largest, in seconds (the driver or zeusd round trip).
  double apply_total_s = 0.0;
  double apply_max_s = 0.0;
};

class FrequencyController {
 public:
  // Sets the start state described in the header comment and starts the thread. `gpu` must
  // outlive the controller. Errors leave the GPU as it was found (what was changed is undone).
  static Result<std::unique_ptr<FrequencyController>> start(Gpu& gpu,
                                                            FrequencyControllerOptions options);
  // stop().
  ~FrequencyController();
  FrequencyController(const FrequencyController&) = delete;
  FrequencyController& operator=(const FrequencyController&) = delete;

  // Asks for SM clocks locked at [mhz, mhz]; replaces a request not yet taken. 0 and requests
  // after stop() are ignored. Never blocks (one atomic store and a wake-up).
  void request(uint32_t mhz);
  // Blocks until every request made before the call has been taken and applied, skipped or
  // refused (tests and measurements; the training loop never needs it).
  void flush();
  // Stops the thread and restores the clocks. Idempotent; errors of the restore are returned
  // the first time (and logged).
  Result<void> stop();

  // The SM clocks the GPU supports, highest first (what a rank registers with the server).
  const std::vector<uint32_t>& supported_sm_clocks_mhz() const;
  // The maximum SM and memory clocks locked at start.
  uint32_t max_sm_clock_mhz() const;
  uint32_t max_memory_clock_mhz() const;
  // True when the memory clock was locked at start (false: NotSupported by this GPU).
  bool memory_clock_locked() const;
  // The SM clock applied last (the maximum until a request is applied; 0 once restored).
  uint32_t applied_mhz() const;
  FrequencyControllerStats stats() const;

  class Impl;

 private:
  explicit FrequencyController(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zeus
