#pragma once
// UTF-8 as RFC 3629 defines it, for the check that every input is UTF-8 and for escaping user text
// in messages (cli/input/printable.hpp).
#include <cstddef>
#include <string_view>

namespace stepsim::cli {

// The length (2 to 4 bytes) of the valid multi-byte sequence at `i`, or 0: a lead byte, then its
// continuation bytes; no overlong forms, surrogates or code points past U+10FFFF.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

// Where `text` stops being UTF-8, or npos: every input and --set value must be, as the JSON
// reports are.
std::size_t invalid_utf8_at(std::string_view text);

}  // namespace stepsim::cli
