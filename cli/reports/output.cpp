#include "cli/reports/output.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "cli/input/input.hpp"
#include "cli/input/input_files.hpp"

namespace stepsim::cli {

namespace {

[[noreturn]] void stdout_failed(int err) {
  throw OutputError(fmt::format("cannot write to stdout: {}", std::strerror(err)));
}

}  // namespace

OutputFile::OutputFile(const std::string& path) : path_(path) {
  if (path == "-") {
    file_ = stdout;
    return;
  }
  // Never over a file this command read (a model file named as the report), nor into a folder
  // that is not there: bad input (exit 2). Commands check their outputs so before their work;
  // this is the last guard.
  if (const std::string input = input_named_by(path); !input.empty())
    throw InputError(path, 0, "",
                     input == path ? "this command reads it: give another file"
                                   : fmt::format("is {}, which this command reads: give another file", input));
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) fail(EISDIR);
    // A device or a pipe (/dev/null, a FIFO): written in place, there is nothing to replace.
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_) fail(errno);
    direct_ = true;
    return;
  }
  tmp_ = path + ".XXXXXX";
  const int fd = mkstemp(tmp_.data());
  if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
    throw InputError(path, 0, "",
                     fmt::format("no folder {} to write it in", std::filesystem::path(path).parent_path().string()));
  if (fd < 0) fail(errno);
  file_ = fdopen(fd, "wb");
  if (!file_) {
    const int err = errno;
    ::close(fd);
    std::remove(tmp_.c_str());
    fail(err);
  }
}

OutputFile::~OutputFile() {
  if (!file_ || file_ == stdout) return;
  std::fclose(file_);  // not committed: an exception left the file unfinished
  if (!direct_) std::remove(tmp_.c_str());
}

void OutputFile::fail(int err) const {
  if (path_ == "-") stdout_failed(err);
  throw OutputError(fmt::format("cannot write {}: {}", path_, std::strerror(err)));
}

void OutputFile::commit() {
  if (file_ == stdout) {
    file_ = nullptr;
    check_stdout();
    return;
  }
  std::FILE* f = file_;
  file_ = nullptr;
  errno = 0;
  const bool ok = std::fflush(f) == 0 && !std::ferror(f);
  const int write_err = errno != 0 ? errno : EIO;
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) {
    const int err = ok ? errno : write_err;
    if (!direct_) std::remove(tmp_.c_str());
    fail(err);
  }
  if (direct_) return;
  // mkstemp makes the file 0600; an output is an ordinary file.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(tmp_.c_str(), 0666 & ~mask);
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp_.c_str());
    fail(err);
  }
}

void write_file(const std::string& path, const std::string& content) {
  OutputFile out(path);
  if (std::fwrite(content.data(), 1, content.size(), out.get()) != content.size()) out.fail(errno);
  out.commit();
}

void check_stdout() {
  errno = 0;
  if (std::fflush(stdout) != 0) stdout_failed(errno);
  if (std::ferror(stdout)) stdout_failed(errno != 0 ? errno : EIO);
}

}  // namespace stepsim::cli
