#pragma once
// Writing a command's files: one place that opens, writes and reports failures.
#include <string>

namespace stepsim::cli {

// Writes `content` to `path` ("-" = stdout). Throws std::runtime_error naming the path.
void write_file(const std::string& path, const std::string& content);

}  // namespace stepsim::cli
