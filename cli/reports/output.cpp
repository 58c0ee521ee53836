#include "cli/reports/output.hpp"

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace stepsim::cli {

void write_file(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    return;
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + path);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) throw std::runtime_error("error while writing " + path);
}

}  // namespace stepsim::cli
