#include "models/routing_replay.hpp"

namespace stepsim {

Bytes routing_replay_bytes(std::int64_t tokens, int moe_layers, int top_k, int id_bytes) {
  return tokens * moe_layers * top_k * id_bytes;
}

}  // namespace stepsim
