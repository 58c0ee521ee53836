#pragma once
// Seeded, portable random variates for the RL studies (trajectory lengths, learner step times).
//
// Why not <random>'s distributions: the C++ standard fixes the output of the engines
// (std::mt19937_64 gives the same words everywhere) but not of std::uniform_real_distribution
// or std::exponential_distribution, which differ between libstdc++ and libc++ and across
// versions. So we take raw 64-bit words from the engine and derive every variate here.
#include <cstdint>
#include <random>

#include "sim/time.hpp"

namespace stepsim {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1): the top 53 bits of one engine word.
  double uniform01();
  // Uniform integer nanoseconds in [lo, hi] (multiply-shift: bias below 2^-64 per draw).
  Time uniform(Time lo, Time hi);
  // Exponential with the given mean, by inversion: -mean * ln(1 - U), rounded to the nanosecond.
  Time exponential(Time mean);

  // An independent stream for `stream` derived from `seed` (SplitMix64 finaliser), so that a
  // change to one stage's draws does not shift another's.
  static std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream);

 private:
  std::mt19937_64 engine_;
};

}  // namespace stepsim
