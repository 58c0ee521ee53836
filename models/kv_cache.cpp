#include "models/kv_cache.hpp"

namespace stepsim {

Bytes kv_cache_bytes(const TransformerConfig& model, std::int64_t tokens, int bytes_per_element) {
  return 2LL * model.layers * model.kv_heads * model.head_dim * tokens * bytes_per_element;
}

}  // namespace stepsim
