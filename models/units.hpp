#pragma once
// Quantities with explicit units, parsed exactly (decimal digits, no float round trip) into
// integer nanoseconds, bytes and bytes per second.
//   durations:  ns, us (µs), ms, s, min, h, d      e.g. "10ms", "1.5us", "16.38s"
//   sizes:      B, KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024),
//               bit, Kbit, Mbit, Gbit (x/8 bytes)  e.g. "230MiB", "1.24GB"
//   bandwidth:  a size per second                  e.g. "32GB/s", "200Gbit/s"
//   counts:     a whole number, written out, with an exponent or with a suffix K, M, B, T
//               (thousand, million, billion, trillion) e.g. "4096", "2.2e12", "15T", "1.5K"
// A bare number is rejected where a unit is due: a unit-less duration is the commonest scenario
// mistake.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/time.hpp"

namespace stepsim {

std::optional<Time> parse_duration(std::string_view text, std::string* error = nullptr);
std::optional<Bytes> parse_bytes(std::string_view text, std::string* error = nullptr);
std::optional<std::int64_t> parse_bandwidth(std::string_view text, std::string* error = nullptr);

// A count as `text` writes it, exactly (1.0001K is 1000.1: not whole). The suffixes are capitals
// only, one spelling (m could be milli, b bits), and there is no G (giga, or GiB?).
struct ParsedWhole {
  enum class Problem {
    None,
    NotWhole,    // not a number, or a fraction
    Suffix,      // a count's suffix mistaken: 15t, 8k, 2G
    Both,        // an exponent and a suffix: 1e3K
    OutOfRange,  // past int64
  };
  std::int64_t value = 0;
  Problem problem = Problem::None;
};
ParsedWhole parse_whole(std::string_view text);

// A duration for a person, in the largest unit that keeps 3-4 significant digits (seconds up to
// 100 s, minutes up to 100 min, hours up to 48 h), one decimal below 100: "4.0 s", "52.8 s",
// "2.0 min", "30.2 min", "500 ms", "0 s". The one helper for durations in prose and in tables
// whose figures are not tied to a unit (step tables keep their ms or s columns).
std::string format_duration(Time t);

}  // namespace stepsim
