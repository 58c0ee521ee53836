#pragma once
// The `moe:` scenario section: one MoE layer (schedules/moe_layer.hpp), plus named variants (the
// same keys, applied over it) that `stepsim compare` runs side by side.
#include <string>
#include <utility>
#include <vector>

#include "cli/input/input.hpp"
#include "schedules/lowering/moe/moe_layer.hpp"

namespace stepsim::cli {

using MoeScenario = SpecWithVariants<MoeLayerSpec>;

MoeScenario read_moe(const Reader& r);

}  // namespace stepsim::cli
