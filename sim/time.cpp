#include "sim/time.hpp"

#include <fmt/format.h>

#include "sim/checked.hpp"

namespace stepsim {

void throw_transfer_overflow(Bytes bytes, std::int64_t bytes_per_second) {
  throw TimeOverflowError(fmt::format("too large: {} bytes at {} bytes/s would exceed {} years of simulated time",
                                      bytes, bytes_per_second, kTimeLimitYears));
}

void throw_bytes_overflow(std::string_view what) {
  throw OverflowError(fmt::format("too large: {} would exceed 1 EiB", what));
}

void throw_time_overflow(std::string_view what) {
  throw TimeOverflowError(fmt::format("too large: {} would exceed {} years of simulated time", what, kTimeLimitYears));
}

}  // namespace stepsim
