#include "optimizer/batch_size/rng.h"

#include <cmath>
#include <numbers>

namespace zeus::bso {
namespace {

constexpr std::string_view kPrefix = "xoshiro256ss:";

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

uint64_t splitmix64(uint64_t* x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Rng::Rng(uint64_t seed) {
  for (uint64_t& word : s_) word = splitmix64(&seed);
}

uint64_t Rng::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

uint64_t Rng::below(uint64_t n) {
  ZEUS_CHECK(n > 0, "Rng::below needs n > 0");
  // Rejection sampling on the top of the range keeps every value equally likely.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do {
    x = next_u64();
  } while (x >= limit);
  return x % n;
}

double Rng::normal() {
  const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

std::string Rng::save() const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(kPrefix);
  for (uint64_t word : s_) {
    for (int shift = 60; shift >= 0; shift -= 4) out += kHex[(word >> shift) & 0xf];
  }
  return out;
}

Result<Rng> Rng::restore(std::string_view state) {
  auto bad = [&] {
    return fail(ErrorCode::kInvalidArgument,
                "random state '" + std::string(state.substr(0, 80)) +
                    "' is not 'xoshiro256ss:' followed by 64 hex digits");
  };
  if (state.substr(0, kPrefix.size()) != kPrefix || state.size() != kPrefix.size() + 64) {
    return bad();
  }
  Rng rng;
  bool all_zero = true;
  for (int i = 0; i < 4; ++i) {
    uint64_t word = 0;
    for (int j = 0; j < 16; ++j) {
      const char c = state[kPrefix.size() + i * 16 + j];
      int digit;
      if (c >= '0' && c <= '9') digit = c - '0';
      else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
      else return bad();
      word = (word << 4) | static_cast<uint64_t>(digit);
    }
    rng.s_[i] = word;
    all_zero = all_zero && word == 0;
  }
  if (all_zero) return bad();  // the one state xoshiro never leaves
  return rng;
}

}  // namespace zeus::bso
