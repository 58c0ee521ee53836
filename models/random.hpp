#pragma once
// Portable random variates for Monte Carlo runs. std::*_distribution differ between standard
// libraries, so every variate here is computed from std::mt19937_64's raw output (whose sequence
// the standard fixes) with our own transforms: the same seed gives the same numbers everywhere.
#include <cstdint>
#include <random>

#include "sim/time.hpp"

namespace stepsim {

// A seed for stream `stream` of run `run` under the user's `seed`: SplitMix64 (Steele, Lea and
// Flood 2014) mixing, so neighbouring runs get unrelated generators and the result does not
// depend on which thread simulates which run.
std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t run, std::uint64_t stream);

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}
  // Uniform on [0, 1): the top 53 bits of one 64-bit draw.
  double uniform();
  // Uniform integer nanoseconds in [lo, hi] (multiply-shift: bias below 2^-64 per draw).
  Time uniform(Time lo, Time hi);
  // Exponential with the given mean, rounded to the nearest nanosecond (inverse transform),
  // at most 2^62 ns.
  Time exponential(Time mean);
  // Standard normal (Marsaglia's polar method; the second value of a pair is kept for the next call).
  double normal();

 private:
  std::mt19937_64 gen_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace stepsim
