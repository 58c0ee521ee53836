#pragma once
// Saved activations: which arrays a layer keeps from its forward pass for its backward pass, and
// how a recompute policy trades them for recomputation (section 10.2.2, figures 10-12/10-13;
// Korthikanti et al. 2022 "Reducing Activation Recomputation in Large Transformer Models", sec. 4).
//
// A layer is a list of saved tensors, each `width` elements per token. The first tensor is the
// layer's input, the one full recomputation keeps (activation checkpointing per layer).
#include <cstdint>
#include <string>
#include <vector>

#include "models/transformer.hpp"
#include "sim/time.hpp"

namespace stepsim {

struct SavedTensor {
  std::string name;
  std::int64_t width = 0;    // elements per token
  bool gemm_input = false;   // an input of a matrix multiply (dW = X^T dY needs it)
  bool rebuildable = false;  // cheap to rebuild from other saved tensors (selective recompute)
};

struct LayerActivations {
  std::vector<SavedTensor> tensors;
};

// A pre-norm decoder layer with grouped-query attention (flash attention: no score matrix kept)
// and a SwiGLU MLP, as in Qwen3. Selective recompute rebuilds the two normalised outputs and the
// gated product h = silu(gate) * up (figures 10-12/10-13).
LayerActivations transformer_layer_activations(const TransformerConfig& c);

// `arrays` arrays of `width` per token, none rebuildable: the resource-bill chapter's assumption
// (example 27.1: ten arrays of width 64 per layer).
LayerActivations uniform_layer_activations(int arrays, std::int64_t width);

enum class RecomputeKind { None, Selective, Full, Keep };

struct RecomputePolicy {
  RecomputeKind kind = RecomputeKind::None;
  int keep = 0;               // RecomputeKind::Keep: the first `keep` tensors are kept, the rest rebuilt
  std::string label() const;  // "none", "selective", "full", "keep 4"
};

// Per layer, for `tokens` tokens at `element_bytes` each.
struct LayerActivationBytes {
  Bytes saved = 0;    // kept from forward until the layer's backward
  Bytes rebuilt = 0;  // rebuilt during the layer's backward (a transient)
  Bytes full() const { return saved + rebuilt; }
};

LayerActivationBytes layer_activation_bytes(const LayerActivations& layer, const RecomputePolicy& policy,
                                            std::int64_t tokens, int element_bytes);

// The GEMM inputs of a layer and the part of them selective recompute rebuilds (figure 10-13:
// 15 MiB and 10 MiB for Qwen3-8B at 128 tokens, FP32).
Bytes gemm_input_bytes(const LayerActivations& layer, std::int64_t tokens, int element_bytes);
Bytes rebuildable_gemm_input_bytes(const LayerActivations& layer, std::int64_t tokens, int element_bytes);

// The multiplications that rebuild the gated product h = a (.) u: tokens x intermediate.
std::int64_t gated_product_multiplications(const TransformerConfig& c, std::int64_t tokens);

}  // namespace stepsim
