#include "optimizer/batch_size/gpu_translation.h"

#include <cmath>
#include <string>

#include "optimizer/batch_size/cost.h"

namespace zeus::bso {

Result<void> validate_gpu_profile(const GpuEpochProfile& profile) {
  const std::string where = "epoch profile of GPU '" + profile.gpu_model + "': ";
  if (!(profile.max_power_w > 0.0 && std::isfinite(profile.max_power_w))) {
    return fail(ErrorCode::kInvalidArgument,
                where + "max_power must be > 0 W (maximum power limit × number of GPUs)");
  }
  if (profile.number_of_gpus < 1) {
    return fail(ErrorCode::kInvalidArgument, where + "number_of_gpus must be >= 1");
  }
  for (size_t i = 0; i < profile.points.size(); ++i) {
    const EpochProfilePoint& p = profile.points[i];
    const std::string bs = std::to_string(p.batch_size);
    if (p.batch_size <= 0) {
      return fail(ErrorCode::kInvalidArgument, where + "batch size " + bs + " must be positive");
    }
    if (!(p.epoch_time_s > 0.0 && std::isfinite(p.epoch_time_s))) {
      return fail(ErrorCode::kInvalidArgument,
                  where + "epoch_time_s of batch size " + bs + " must be > 0");
    }
    if (!(p.avg_power_w >= 0.0 && std::isfinite(p.avg_power_w))) {
      return fail(ErrorCode::kInvalidArgument,
                  where + "avg_power_w of batch size " + bs + " must be >= 0");
    }
    for (size_t j = 0; j < i; ++j) {
      if (profile.points[j].batch_size == p.batch_size) {
        return fail(ErrorCode::kInvalidArgument, where + "batch size " + bs + " appears twice");
      }
    }
  }
  return ok();
}

Result<TranslatedObservation> translate_observation(int batch_size, int epochs,
                                                    const GpuEpochProfile& profile, double eta) {
  if (epochs < 0) {
    return fail(ErrorCode::kInvalidArgument,
                "an observation cannot have run " + std::to_string(epochs) + " epochs");
  }
  for (const EpochProfilePoint& p : profile.points) {
    if (p.batch_size != batch_size) continue;
    TranslatedObservation t;
    t.time_s = epochs * p.epoch_time_s;
    t.energy_j = t.time_s * p.avg_power_w;
    t.cost = epochs * epoch_cost(p.epoch_time_s, p.avg_power_w, eta, profile.max_power_w);
    return t;
  }
  return fail(ErrorCode::kInvalidArgument,
              "epoch profile of GPU '" + profile.gpu_model + "' has no entry for batch size " +
                  std::to_string(batch_size) +
                  "; profile one epoch of it on the new GPU before moving the job");
}

}  // namespace zeus::bso
