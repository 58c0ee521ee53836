#include "sim/time.hpp"

#include <fmt/format.h>

#include "sim/checked.hpp"

namespace stepsim {

void throw_transfer_overflow(__int128 bytes, std::int64_t bytes_per_second) {
  throw TimeOverflowError(fmt::format("too large: {} bytes at {} bytes/s would exceed {} years of simulated time",
                                      bytes, bytes_per_second, kTimeLimitYears));
}

// Whole seconds first, then the rest (below the rate, so rest x 10^9 fits 128 bits).
Time transfer_time_wide(__int128 bytes, std::int64_t bytes_per_second) {
  const __int128 seconds = bytes / bytes_per_second, rest = bytes % bytes_per_second;
  if (seconds > INT64_MAX / kSecond) throw_transfer_overflow(bytes, bytes_per_second);
  const __int128 t = seconds * kSecond + (rest * kSecond + bytes_per_second - 1) / bytes_per_second;
  if (t > INT64_MAX) throw_transfer_overflow(bytes, bytes_per_second);
  return static_cast<Time>(t);
}

void throw_bytes_overflow(std::string_view what) {
  throw OverflowError(fmt::format("too large: {} would exceed 1 EiB", what));
}

void throw_time_overflow(std::string_view what) {
  throw TimeOverflowError(fmt::format("too large: {} would exceed {} years of simulated time", what, kTimeLimitYears));
}

}  // namespace stepsim
