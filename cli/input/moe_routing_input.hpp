#pragma once
// The routing keys of a mixture-of-experts layer, read alike in the `moe` section and in a
// `job_step` model and layout (models/moe_routing.hpp).
#include <optional>
#include <string>

#include "cli/input/input.hpp"
#include "models/moe_routing.hpp"

namespace stepsim::cli {

// `routing: balanced`, `routing: {hot_experts: 50%, hot_load: 1.5}` or `routing: {loads: [96, 32]}`.
MoeRoutingSpec read_routing(const Reader& r);
// `capacity_factor: 1.25`, or `none` (dropless: nullopt). The key must be present.
std::optional<double> read_capacity_factor(const Reader& r);
// `key: contiguous` or `key: round_robin`; absent: contiguous.
ExpertPlacement read_placement(const Reader& r, const std::string& key);

}  // namespace stepsim::cli
