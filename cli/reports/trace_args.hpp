#pragma once
// A trace slice's arguments, typed, so that each trace format writes them its own way: JSON
// object members in a Chrome trace, debug annotations in a Perfetto one. Filled per slice into
// fixed room (no allocation); a slice has at most kMax.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string_view>

#include "sim/time.hpp"

namespace stepsim::cli {

struct TraceArg {
  enum class Kind : std::uint8_t {
    Int,        // `number`
    Bool,       // `number` != 0
    Real,       // `real`, the shortest text that reads back as it
    Real4,      // `real`, four decimals
    Millis,     // `number` nanoseconds, written as milliseconds with three decimals
    Text,       // `text`
    SliceTime,  // as Millis, the slice's own start or end restated: a format whose viewer shows
                // the slice's times itself (Perfetto) leaves it out
  };
  // A string literal: writers may remember keys by their address (a Perfetto trace interns
  // them), so a key must not be a buffer that is reused with other text.
  std::string_view key;
  Kind kind = Kind::Int;
  std::int64_t number = 0;
  double real = 0;
  std::string_view text;  // must outlive the slice call
};

class TraceArgs {
 public:
  static constexpr std::size_t kMax = 12;

  TraceArgs& integer(std::string_view key, std::int64_t v) { return add(key, TraceArg::Kind::Int, v, 0, {}); }
  TraceArgs& boolean(std::string_view key, bool v) { return add(key, TraceArg::Kind::Bool, v ? 1 : 0, 0, {}); }
  TraceArgs& real(std::string_view key, double v) { return add(key, TraceArg::Kind::Real, 0, v, {}); }
  TraceArgs& real4(std::string_view key, double v) { return add(key, TraceArg::Kind::Real4, 0, v, {}); }
  TraceArgs& millis(std::string_view key, Time ns) { return add(key, TraceArg::Kind::Millis, ns, 0, {}); }
  TraceArgs& slice_time(std::string_view key, Time ns) { return add(key, TraceArg::Kind::SliceTime, ns, 0, {}); }
  TraceArgs& text(std::string_view key, std::string_view v) { return add(key, TraceArg::Kind::Text, 0, 0, v); }
  void clear() { n_ = 0; }
  std::span<const TraceArg> items() const { return {a_.data(), n_}; }
  bool empty() const { return n_ == 0; }

 private:
  TraceArgs& add(std::string_view key, TraceArg::Kind kind, std::int64_t number, double real, std::string_view text) {
    if (n_ == kMax) [[unlikely]]
      too_many();
    a_[n_++] = TraceArg{key, kind, number, real, text};
    return *this;
  }
  [[noreturn, gnu::cold]] static void too_many() {
    throw std::logic_error("TraceArgs: more than kMax arguments for one slice");
  }
  std::array<TraceArg, kMax> a_{};
  std::size_t n_ = 0;
};

}  // namespace stepsim::cli
