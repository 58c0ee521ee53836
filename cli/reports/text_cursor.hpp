#pragma once
// Text written through a cursor into a buffer that the caller made large enough: a trace event is
// a dozen short pieces per op, and appending each to a std::string (a capacity check and a call
// per piece) was most of a trace's cost. The caller sizes the room (TextCursor::kNumber per
// number, 6 bytes per character of escaped text).
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "sim/time.hpp"

namespace stepsim::cli {

class TextCursor {
 public:
  static constexpr std::size_t kNumber = 32;  // room for any number these write

  explicit TextCursor(char* at) : p_(at) {}

  template <std::size_t N>
  TextCursor& operator<<(const char (&literal)[N]) {
    std::memcpy(p_, literal, N - 1);
    p_ += N - 1;
    return *this;
  }
  TextCursor& operator<<(std::string_view s) {
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
    return *this;
  }
  TextCursor& operator<<(char c) {
    *p_++ = c;
    return *this;
  }
  void integer(std::int64_t v) { p_ = std::to_chars(p_, p_ + kNumber, v).ptr; }
  // Integer nanoseconds as microseconds with three decimals, exactly ("12.345").
  void micros3(Time ns);
  // to_ms(ns) as fmt's "{:.3f}" prints it ("1.235"), without formatting a double in the usual case.
  void millis3(Time ns);
  // The shortest text that reads back as v (fmt's "{}").
  void shortest(double v);
  // v with four decimals (fmt's "{:.4f}"); beyond 10^20 in magnitude, as shortest().
  void fixed4(double v);
  // JSON string escaping (the inside of the quotes): up to 6 bytes per character.
  void json_escaped(std::string_view s);

  char* end() const { return p_; }
  std::size_t written_since(const char* start) const { return static_cast<std::size_t>(p_ - start); }

 private:
  char* p_;
};

}  // namespace stepsim::cli
