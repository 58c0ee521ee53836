#include "cli/reports/output.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
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

// The temporary files being written, so that Ctrl-C or a kill (SIGINT, SIGTERM) removes them
// instead of leaving a half-written FILE.XXXXXX beside the target: slots a signal handler can read
// (unlink is async-signal-safe; a slot is claimed and freed atomically).
constexpr int kTempSlots = 16;
constexpr std::size_t kTempPath = 4096;
std::atomic<int> temp_state[kTempSlots];  // 0 free, 1 being filled, 2 a path to remove
char temp_path[kTempSlots][kTempPath];

extern "C" void remove_temp_files(int sig) {
  for (int i = 0; i < kTempSlots; ++i)
    if (temp_state[i].load() == 2) ::unlink(temp_path[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// The slot `path` is kept in, or -1 (too long, or every slot taken: then it is not removed on a
// signal, as before).
int remember_temp(const std::string& path) {
  static const bool installed = [] {
    std::signal(SIGINT, remove_temp_files);
    std::signal(SIGTERM, remove_temp_files);
    return true;
  }();
  (void)installed;
  if (path.size() >= kTempPath) return -1;
  for (int i = 0; i < kTempSlots; ++i) {
    int expected = 0;
    if (!temp_state[i].compare_exchange_strong(expected, 1)) continue;
    std::memcpy(temp_path[i], path.c_str(), path.size() + 1);
    temp_state[i].store(2);
    return i;
  }
  return -1;
}

void forget_temp(int slot) {
  if (slot >= 0) temp_state[slot].store(0);
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
    // A device or a pipe (/dev/null, a FIFO): written in place, there is nothing to replace. A
    // FIFO is opened without waiting: with no process reading it, opening it would wait forever.
    if (S_ISFIFO(st.st_mode)) {
      const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
      if (fd < 0 && errno == ENXIO)
        throw InputError(path, 0, "", "a FIFO that no process reads: start its reader first");
      if (fd < 0) fail(errno);
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      file_ = fdopen(fd, "wb");
    } else {
      file_ = std::fopen(path.c_str(), "wb");
    }
    if (!file_) fail(errno);
    direct_ = true;
    return;
  }
  // A link is written through, onto what it names (its temporary file beside that): renaming onto
  // the link would replace it, /dev/stderr or a results link alike, with a plain file.
  // (A link to a file not there yet is followed too; a chain of them at most 40 deep, as the kernel.)
  target_ = output_target(path);
  tmp_ = target_ + ".XXXXXX";
  const int fd = mkstemp(tmp_.data());
  if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
    throw InputError(path, 0, "",
                     fmt::format("no folder {} to write it in", std::filesystem::path(target_).parent_path().string()));
  if (fd < 0) fail(errno);
  temp_slot_ = remember_temp(tmp_);
  file_ = fdopen(fd, "wb");
  if (!file_) {
    const int err = errno;
    ::close(fd);
    std::remove(tmp_.c_str());
    forget_temp(temp_slot_);
    fail(err);
  }
}

OutputFile::~OutputFile() {
  if (!file_ || file_ == stdout) return;
  std::fclose(file_);  // not committed: an exception left the file unfinished
  if (!direct_) std::remove(tmp_.c_str());
  forget_temp(temp_slot_);
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
    forget_temp(temp_slot_);
    fail(err);
  }
  if (direct_) return;
  // mkstemp makes the file 0600; an output is an ordinary file.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(tmp_.c_str(), 0666 & ~mask);
  if (std::rename(tmp_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp_.c_str());
    forget_temp(temp_slot_);
    fail(err);
  }
  forget_temp(temp_slot_);
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
