#pragma once
// The files a command reads: each read whole, with a size cap, and remembered, so that no output
// of the same command replaces one (a --html naming the scenario's model file, -o naming the
// measured runs it fits).
#include <string>

namespace stepsim::cli {

// A whole input file: refuses what is not a regular file (a directory, /dev/zero, a FIFO) and
// files over kMaxInputBytes, with InputError(file, 0, "", reason). Remembers the file.
std::string read_input_file(const std::string& path);

// The input file this process has read that `path` names (the same file by any name: a link, a
// relative path), or "" if none.
std::string input_named_by(const std::string& path);

// The file an output `path` writes: itself, or what its links name (followed even where the file
// is not there yet). InputError for a link that loops.
std::string output_target(const std::string& path);

// Refuses, at `option`, an output `path` ("-" and "" are none) that names a file this process has
// read, or whose folder does not exist: InputError, before anything is written.
void check_output_path(const std::string& option, const std::string& path);

}  // namespace stepsim::cli
