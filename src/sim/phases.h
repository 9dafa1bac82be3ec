// The recurrence loop behind simulate(), generalised to a job whose training behaviour changes
// over time (data drift): a sequence of phases, each replaying its own trace for a number of
// recurrences. The policy is built once, on the first phase's trace, and keeps its history
// across phases — except the Oracle, which knows the future and is rebuilt for every phase.
#pragma once

#include <span>

#include "sim/policy.h"
#include "zeus/sim/simulator.h"

namespace zeus::sim {

struct Phase {
  const WorkloadTrace* trace = nullptr;
  int recurrences = 0;  // > 0
};

// kInvalidArgument when the phases do not share batch sizes, power limits and MAXPOWER, or for
// the option errors of validate_options(). Recurrence indices run on across phases.
Result<History> simulate_phases(std::span<const Phase> phases, PolicyKind kind, const SimOptions& options);

// Replays one planned run at the options' fidelity on the training path `target_epoch`.
RunRecord replay_run(const WorkloadTrace& trace, const RunPlan& plan, int target_epoch, const SimOptions& options);

// The two independent streams of a simulation seed: training-path draws, then policy draws.
struct SeedStreams {
  Rng paths;
  Rng policy;
};
SeedStreams seed_streams(uint64_t seed);

}  // namespace zeus::sim
