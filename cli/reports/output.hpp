#pragma once
// Writing a command's files: one place that opens, writes and reports failures. A file is
// written to a temporary file in its directory and renamed into place once every write and the
// close succeeded, so a failed write never leaves a half-written file where the old one was.
#include <cstdio>
#include <stdexcept>
#include <string>

namespace stepsim::cli {

// An output that cannot be written: "cannot write PATH: <the system's reason>". Exit code 1.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file being written: a temporary file next to `path`, renamed onto it by commit(). "-" is
// stdout; a path that is not a regular file (/dev/null, /dev/full, a FIFO) is written in place.
// Destroyed without commit() (an exception): the temporary file is removed, the old file kept.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  std::FILE* get() const { return file_; }
  const std::string& path() const { return path_; }
  // Flushes, closes and renames into place; throws OutputError with the system's reason.
  void commit();
  // A write failed with `err`: throws OutputError naming the path and the reason (the
  // temporary file goes with this object).
  [[noreturn]] void fail(int err) const;

 private:
  std::string path_, tmp_;
  std::string target_;  // the file written: path_, or what the link path_ names
  std::FILE* file_ = nullptr;
  bool direct_ = false;  // not a regular file: written in place
  int temp_slot_ = -1;   // where a signal finds tmp_ to remove it
};

// Writes `content` to `path` ("-" = stdout) through an OutputFile. Throws OutputError.
void write_file(const std::string& path, const std::string& content);

// The end of a command: stdout flushed and free of write errors, or an OutputError
// ("cannot write to stdout: No space left on device").
void check_stdout();

}  // namespace stepsim::cli
