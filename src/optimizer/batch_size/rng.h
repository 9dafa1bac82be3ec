// Rng: the batch-size optimizer's seedable random generator, whose whole state is a short
// string, so a job's sequence of decisions continues identically after a restart.
//
// xoshiro256** (Blackman & Vigna) seeded through splitmix64; uniform, bounded-integer and normal
// draws are implemented here (not by <random> distributions, whose output differs between
// standard libraries), so a saved state replays the same decisions on every platform.
// Thread-safety: none; one Rng per job. Failure: restore() of a malformed string is
// kInvalidArgument.
//
//   zeus::bso::Rng rng(42);
//   std::string state = rng.save();            // "xoshiro256ss:" + 64 hex digits
//   double z = rng.normal();                   // same z after Rng::restore(state)
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "zeus/common/result.h"

namespace zeus::bso {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0);

  // Next raw 64-bit output.
  uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  // Uniform integer in [0, n), unbiased; n > 0.
  uint64_t below(uint64_t n);
  // Standard normal N(0, 1) (Box–Muller; two uniforms per draw, nothing cached).
  double normal();
  // N(mean, stddev²).
  double normal(double mean, double stddev) { return mean + stddev * normal(); }

  // The full state as text; restore(save()) continues the same stream.
  std::string save() const;
  static Result<Rng> restore(std::string_view state);

  bool operator==(const Rng&) const = default;

 private:
  std::array<uint64_t, 4> s_{};
};

// One step of splitmix64: advances *state and returns the next output. Rng seeds itself with
// it; callers use it to derive independent seeds from one (e.g. one stream per simulated seed).
uint64_t splitmix64(uint64_t* state);

}  // namespace zeus::bso
