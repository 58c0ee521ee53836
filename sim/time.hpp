#pragma once
// Simulated time: integer nanoseconds. Never accumulate floats into a Time.
#include <cstdint>

namespace stepsim {

using Time = std::int64_t;  // nanoseconds
using Bytes = std::int64_t;

inline constexpr Time kNanosecond = 1;
inline constexpr Time kMicrosecond = 1'000;
inline constexpr Time kMillisecond = 1'000'000;
inline constexpr Time kSecond = 1'000'000'000;

// Time to push `bytes` through `bytes_per_second`, rounded up to the next nanosecond.
// 128-bit intermediate so that terabyte transfers do not overflow.
inline Time transfer_time(Bytes bytes, std::int64_t bytes_per_second) {
  if (bytes <= 0 || bytes_per_second <= 0) return 0;
  __int128 num = static_cast<__int128>(bytes) * kSecond;
  return static_cast<Time>((num + bytes_per_second - 1) / bytes_per_second);
}

inline double to_ms(Time t) { return static_cast<double>(t) / kMillisecond; }
inline double to_s(Time t) { return static_cast<double>(t) / kSecond; }

}  // namespace stepsim
