// Rng: a seeded random generator object (xoshiro256**), passed explicitly — never global, so
// graphs in different threads stay independent and runs are reproducible from a seed.
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>

namespace engram::core {

class Rng {
 public:
  explicit Rng(uint64_t seed = 1) { this->seed(seed); }
  void seed(uint64_t seed) {
    for (auto& s : s_) {  // splitmix64 expands the seed
      seed += 0x9E3779B97F4A7C15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      s = z ^ (z >> 31);
    }
    has_spare_ = false;
  }
  // The whole generator state (for checkpoints): 4 words + the cached normal.
  struct State {
    uint64_t s[4];
    double spare;
    bool has_spare;
  };
  State state() const { return {{s_[0], s_[1], s_[2], s_[3]}, spare_, has_spare_}; }
  void set_state(const State& st) {
    for (int i = 0; i < 4; ++i) s_[i] = st.s[i];
    spare_ = st.spare;
    has_spare_ = st.has_spare;
  }
  uint64_t next() {
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
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  float uniform(float lo, float hi) { return lo + static_cast<float>(uniform()) * (hi - lo); }
  // Uniform integer in [0, n).
  uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }
  bool bernoulli(double p) { return uniform() < p; }
  // Standard normal (Box-Muller, caching the second value).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      u = 2.0 * uniform() - 1.0;
      v = 2.0 * uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    double m = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * m;
    has_spare_ = true;
    return u * m;
  }
  // Fisher-Yates shuffle of [first, last).
  template <class It>
  void shuffle(It first, It last) {
    for (auto n = last - first; n > 1; --n) std::swap(first[n - 1], first[below(n)]);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace engram::core
