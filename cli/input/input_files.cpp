#include "cli/input/input_files.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cli/input/budget.hpp"
#include "cli/input/input.hpp"
#include "cli/input/utf8.hpp"

namespace stepsim::cli {

namespace {
// Read by any thread (a suite reads its variants' files on several). Each file read is kept by
// its identity (device, inode: what std::filesystem::equivalent compares), so that asking whether
// a path names one of them takes one stat, not one per file read (10,000 one-row tables took
// minutes, every file compared with every other).
std::mutex read_lock;
using FileId = std::pair<std::uint64_t, std::uint64_t>;
std::map<FileId, std::string>& files_read() {
  static std::map<FileId, std::string> files;
  return files;
}
std::optional<FileId> file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}
}  // namespace

std::string read_input_file(const std::string& path) {
  require_input_file(path);
  std::ifstream in(path, std::ios::binary);
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (static_cast<std::int64_t>(text.size()) > kMaxInputBytes)
      throw InputError(path, 0, "", fmt::format("larger than the {} MiB an input file may have", kMaxInputBytes >> 20));
  }
  // Lines ended by CR alone (classic Mac OS) read as one line: a YAML file as one comment, a CSV as
  // one row of cells with CRs in them.
  if (text.find('\n') == std::string::npos && std::count(text.begin(), text.end(), '\r') > 1)
    throw InputError(path, 1, "", "its lines end in CR alone (classic Mac OS): save it with LF (or CRLF) line ends");
  // Names and labels go into JSON, which is UTF-8: a Latin-1 byte would end a report half-written.
  if (const std::size_t at = invalid_utf8_at(text); at != std::string_view::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    throw InputError(
        path, static_cast<int>(line), "",
        fmt::format("not UTF-8 (byte 0x{:02X}): save the file as UTF-8", static_cast<unsigned char>(text[at])));
  }
  if (const auto id = file_id(path)) {
    std::lock_guard lock(read_lock);
    files_read().emplace(*id, path);  // the first name it was read by
  }
  return text;
}

std::string input_named_by(const std::string& path) {
  if (path.empty() || path == "-") return "";
  const auto id = file_id(path);
  if (!id) return "";
  std::lock_guard lock(read_lock);
  const auto it = files_read().find(*id);
  return it == files_read().end() ? "" : it->second;
}

std::string output_target(const std::string& path) {
  std::filesystem::path target = path;
  std::error_code ec;
  for (int depth = 0; std::filesystem::is_symlink(target, ec); ++depth) {
    if (depth == 40) throw InputError(path, 0, "", "a link that loops (or a chain of more than 40 links)");
    const std::filesystem::path to = std::filesystem::read_symlink(target, ec);
    if (ec) break;
    target = to.is_absolute() ? to : target.parent_path() / to;
  }
  return target.string();
}

namespace {
// The outputs checked so far, with the option that names each: two options naming one file would
// leave only the second's.
std::vector<std::pair<std::string, std::string>>& outputs_named() {
  static std::vector<std::pair<std::string, std::string>> outputs;
  return outputs;
}

// The same file: one that exists by its identity (a hard link, another spelling), else the file
// each names through its links, by its absolute, normalised path (a link to a file not made yet).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (std::filesystem::equivalent(a, b, ec)) return true;
  return std::filesystem::absolute(output_target(a), ec).lexically_normal() ==
         std::filesystem::absolute(output_target(b), ec).lexically_normal();
}
}  // namespace

void check_output_path(const std::string& option, const std::string& path) {
  if (path.empty() || path == "-") return;
  if (const std::string input = input_named_by(path); !input.empty())
    throw InputError(option, 0, "",
                     input == path ? fmt::format("{}: this command reads it: give another file", path)
                                   : fmt::format("{} is {}, which this command reads: give another file", path, input));
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
    throw InputError(option, 0, "", fmt::format("{}: no folder {} to write it in", path, folder.string()));
  (void)output_target(path);  // a link that loops is refused here, before the work
  if (std::filesystem::is_directory(path, ec))
    throw InputError(option, 0, "", fmt::format("{}: is a folder: give a file's name (in it, say)", path));
  // /dev/stdout and its spellings: the file would go into the report on stdout (unless both are the
  // null device).
  struct stat out {
  }, at{};
  if (::fstat(STDOUT_FILENO, &out) == 0 && ::stat(path.c_str(), &at) == 0 && out.st_dev == at.st_dev &&
      out.st_ino == at.st_ino && !(S_ISCHR(at.st_mode) && at.st_rdev == makedev(1, 3)))
    throw InputError(option, 0, "", fmt::format("{}: is stdout, where the report goes: give a file", path));
  std::lock_guard lock(read_lock);
  for (const auto& [earlier, what] : outputs_named())
    if (what != option && same_file(earlier, path))
      throw InputError(option, 0, "", fmt::format("{} is also {}'s file: give each output its own", path, what));
  outputs_named().emplace_back(path, option);
}

}  // namespace stepsim::cli
