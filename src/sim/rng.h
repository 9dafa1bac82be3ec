// Rng: the simulator's deterministic random stream (xoshiro256**, seeded through splitmix64).
// Its sequence is fixed by this code alone (no std:: distributions, whose output differs between
// standard libraries), so a seed gives the same simulation on every platform.
// Satisfies UniformRandomBitGenerator, so cores that take a generator can draw from it.
#pragma once

#include <cstdint>
#include <limits>

namespace zeus::sim {

class Rng {
 public:
  using result_type = uint64_t;
  explicit Rng(uint64_t seed) {
    for (uint64_t& word : state_) word = splitmix64(seed);
  }
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<uint64_t>::max(); }

  result_type operator()() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  // Uniform integer in [0, n) for n >= 1 (rejection sampling: no modulo bias).
  uint64_t uniform_below(uint64_t n) {
    const uint64_t limit = max() - max() % n;
    uint64_t x;
    do {
      x = (*this)();
    } while (x >= limit);
    return x % n;
  }
  // Uniform double in [0, 1).
  double uniform01() { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }

  // One step of splitmix64 on `x` (also used to derive independent seeds).
  static uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

}  // namespace zeus::sim
