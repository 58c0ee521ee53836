#include "cli/input/input_files.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "cli/input/budget.hpp"
#include "cli/input/input.hpp"

namespace stepsim::cli {

namespace {
// Read by any thread (a suite reads its variants' files on several).
std::mutex read_lock;
std::vector<std::string>& files_read() {
  static std::vector<std::string> files;
  return files;
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
  std::lock_guard lock(read_lock);
  auto& files = files_read();
  if (std::find(files.begin(), files.end(), path) == files.end()) files.push_back(path);
  return text;
}

std::string input_named_by(const std::string& path) {
  if (path.empty() || path == "-") return "";
  std::lock_guard lock(read_lock);
  for (const auto& file : files_read()) {
    std::error_code ec;
    if (std::filesystem::equivalent(path, file, ec)) return file;
  }
  return "";
}

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
}

}  // namespace stepsim::cli
