#pragma once
// The per-tensor questions of a plan, as text and JSON: a checkpoint matrix resharded to another
// tensor-parallel degree (`plan.reshard`) and one sequence's KV cache (`plan.kv_cache`).
#include <string>

#include <nlohmann/json.hpp>

#include "cli/scenario_plan.hpp"

namespace stepsim::cli {

std::string reshard_text(const ReshardQuestion& q);
nlohmann::ordered_json reshard_json(const ReshardQuestion& q);
std::string kv_cache_text(const KvCacheQuestion& q);
nlohmann::ordered_json kv_cache_json(const KvCacheQuestion& q);

}  // namespace stepsim::cli
