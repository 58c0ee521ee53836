#pragma once
// The unit conversions and roundings reports print with, defined once: MiB and GiB of bytes, days
// of simulated time, a figure rounded to 3 decimals for JSON, milliseconds with 3 decimals, a span
// in seconds or milliseconds, a fraction as a percentage with a given number of decimals, and a
// step's exposed communication by kind.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/time.hpp"

namespace stepsim::cli {

inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * kMiB;
inline constexpr double kDaySeconds = 86400.0;

inline double mib(Bytes b) { return static_cast<double>(b) / kMiB; }
inline double gib(Bytes b) { return static_cast<double>(b) / kGiB; }
inline double days(Time t) { return to_s(t) / kDaySeconds; }
inline double round3(double x) { return std::round(x * 1000.0) / 1000.0; }
inline std::string ms3(Time t) { return fmt::format("{:.3f}", to_ms(t)); }
// Seconds for long spans, milliseconds otherwise: "12.345 s" or "12.345 ms".
inline std::string seconds_or_ms(Time t, bool seconds) {
  return seconds ? fmt::format("{:.3f} s", to_s(t)) : fmt::format("{:.3f} ms", to_ms(t));
}
// 0.1234 with 1 decimal: "12.3%".
inline std::string percent(double fraction, int decimals) {
  return fmt::format("{:.{}f}%", 100.0 * fraction, decimals);
}

// A step's exposed communication in one cell: the total, then each kind that shows at two
// decimals (5 ms or more), "3.79 s (DP 1.30 EP 2.49)", so that the parts add up to the total as
// printed, give or take the rounding.
inline std::string exposed_cell(const std::vector<std::pair<std::string, Time>>& kinds) {
  Time total = 0;
  std::string parts;
  for (const auto& [what, t] : kinds) {
    total += t;
    if (t >= 5 * kMillisecond) parts += fmt::format("{}{} {:.2f}", parts.empty() ? "" : " ", what, to_s(t));
  }
  return fmt::format("{:.2f} s{}", to_s(total), parts.empty() ? "" : " (" + parts + ")");
}

}  // namespace stepsim::cli
