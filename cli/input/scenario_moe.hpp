#pragma once
// The `moe:` scenario section: one MoE layer (schedules/moe_layer.hpp), plus named variants (the
// same keys, applied over it) that `stepsim compare` runs side by side.
#include <string>
#include <utility>
#include <vector>

#include "cli/input/input.hpp"
#include "schedules/lowering/moe/moe_layer.hpp"

namespace stepsim::cli {

struct MoeScenario {
  MoeLayerSpec spec;
  std::vector<std::pair<std::string, MoeLayerSpec>> variants;  // in file order
};

MoeScenario read_moe(const Reader& r);

}  // namespace stepsim::cli
