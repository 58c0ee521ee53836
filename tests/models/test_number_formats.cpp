// Floating-point format limits, loss scaling and FP8 block scaling (reference section 3
// "Formats", section 7 "Loss scaling"). Limits are computed from (exponent bits, mantissa bits,
// bias, encoding); the book's figures appear only as expected results.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "models/block_scaling.hpp"
#include "models/number_formats.hpp"
#include "models/transformer.hpp"

using namespace stepsim;

TEST_CASE("FP16: min normal 2^-14, min subnormal 2^-24, max 65,504", "[formats]") {
  const FormatLimits l = format_limits(kFp16);
  CHECK(l.min_normal_exponent == -14);
  CHECK(l.min_subnormal_exponent == -24);
  CHECK(l.min_normal == std::ldexp(1.0, -14));
  CHECK(l.min_subnormal == std::ldexp(1.0, -24));
  CHECK(l.max_finite == 65'504.0);
}

TEST_CASE("FP8 E4M3 (no infinity): max 448; the other formats from the same rules", "[formats]") {
  const FormatLimits e4m3 = format_limits(kFp8E4M3);
  CHECK(e4m3.max_finite == 448.0);
  CHECK(e4m3.min_normal == std::ldexp(1.0, -6));
  CHECK(e4m3.min_subnormal == std::ldexp(1.0, -9));
  // E5M2 is IEEE-like: its all-ones exponent is infinity / NaN.
  CHECK(format_limits(kFp8E5M2).max_finite == 57'344.0);
  // FP32 and BF16 share the 8-bit exponent: the same range, BF16 with 7 fraction bits.
  CHECK(format_limits(kFp32).max_finite == static_cast<double>(std::numeric_limits<float>::max()));
  CHECK(format_limits(kFp32).min_subnormal == static_cast<double>(std::numeric_limits<float>::denorm_min()));
  CHECK(format_limits(kBf16).min_normal == format_limits(kFp32).min_normal);
  CHECK(format_limits(kBf16).max_finite == std::ldexp(2.0 - std::ldexp(1.0, -7), 127));
  CHECK(kFp16.bits() == 16);
  CHECK(kFp8E4M3.bits() == 8);
  REQUIRE(find_float_format("fp8-e4m3"));
  CHECK(find_float_format("fp8-e4m3")->mantissa_bits == 3);
  CHECK_FALSE(find_float_format("fp12"));
}

TEST_CASE("storing values: round to nearest even, subnormals, underflow and overflow", "[formats]") {
  CHECK(store(65'504.0, kFp16).kind == Stored::Normal);
  CHECK(store(65'520.0, kFp16).kind == Stored::Overflow);  // rounds up past the largest value
  CHECK(std::isinf(store(1e6, kFp16).value));
  CHECK(store(448.0, kFp8E4M3).kind == Stored::Normal);
  CHECK(store(464.0, kFp8E4M3).value == 448.0);  // halfway: ties to the even 448
  CHECK(store(480.0, kFp8E4M3).kind == Stored::Overflow);
  CHECK(std::isnan(store(480.0, kFp8E4M3).value));  // E4M3 has no infinity
  CHECK(store(std::ldexp(1.0, -24), kFp16).kind == Stored::Subnormal);
  CHECK(store(std::ldexp(1.0, -25), kFp16).kind == Stored::Zero);  // halfway to 2^-24: ties to even 0
  // "Values with an exponent below -24 become 0 in FP16": 2^-26 is lost ...
  CHECK(store(std::ldexp(1.0, -26), kFp16).kind == Stored::Zero);
  // ... but scaled by 8 (the smallest factor of the mixed-precision paper) it is 2^-23, exact.
  CHECK(store(std::ldexp(1.0, -26) * 8, kFp16).value == std::ldexp(1.0, -23));
}

TEST_CASE("loss scaling: 1,024 turns a 0.000001 gradient into 0.001024, a normal FP16 value", "[formats]") {
  const double g = 0.000001, scale = 1024;
  CHECK(g * scale == Approx(0.001024).epsilon(1e-12));
  const FormatLimits l = format_limits(kFp16);
  // Unscaled, 1e-6 is below FP16's normal range: a subnormal with only a few significant bits.
  CHECK(g < l.min_normal);
  CHECK(g > l.min_subnormal);
  const StoredValue raw = store(g, kFp16);
  CHECK(raw.kind == Stored::Subnormal);
  CHECK(raw.value == 17 * std::ldexp(1.0, -24));  // 1.013e-6: 1.3% off
  CHECK(std::abs(raw.value - g) / g > 0.01);
  // Scaled, it is a normal number with FP16's full 11-bit precision, and dividing by the power
  // of two 1,024 afterwards (in FP32) is exact.
  const StoredValue scaled = store(g * scale, kFp16);
  CHECK(scaled.kind == Stored::Normal);
  CHECK(std::abs(scaled.value - g * scale) / (g * scale) <= std::ldexp(1.0, -11));
  CHECK(std::abs(scaled.value / scale - g) / g <= std::ldexp(1.0, -11));
}

TEST_CASE("loss scale factors 8 to 32K: which gradients survive", "[formats]") {
  const ScaledWindow w8 = loss_scale_window(kFp16, 8);
  CHECK(w8.smallest == std::ldexp(1.0, -27));
  CHECK(w8.largest == 65'504.0 / 8);
  const ScaledWindow w32k = loss_scale_window(kFp16, 32 * 1024);
  CHECK(w32k.smallest == std::ldexp(1.0, -39));
  // 32K leaves room for gradients just under 2; one of 2 would overflow to infinity.
  CHECK(w32k.largest == 1.9990234375);
  CHECK(store(2.0 * 32 * 1024, kFp16).kind == Stored::Overflow);
}

TEST_CASE("DeepSeek-V3 block scaling: 1x128 activations, 128x128 weights", "[formats]") {
  // Qwen3-8B's gate projection [12288, 4096] and the activations of 8,192 tokens x 4,096.
  CHECK(scale_factor_count(12288, 4096, kWeightBlock) == 96 * 32);
  CHECK(scale_factor_count(8192, 4096, kActivationBlock) == 8192 * 32);
  CHECK(scale_factor_count(100, 130, kWeightBlock) == 2);  // partial blocks still get a scale
  CHECK(block_scaled_bytes(12288, 4096, kWeightBlock) == 12288LL * 4096 + 3072 * 4);
  // FP8 weights with an FP32 scale per 128 x 128 block: ~1.0002 bytes per parameter.
  const double per = block_scaled_bytes_per_element(kWeightBlock);
  CHECK(per == 1.000244140625);
  CHECK(std::round(per * 1e4) / 1e4 == 1.0002);
  // Only the copy the matrix multiplies read shrinks: 2N = 16.4 GB in FP16, ~8.2 GB in FP8.
  const double n = static_cast<double>(count_parameters(*find_transformer("qwen3-8b")).total);
  CHECK(std::round(2 * n / 1e8) / 10 == 16.4);
  CHECK(std::round(n * per / 1e8) / 10 == 8.2);
}
