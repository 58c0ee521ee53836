#include "cli/input/printable.hpp"

#include <fmt/format.h>

#include "cli/input/utf8.hpp"

namespace stepsim::cli {

namespace {

// Length of the valid UTF-8 sequence at `i` that prints, or 0: C1 controls (U+0080..U+009F) do
// not print either.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const std::size_t n = utf8_sequence_length(s, i);
  if (n == 2 && static_cast<unsigned char>(s[i]) == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) return 0;
  return n;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\n' || c == '\r' || c == '\t') {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
      ++i;
    } else if (const std::size_t n = c >= 0x80 ? utf8_length(text, i) : 0; n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += fmt::format("\\x{:02X}", c);
      ++i;
    }
  }
  return out;
}

}  // namespace stepsim::cli
