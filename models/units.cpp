#include "models/units.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>

#include <fmt/format.h>

namespace stepsim {
namespace {

struct Decimal {
  __int128 digits = 0;  // value = digits / 10^scale (x 10^exp10)
  int scale = 0;
  bool negative = false;
};

// Splits "12.5e3ms" into number 12.5e3 and unit "ms".
bool split(std::string_view text, Decimal& num, std::string_view& unit, std::string* error) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) num.negative = text[i++] == '-';
  bool any = false, dot = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (num.digits > (__int128{1} << 100)) {
        if (error) *error = "number too long";
        return false;
      }
      num.digits = num.digits * 10 + (c - '0');
      if (dot) ++num.scale;
      any = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!any) {
    if (error) *error = fmt::format("'{}' does not start with a number", text);
    return false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E') && i + 1 < text.size() &&
      (std::isdigit(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '-' || text[i + 1] == '+')) {
    ++i;
    bool neg = false;
    if (text[i] == '-' || text[i] == '+') neg = text[i++] == '-';
    int e = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) e = e * 10 + (text[i++] - '0');
    if (e > 30) {
      if (error) *error = "exponent too large";
      return false;
    }
    for (int k = 0; k < e; ++k) {
      if (neg) {
        ++num.scale;
      } else if (__builtin_mul_overflow(num.digits, 10, &num.digits)) {
        if (error) *error = fmt::format("'{}' is too large", text);
        return false;
      }
    }
  }
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::size_t j = text.size();
  while (j > i && std::isspace(static_cast<unsigned char>(text[j - 1]))) --j;
  unit = text.substr(i, j - i);
  return true;
}

// value * factor_num / factor_den, rounded to nearest; nullopt on overflow.
std::optional<std::int64_t> scale_to(const Decimal& d, __int128 factor_num, __int128 factor_den) {
  __int128 num = 0;
  if (__builtin_mul_overflow(d.digits, factor_num, &num)) return std::nullopt;
  __int128 den = factor_den;
  for (int k = 0; k < d.scale; ++k)
    if (__builtin_mul_overflow(den, 10, &den)) return 0;  // more decimals than int128 holds: under one unit, read as 0
  __int128 q = num / den;
  if (const __int128 r = num % den; r >= den - r) ++q;  // halves up, as (num + den / 2) / den without its overflow
  if (q > INT64_MAX) return std::nullopt;
  return static_cast<std::int64_t>(d.negative ? -q : q);
}

struct UnitFactor {
  std::string_view name;
  std::int64_t num;
  std::int64_t den;
};

