#pragma once
// Checked arithmetic for values a user controls (counts, sizes, times). One way to do each thing:
//  * checked_add / checked_mul: int64 results, std::nullopt when the exact result does not fit;
//    ceil_div: a rounded-up quotient that cannot overflow;
//  * to_int64: a double rounded to the nearest integer, std::nullopt when it is not finite or
//    does not fit (a plain cast of such a double is undefined behaviour);
//  * time_add / time_mul / time_from_ns: the same for simulated time (sim/time.hpp), throwing
//    TimeOverflowError "too large: <what> would exceed 292 years of simulated time" (exit 2).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/time.hpp"

namespace stepsim {

inline std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

inline std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// ceil(a / b) for a >= 0, b > 0, without the overflow of (a + b - 1) / b (hosts for cards).
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Nearest integer (halves away from zero, as std::llround), or nullopt for NaN, infinities and
// values outside int64. 2^63 is exactly representable as a double and is the first one too large.
inline std::optional<std::int64_t> to_int64(double x) {
  if (!std::isfinite(x)) return std::nullopt;
  const double r = std::round(x);
  if (r >= 9223372036854775808.0 || r < -9223372036854775808.0) return std::nullopt;
  return static_cast<std::int64_t>(r);
}

// The one message of a time past the limit: "too large: <what> would exceed 292 years of simulated time".
[[noreturn]] void throw_time_overflow(std::string_view what);

// a + b as simulated time; throws TimeOverflowError naming `what` when it passes the limit.
inline Time time_add(Time a, Time b, std::string_view what) {
  const auto v = checked_add(a, b);
  if (!v) throw_time_overflow(what);
  return *v;
}

// t * n as simulated time (n repetitions of a duration).
inline Time time_mul(Time t, std::int64_t n, std::string_view what) {
  const auto v = checked_mul(t, n);
  if (!v) throw_time_overflow(what);
  return *v;
}

// A duration computed in floating point (nanoseconds), rounded to the nearest nanosecond.
// Not finite or past the limit: TimeOverflowError naming `what`.
inline Time time_from_ns(double ns, std::string_view what) {
  const auto v = to_int64(ns);
  if (!v) throw_time_overflow(what);
  return *v;
}

// A duration computed in seconds, rounded up to the next nanosecond (a cost is never shortened to
// zero by rounding); 0 for none or less. Not finite or past the limit: TimeOverflowError naming `what`.
inline Time time_from_seconds_up(double seconds, std::string_view what) {
  return seconds <= 0 ? 0 : time_from_ns(std::ceil(seconds * 1e9), what);
}

// The largest byte count a model computes: 2^60 bytes (1 EiB), a million times any accelerator's
// memory, so that a handful of such counts still add up inside int64.
inline constexpr Bytes kMaxBytes = Bytes{1} << 60;

[[noreturn]] void throw_bytes_overflow(std::string_view what);

// A byte count computed in floating point, whole bytes toward zero (as a cast). Not finite or
// past kMaxBytes: OverflowError "too large: <what> would exceed 1 EiB".
inline Bytes bytes_from(double bytes, std::string_view what) {
  if (!(std::abs(bytes) <= static_cast<double>(kMaxBytes))) throw_bytes_overflow(what);
  return static_cast<Bytes>(bytes);
}

}  // namespace stepsim
