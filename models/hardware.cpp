#include "models/hardware.hpp"

namespace stepsim {

namespace {
constexpr Bytes GiB = 1024LL * 1024 * 1024;
const std::vector<Accelerator>& builtins() {
  static const std::vector<Accelerator> cards = {
      {"rtx4090", 165.2e12, 24'000'000'000, 22 * GiB, 32'000'000'000, 0, false},
      {"a100", 312e12, 80'000'000'000, 76 * GiB, 32'000'000'000, 300'000'000'000, true},
      {"h100", 989e12, 80'000'000'000, 74 * GiB + GiB / 2, 64'000'000'000, 450'000'000'000, true},
      {"b200", 2250e12, 192'000'000'000, 170 * GiB, 64'000'000'000, 900'000'000'000, true},
  };
  return cards;
}
}  // namespace

const Accelerator* find_accelerator(std::string_view name) {
  // A job step's preset names the same cards (models/accelerators.hpp): one name works in both.
  if (name == "a100-sxm-80gb") name = "a100";
  if (name == "h100-sxm") name = "h100";
  for (const auto& a : builtins())
    if (a.name == name) return &a;
  return nullptr;
}

std::vector<std::string> accelerator_names() {
  std::vector<std::string> out;
  for (const auto& a : builtins()) out.push_back(a.name);
  return out;
}

}  // namespace stepsim
