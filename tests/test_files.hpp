#pragma once
// The files the C++ tests read: shipped scenarios by name, and whole files the CLI wrote.
#include <fstream>
#include <sstream>
#include <string>

namespace stepsim::test {

// scenario_path("book-pipeline.yaml"): the shipped scenario in the checkout's scenarios/.
inline std::string scenario_path(const std::string& name) {
  return std::string(STEPSIM_SOURCE_DIR) + "/scenarios/" + name;
}

// The whole file, byte for byte ("" if it cannot be opened).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace stepsim::test
