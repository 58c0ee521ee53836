#pragma once
// The one escaping of user text in messages: a message is one line of printable text whatever
// bytes the input held (control characters, invalid UTF-8, newlines).
#include <string>
#include <string_view>

namespace stepsim::cli {

// `text` with valid UTF-8 and printable ASCII kept; \n, \r, \t written as such; every other
// control byte and every byte that is not part of a valid UTF-8 sequence as \xNN.
std::string printable(std::string_view text);

}  // namespace stepsim::cli
