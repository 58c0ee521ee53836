#include "models/rl_random.hpp"

#include <cmath>

namespace stepsim {

double Rng::uniform01() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

Time Rng::uniform(Time lo, Time hi) {
  if (hi <= lo) return lo;
  const auto span = static_cast<unsigned __int128>(hi - lo) + 1;
  return lo + static_cast<Time>((static_cast<unsigned __int128>(engine_()) * span) >> 64);
}

Time Rng::exponential(Time mean) {
  if (mean <= 0) return 0;
  const double u = uniform01();
  return static_cast<Time>(std::llround(-static_cast<double>(mean) * std::log1p(-u)));
}

std::uint64_t Rng::stream_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace stepsim
