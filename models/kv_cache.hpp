#pragma once
// The key/value cache one sequence keeps during generation (section 10.5: recovering an
// interrupted trajectory means fetching its cache or rebuilding it with a prefill).
//
// Every layer stores a key and a value vector per KV head per token (grouped-query attention
// shares them among query heads; Ainslie et al. 2023 "GQA"):
//   2 x layers x kv_heads x head_dim x tokens x bytes per element.
// Qwen3-8B (36 layers, 8 KV heads of 128), 8,192 tokens in BF16: 1,207,959,552 B = 1.125 GiB.
#include <cstdint>

#include "models/transformer.hpp"

namespace stepsim {

Bytes kv_cache_bytes(const TransformerConfig& model, std::int64_t tokens, int bytes_per_element = 2);

}  // namespace stepsim
