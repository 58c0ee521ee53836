#include "models/number_formats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace stepsim {

namespace {
constexpr FloatFormat kFormats[] = {kFp32, kBf16, kFp16, kFp8E4M3, kFp8E5M2};
}

const FloatFormat* find_float_format(std::string_view name) {
  for (const auto& f : kFormats)
    if (f.name == name) return &f;
  return nullptr;
}

FormatLimits format_limits(const FloatFormat& f) {
  FormatLimits l;
  const int all_ones = (1 << f.exponent_bits) - 1;
  l.min_normal_exponent = 1 - f.bias;
  l.min_subnormal_exponent = 1 - f.bias - f.mantissa_bits;
  l.min_normal = std::ldexp(1.0, l.min_normal_exponent);
  l.min_subnormal = std::ldexp(1.0, l.min_subnormal_exponent);
  if (f.specials == SpecialValues::Ieee) {
    // All-ones exponent is infinity / NaN: the top binade is all_ones - 1, every fraction usable.
    l.max_exponent = all_ones - 1 - f.bias;
    l.max_finite = std::ldexp(2.0 - std::ldexp(1.0, -f.mantissa_bits), l.max_exponent);
  } else {
    // All-ones exponent holds numbers; only the all-ones fraction there is NaN.
    l.max_exponent = all_ones - f.bias;
    l.max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.mantissa_bits), l.max_exponent);
  }
  return l;
}

StoredValue store(double x, const FloatFormat& f) {
  const FormatLimits l = format_limits(f);
  if (x == 0) return {Stored::Zero, 0};
  // Spacing of representable values around x: 2^(e - m) in x's binade, 2^(min_subnormal) below
  // the normal range.
  int e = 0;
  std::frexp(std::abs(x), &e);  // |x| = f x 2^e with f in [0.5, 1): binade exponent e - 1
  const int binade = std::max(e - 1, l.min_normal_exponent);
  const double quantum = std::ldexp(1.0, binade - f.mantissa_bits);
  const double rounded = std::nearbyint(x / quantum) * quantum;  // default mode: ties to even
  if (rounded == 0) return {Stored::Zero, 0};
  if (std::abs(rounded) > l.max_finite)
    return {Stored::Overflow, f.specials == SpecialValues::Ieee
                                  ? std::copysign(std::numeric_limits<double>::infinity(), x)
                                  : std::numeric_limits<double>::quiet_NaN()};
  return {std::abs(rounded) < l.min_normal ? Stored::Subnormal : Stored::Normal, rounded};
}

ScaledWindow loss_scale_window(const FloatFormat& f, double scale) {
  const FormatLimits l = format_limits(f);
  return {l.min_subnormal / scale, l.max_finite / scale};
}

}  // namespace stepsim
