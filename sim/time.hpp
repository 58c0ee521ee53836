#pragma once
// Simulated time: integer nanoseconds. Never accumulate floats into a Time.
#include <cstdint>
#include <stdexcept>

namespace stepsim {

using Time = std::int64_t;  // nanoseconds
using Bytes = std::int64_t;

inline constexpr Time kNanosecond = 1;
inline constexpr Time kMicrosecond = 1'000;
inline constexpr Time kMillisecond = 1'000'000;
inline constexpr Time kSecond = 1'000'000'000;

// The largest simulated time: 2^63 - 1 ns, 292.47 Julian years (365.25 days).
inline constexpr int kTimeLimitYears = 292;

// A figure computed from the input (a simulated time, a byte count) past what stepsim holds.
// Reported as "too large: ..." (the CLI exits 2: it is the input's fault).
class OverflowError : public std::overflow_error {
 public:
  using std::overflow_error::overflow_error;
};

// A simulated time (a sum of durations) that would pass the limit above: "too large: ... would
// exceed 292 years".
class TimeOverflowError : public OverflowError {
 public:
  using OverflowError::OverflowError;
};

// a + b for non-negative times; false (and *out untouched) when it would pass the limit.
inline bool add_time(Time a, Time b, Time* out) { return !__builtin_add_overflow(a, b, out); }

// Time to push `bytes` through `bytes_per_second`, rounded up to the next nanosecond; a transfer
// longer than the time limit throws TimeOverflowError. `bytes` is 128-bit so that a count times a
// size (an all-to-all's rows x row bytes) need not fit int64 first.
[[noreturn]] void throw_transfer_overflow(__int128 bytes, std::int64_t bytes_per_second);
Time transfer_time_wide(__int128 bytes, std::int64_t bytes_per_second);
inline Time transfer_time(__int128 bytes, std::int64_t bytes_per_second) {
  if (bytes <= 0 || bytes_per_second <= 0) return 0;
  // Below 2^96 bytes, bytes x 10^9 fits 128 bits (every int64 byte count is).
  if (bytes >= (static_cast<__int128>(1) << 96)) [[unlikely]]
    return transfer_time_wide(bytes, bytes_per_second);
  const __int128 t = (bytes * kSecond + bytes_per_second - 1) / bytes_per_second;
  if (t > INT64_MAX) throw_transfer_overflow(bytes, bytes_per_second);
  return static_cast<Time>(t);
}

inline double to_ms(Time t) { return static_cast<double>(t) / kMillisecond; }
inline double to_s(Time t) { return static_cast<double>(t) / kSecond; }

}  // namespace stepsim
