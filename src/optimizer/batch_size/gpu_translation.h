// Moving a job's cost observations to another GPU model (paper §7, heterogeneous GPUs).
//
// The number of epochs to reach the target, Epochs(b), depends on the batch size and the data,
// not on the GPU; only EpochCost(b; η) does. So an observation of batch size b that ran `epochs`
// epochs becomes, on the new GPU, time = epochs × epoch_time_s'(b), energy = epochs ×
// epoch_time_s'(b) × avg_power_w'(b), and cost = Epochs(b) × EpochCost'(b; η) with the new GPU's
// max power. The bandit keeps its history instead of starting over.
// Pure: no state, thread-safe. Failure: kInvalidArgument for a malformed profile or a batch size
// it does not cover.
//
//   GpuEpochProfile v100{"V100", 300.0, 1, {{64, 120.0, 250.0}}};
//   Result<TranslatedObservation> t = translate_observation(64, /*epochs=*/10, v100, 0.5);
//   // t->time_s = 1200, t->energy_j = 300000, t->cost = 330000
#pragma once

#include "zeus/common/result.h"
#include "zeus/optimizer/bso_types.h"

namespace zeus::bso {

struct TranslatedObservation {
  double time_s = 0.0;
  double energy_j = 0.0;
  double cost = 0.0;  // J, with the new GPU's max power
};

// Checks max_power_w > 0, number_of_gpus >= 1, and points with distinct positive batch sizes,
// positive epoch times and non-negative powers.
Result<void> validate_gpu_profile(const GpuEpochProfile& profile);

// One observation of `batch_size` that ran `epochs` epochs, as it would cost on `profile`'s GPU.
Result<TranslatedObservation> translate_observation(int batch_size, int epochs,
                                                    const GpuEpochProfile& profile, double eta);

}  // namespace zeus::bso
