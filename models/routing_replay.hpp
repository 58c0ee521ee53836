#pragma once
// Routing replay (section 10.5): the generator records which experts every token picked in every
// MoE layer, and the learner routes by those ids, so the discrete path matches what generated the
// trajectory. The record is one expert id per token, layer and pick:
//   tokens x MoE layers x top_k x bytes per id.
// Qwen3-30B-A3B (48 layers, top-8), 8,192 tokens: 6 MiB as uint16 ids, 12 MiB as int32.
#include <cstdint>

#include "sim/time.hpp"

namespace stepsim {

Bytes routing_replay_bytes(std::int64_t tokens, int moe_layers, int top_k, int id_bytes);

}  // namespace stepsim
