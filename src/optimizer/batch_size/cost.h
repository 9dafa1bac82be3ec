// The Zeus energy-time cost (paper §3): C = η·E + (1 − η)·MAXPOWER·T, in J.
//
// Pure functions: no state, thread-safe. Callers validate η ∈ [0, 1] and max_power_w > 0
// (validate_job_spec does); the functions only compute.
//
//   double c = zeus::bso::zeus_cost(/*energy_j=*/3000, /*time_s=*/10, /*eta=*/0.5, 300);
//   // 0.5·3000 + 0.5·300·10 = 3000 J
//   double per_epoch = zeus::bso::epoch_cost(/*epoch_time_s=*/60, /*avg_power_w=*/250, 0.5, 300);
#pragma once

namespace zeus::bso {

// η·energy_j + (1 − η)·max_power_w·time_s.
inline double zeus_cost(double energy_j, double time_s, double eta, double max_power_w) {
  return eta * energy_j + (1.0 - eta) * max_power_w * time_s;
}

// EpochCost(b; η) from one epoch's time and average power: η·P·t + (1 − η)·MAXPOWER·t.
inline double epoch_cost(double epoch_time_s, double avg_power_w, double eta,
                         double max_power_w) {
  return zeus_cost(avg_power_w * epoch_time_s, epoch_time_s, eta, max_power_w);
}

}  // namespace zeus::bso
