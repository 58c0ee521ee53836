#pragma once
// The per-tensor questions of a plan, as text and JSON: a checkpoint matrix resharded to another
// tensor-parallel degree (`plan.reshard`) and one sequence's KV cache (`plan.kv_cache`).
#include <string>

#include <nlohmann/json.hpp>

#include "cli/input/scenario_plan.hpp"
#include "cli/reports/table.hpp"

namespace stepsim::cli {

// The sizes (intro) and one row per read of a new rank.
CaptionedTable reshard_table(const ReshardQuestion& q);
nlohmann::ordered_json reshard_json(const ReshardQuestion& q);
// The formula (intro) and one row per sequence length.
CaptionedTable kv_cache_table(const KvCacheQuestion& q);
nlohmann::ordered_json kv_cache_json(const KvCacheQuestion& q);

}  // namespace stepsim::cli