constexpr UnitFactor kTimeUnits[] = {
    {"ns", 1, 1},
    {"us", 1000, 1},
    {"µs", 1000, 1},
    {"ms", 1'000'000, 1},
    {"s", 1'000'000'000, 1},
    {"min", 60'000'000'000, 1},
    {"h", 3'600'000'000'000, 1},
    {"d", 86'400'000'000'000, 1},
    {"days", 86'400'000'000'000, 1},
    // Written out, as `30 days` always was.
    // clang-format off
    {"second", 1'000'000'000, 1}, {"seconds", 1'000'000'000, 1}, {"minute", 60'000'000'000, 1},
    {"minutes", 60'000'000'000, 1}, {"hour", 3'600'000'000'000, 1}, {"hours", 3'600'000'000'000, 1},
    {"day", 86'400'000'000'000, 1},
    // clang-format on
};
constexpr UnitFactor kSizeUnits[] = {
    {"B", 1, 1},
    {"KB", 1'000, 1},
    {"MB", 1'000'000, 1},
    {"GB", 1'000'000'000, 1},
    {"TB", 1'000'000'000'000, 1},
    {"KiB", 1024, 1},
    {"MiB", 1024 * 1024, 1},
    {"GiB", 1024LL * 1024 * 1024, 1},
    {"TiB", 1024LL * 1024 * 1024 * 1024, 1},
    {"bit", 1, 8},
    {"Kbit", 1'000, 8},
    {"Mbit", 1'000'000, 8},
    {"Gbit", 1'000'000'000, 8},
    {"Tbit", 1'000'000'000'000, 8},
};

template <std::size_t N>
std::optional<std::int64_t> parse_with(std::string_view text, const UnitFactor (&units)[N], std::string_view what,
                                       std::string_view examples, std::string* error) {
  Decimal d;
  std::string_view unit;
  if (!split(text, d, unit, error)) return std::nullopt;
  if (unit.empty()) {
    if (error) *error = fmt::format("'{}' has no unit (write it like {})", text, examples);
    return std::nullopt;
  }
  for (const auto& u : units) {
    if (u.name == unit) {
      auto v = scale_to(d, u.num, u.den);
      if (!v && error) *error = fmt::format("'{}' is too large", text);
      return v;
    }
  }
  if (error) {
    std::string known;
    for (const auto& u : units) known += (known.empty() ? "" : ", ") + std::string(u.name);
    *error = fmt::format("'{}': unknown {} unit '{}' (known: {})", text, what, unit, known);
  }
  return std::nullopt;
}

}  // namespace

std::optional<Time> parse_duration(std::string_view text, std::string* error) {
  return parse_with(text, kTimeUnits, "time", "10ms or 1.5us", error);
}

std::optional<Bytes> parse_bytes(std::string_view text, std::string* error) {
  return parse_with(text, kSizeUnits, "size", "230MiB or 1.24GB", error);
}

std::optional<std::int64_t> parse_bandwidth(std::string_view text, std::string* error) {
  const auto slash = text.rfind("/s");
  if (slash == std::string_view::npos || slash + 2 != text.size()) {
    if (error) *error = fmt::format("'{}' is not a bandwidth (write it like 32GB/s or 200Gbit/s)", text);
    return std::nullopt;
  }
  return parse_with(text.substr(0, slash), kSizeUnits, "size", "32GB/s or 200Gbit/s", error);
}

ParsedWhole parse_whole(std::string_view text) {
  using Problem = ParsedWhole::Problem;
  std::size_t i = 0;
  const bool negative = i < text.size() && text[i] == '-';
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  const auto digits_from = [&](std::size_t& at) {
    const std::size_t from = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
    return text.substr(from, at - from);
  };
  const std::string_view whole = digits_from(i);
  std::string_view fraction;
  if (i < text.size() && text[i] == '.') fraction = digits_from(++i);
  if (whole.empty() && fraction.empty()) return {0, Problem::NotWhole};
  // The value is digits x 10^exp10: an exponent or a suffix adds to exp10, each decimal takes one.
  long exp10 = -static_cast<long>(fraction.size());
  const std::string_view rest = text.substr(i);
  if (!rest.empty() && (rest[0] == 'e' || rest[0] == 'E')) {
    std::size_t at = 1;
    const bool down = at < rest.size() && rest[at] == '-';
    if (at < rest.size() && (rest[at] == '-' || rest[at] == '+')) ++at;
    const std::string_view e = rest.substr(at);
    const std::size_t bad = e.find_first_not_of("0123456789");
    if (bad != std::string_view::npos && bad > 0 && bad + 1 == e.size() &&
        std::string_view("KMBT").find(e[bad]) != std::string_view::npos)
      return {0, Problem::Both};
    if (e.empty() || bad != std::string_view::npos) return {0, Problem::NotWhole};
    long n = 0;
    for (const char c : e) n = std::min(n * 10 + (c - '0'), 100'000L);  // past int64 long before
    exp10 += down ? -n : n;
  } else if (rest.size() == 1) {
    constexpr std::string_view kSuffixes = "KMBT";  // 10^3, 10^6, 10^9, 10^12
    const auto k = kSuffixes.find(rest[0]);
    // A suffix mistaken (15t, 8k, 2G) is named as such; another letter (3x) is not a count.
    if (k == std::string_view::npos)
      return {0,
              std::string_view("kmbtgG").find(rest[0]) == std::string_view::npos ? Problem::NotWhole : Problem::Suffix};
    exp10 += 3 * static_cast<long>(k + 1);
  } else if (!rest.empty()) {
    return {0, Problem::NotWhole};
  }
  // The significant digits, without leading zeros; trailing zeros moved into the exponent.
  std::string digits = std::string(whole) + std::string(fraction);
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
  while (!digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++exp10;
  }
  if (digits.empty()) return {0, Problem::None};  // 0, 0.0, 0e99
  if (exp10 < 0) return {0, Problem::NotWhole};
  if (static_cast<long>(digits.size()) + exp10 > 19) return {0, Problem::OutOfRange};
  __int128 v = 0;  // under 10^19
  for (const char c : digits) v = v * 10 + (c - '0');
  for (long k = 0; k < exp10; ++k) v *= 10;
  if (negative) v = -v;
  if (v > INT64_MAX || v < INT64_MIN) return {0, Problem::OutOfRange};
  return {static_cast<std::int64_t>(v), Problem::None};
}

std::string format_duration(Time t) {
  // The largest unit that still shows 3-4 significant digits: one decimal below 100, none from
  // 100 up. A unit takes over from the next smaller one at 1 (1,000 ms -> 1.0 s), except where
  // the smaller unit still reads better: seconds up to 100 s (78.9 s, not 1.3 min), minutes up
  // to 100 min, hours up to 48 h. 4 s -> "4.0 s", 52.83 s -> "52.8 s", 120 s -> "2.0 min",
  // 1,814.7 s -> "30.2 min", 500 ms -> "500 ms", 0 -> "0 s".
  struct Unit {
    Time ns;
    Time from;  // the unit is used from this magnitude up
    const char* name;
  };
  static constexpr Unit kUnits[] = {{86'400 * kSecond, 48 * 3'600 * kSecond, "d"},
                                    {3'600 * kSecond, 100 * 60 * kSecond, "h"},
                                    {60 * kSecond, 100 * kSecond, "min"},
                                    {kSecond, kSecond, "s"},
                                    {kMillisecond, kMillisecond, "ms"},
                                    {kMicrosecond, kMicrosecond, "us"},
                                    {1, 0, "ns"}};
  if (t == 0) return "0 s";
  const Time magnitude = t < 0 ? (t == std::numeric_limits<Time>::min() ? std::numeric_limits<Time>::max() : -t) : t;
  std::size_t u = 0;
  while (u + 1 < std::size(kUnits) && magnitude < kUnits[u].from) ++u;
  const double v = static_cast<double>(t) / static_cast<double>(kUnits[u].ns);
  // 99.96 rounds to "100.0" with one decimal: from there on, whole numbers.
  return fmt::format("{:.{}f} {}", v, std::fabs(v) >= 99.95 ? 0 : 1, kUnits[u].name);
}

}  // namespace stepsim
