#include "cli/reports/text_cursor.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

namespace stepsim::cli {

namespace {
// Three decimal digits of v (0-999).
char* three_digits(char* p, int v) {
  p[0] = static_cast<char>('0' + v / 100);
  p[1] = static_cast<char>('0' + v / 10 % 10);
  p[2] = static_cast<char>('0' + v % 10);
  return p + 3;
}
}  // namespace

void TextCursor::micros3(Time ns) {
  if (ns < 0) {
    *p_++ = '-';
    ns = -ns;  // Time is never the most negative int64 here: durations and starts of a run
  }
  integer(ns / 1000);
  *p_++ = '.';
  p_ = three_digits(p_, static_cast<int>(ns % 1000));
}

void TextCursor::millis3(Time ns) {
  // to_ms(ns) = ns / 1e6 as a double, printed with 3 decimals: the microsecond count rounded to
  // nearest. Below 10^14 ns the double is within 0.02 ns of the exact quotient, so only an exact
  // half (remainder 500 ns) could round either way; that case, and huge or negative times, go
  // through fmt to print what fmt prints.
  if (ns >= 0 && ns < 100'000'000'000'000 && ns % 1000 != 500) {
    const std::int64_t us = ns / 1000 + (ns % 1000 > 500 ? 1 : 0);
    integer(us / 1000);
    *p_++ = '.';
    p_ = three_digits(p_, static_cast<int>(us % 1000));
    return;
  }
  p_ = fmt::format_to(p_, FMT_COMPILE("{:.3f}"), to_ms(ns));
}

void TextCursor::shortest(double v) { p_ = fmt::format_to(p_, FMT_COMPILE("{}"), v); }

void TextCursor::fixed4(double v) {
  // Past 10^20 fixed notation would outgrow kNumber: such values are written shortest.
  if (!(v > -1e20 && v < 1e20)) return shortest(v);
  p_ = fmt::format_to(p_, FMT_COMPILE("{:.4f}"), v);
}

void TextCursor::json_escaped(std::string_view s) {
  // Runs of plain characters are copied whole (op names never need escaping).
  const auto plain = [](char c) { return c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20; };
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = i;
    while (j < s.size() && plain(s[j])) ++j;
    *this << s.substr(i, j - i);
    if (j == s.size()) return;
    const char c = s[j];
    switch (c) {
      case '"': *this << "\\\""; break;
      case '\\': *this << "\\\\"; break;
      case '\n': *this << "\\n"; break;
      case '\t': *this << "\\t"; break;
      default: p_ = fmt::format_to(p_, FMT_COMPILE("\\u{:04x}"), static_cast<int>(c));
    }
    i = j + 1;
  }
}

}  // namespace stepsim::cli
