#include "models/activations.hpp"

#include <fmt/format.h>

namespace stepsim {

LayerActivations transformer_layer_activations(const TransformerConfig& c) {
  const std::int64_t h = c.hidden;
  const std::int64_t q = static_cast<std::int64_t>(c.heads) * c.head_dim;
  const std::int64_t kv = static_cast<std::int64_t>(c.kv_heads) * c.head_dim;
  const std::int64_t i = c.intermediate;
  return {{
      {"layer input (residual)", h, false, false},
      {"attention norm output", h, true, true},  // input of Wq, Wk, Wv
      {"query", q, true, false},                 // inputs of QK^T
      {"key", kv, true, false},
      {"value", kv, true, false},            // input of AV
      {"attention output", q, true, false},  // input of Wo
      {"residual after attention", h, false, false},
      {"MLP norm output", h, true, true},  // input of gate and up projections
      {"gate projection output", i, false, false},
      {"up projection output", i, false, false},
      {"gated product", i, true, true},  // input of the down projection
  }};
}

LayerActivations uniform_layer_activations(int arrays, std::int64_t width) {
  LayerActivations l;
  for (int a = 0; a < arrays; ++a) l.tensors.push_back({fmt::format("array {}", a + 1), width, false, false});
  return l;
}

std::string RecomputePolicy::label() const {
  switch (kind) {
    case RecomputeKind::None: return "none";
    case RecomputeKind::Selective: return "selective";
    case RecomputeKind::Full: return "full";
    case RecomputeKind::Keep: return fmt::format("keep {}", keep);
  }
  return "?";
}

LayerActivationBytes layer_activation_bytes(const LayerActivations& layer, const RecomputePolicy& policy,
                                            std::int64_t tokens, int element_bytes) {
  LayerActivationBytes out;
  for (std::size_t t = 0; t < layer.tensors.size(); ++t) {
    const SavedTensor& s = layer.tensors[t];
    bool kept = true;
    switch (policy.kind) {
      case RecomputeKind::None: kept = true; break;
      case RecomputeKind::Selective: kept = !s.rebuildable; break;
      case RecomputeKind::Full: kept = t == 0; break;
      case RecomputeKind::Keep: kept = static_cast<int>(t) < policy.keep; break;
    }
    const Bytes b = tokens * s.width * element_bytes;
    (kept ? out.saved : out.rebuilt) += b;
  }
  return out;
}

Bytes gemm_input_bytes(const LayerActivations& layer, std::int64_t tokens, int element_bytes) {
  Bytes sum = 0;
  for (const auto& s : layer.tensors)
    if (s.gemm_input) sum += tokens * s.width * element_bytes;
  return sum;
}

Bytes rebuildable_gemm_input_bytes(const LayerActivations& layer, std::int64_t tokens, int element_bytes) {
  Bytes sum = 0;
  for (const auto& s : layer.tensors)
    if (s.gemm_input && s.rebuildable) sum += tokens * s.width * element_bytes;
  return sum;
}

std::int64_t gated_product_multiplications(const TransformerConfig& c, std::int64_t tokens) {
  return tokens * c.intermediate;
}

}  // namespace stepsim
