#include "models/random.hpp"

#include <algorithm>
#include <cmath>

namespace stepsim {

namespace {
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t run, std::uint64_t stream) {
  return splitmix64(splitmix64(splitmix64(seed) ^ run) ^ (stream * 0xd1b54a32d192ed03ULL));
}

double Rng::uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }

Time Rng::uniform(Time lo, Time hi) {
  if (hi <= lo) return lo;
  const auto span = static_cast<unsigned __int128>(hi - lo) + 1;
  return lo + static_cast<Time>((static_cast<unsigned __int128>(gen_()) * span) >> 64);
}

Time Rng::exponential(Time mean) {
  if (mean <= 0) return 0;
  // -mean * ln(1 - u), u in [0, 1): 1 - u is in (0, 1], so the logarithm is finite.
  // Capped at 2^62 ns (~146 years) so that adding it to a time cannot overflow.
  const double x = std::min(-static_cast<double>(mean) * std::log1p(-uniform()), 0x1.0p62);
  return static_cast<Time>(std::llround(x));
}

double Rng::normal() {
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
  const double f = std::sqrt(-2.0 * std::log(s) / s);
  spare_ = v * f;
  has_spare_ = true;
  return u * f;
}

}  // namespace stepsim
