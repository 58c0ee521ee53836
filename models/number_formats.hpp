#pragma once
// Floating-point formats from their bit layout: the range limits that decide underflow and
// overflow in mixed-precision training (section 10.1, "floating-point formats").
//
// A format is (exponent bits e, mantissa bits m, bias b) plus how it spends the all-ones
// exponent field:
//  * IEEE 754 (FP32, FP16, BF16, FP8 E5M2): all-ones means infinity or NaN, so the largest
//    finite value is (2 - 2^-m) x 2^(2^e - 2 - b);
//  * FP8 E4M3 (Micikevicius et al. 2022, "FP8 Formats for Deep Learning", sec. 3): no infinity,
//    all-ones exponents hold numbers and only S.1111.111 is NaN, so the largest finite value is
//    (2 - 2^(1-m)) x 2^(2^e - 1 - b) = 1.75 x 2^8 = 448.
// For both, the smallest normal is 2^(1-b) and the smallest subnormal 2^(1-b-m) (FP16: 2^-14 and
// 2^-24; max 65,504).
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace stepsim {

enum class SpecialValues : std::uint8_t { Ieee, FiniteOnly };

struct FloatFormat {
  std::string_view name;
  int exponent_bits = 0;
  int mantissa_bits = 0;  // stored fraction bits (the leading 1 of normals is implicit)
  int bias = 0;
  SpecialValues specials = SpecialValues::Ieee;
  int bits() const { return 1 + exponent_bits + mantissa_bits; }
};

inline constexpr FloatFormat kFp32{"fp32", 8, 23, 127, SpecialValues::Ieee};
inline constexpr FloatFormat kBf16{"bf16", 8, 7, 127, SpecialValues::Ieee};
inline constexpr FloatFormat kFp16{"fp16", 5, 10, 15, SpecialValues::Ieee};
inline constexpr FloatFormat kFp8E4M3{"fp8-e4m3", 4, 3, 7, SpecialValues::FiniteOnly};
inline constexpr FloatFormat kFp8E5M2{"fp8-e5m2", 5, 2, 15, SpecialValues::Ieee};
const FloatFormat* find_float_format(std::string_view name);

struct FormatLimits {
  int min_normal_exponent = 0;     // 1 - bias
  int min_subnormal_exponent = 0;  // 1 - bias - mantissa bits
  int max_exponent = 0;            // exponent of the largest finite value
  double min_normal = 0;           // 2^min_normal_exponent
  double min_subnormal = 0;        // 2^min_subnormal_exponent
  double max_finite = 0;
};
FormatLimits format_limits(const FloatFormat& f);

// Where a real value lands when stored (round to nearest, ties to even).
enum class Stored : std::uint8_t { Zero, Subnormal, Normal, Overflow };
struct StoredValue {
  Stored kind = Stored::Zero;
  double value = 0;  // the stored value; on overflow infinity (IEEE) or NaN (E4M3 has no infinity)
};
StoredValue store(double x, const FloatFormat& f);

// Loss scaling (Micikevicius et al. 2018, "Mixed Precision Training", sec. 3.2): the loss, and so
// every gradient, is multiplied by S before the backward pass and divided by S before the update.
// With S a power of two the scaling itself is exact; the gradients that survive are those with
// S x |g| between the smallest subnormal and the largest finite value.
struct ScaledWindow {
  double smallest = 0;  // smallest |g| not lost: min_subnormal / S
  double largest = 0;   // largest |g| that does not overflow: max_finite / S
};
ScaledWindow loss_scale_window(const FloatFormat& f, double scale);

}  // namespace stepsim
