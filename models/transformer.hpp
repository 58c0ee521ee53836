#pragma once
// Decoder-only transformer shapes: parameter counts and training FLOPs from the architecture.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace stepsim {

struct TransformerConfig {
  std::string name;
  int layers = 0;
  std::int64_t hidden = 0;
  std::int64_t intermediate = 0;  // SwiGLU MLP width (gate, up and down projections)
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  std::int64_t vocab = 0;
  bool tied_embeddings = false;
  bool qk_norm = true;  // per-head RMSNorm on queries and keys (Qwen3)
  bool operator==(const TransformerConfig&) const = default;
};

struct ParameterCount {
  std::int64_t embedding = 0;  // input token embedding
  std::int64_t lm_head = 0;    // output projection (0 when tied)
  std::int64_t per_layer = 0;  // one decoder layer
  std::int64_t final_norm = 0;
  std::int64_t total = 0;
  // Parameters that take part in matrix multiplies (everything but the embedding lookup).
  std::int64_t matmul() const { return total - embedding; }
};

ParameterCount count_parameters(const TransformerConfig& c);

// Training FLOPs per token for a sequence of `seq_len` tokens (forward + backward = 3x forward):
//   6 x (matmul parameters)                            -- Kaplan et al. 2020, sec. 2.1
// + 3 x layers x 4 x d_attn x (seq_len + 1) / 2        -- QK^T and AV over the causal context,
//                                                          whose mean length is (s + 1) / 2
// Qwen3-8B at 8,192 tokens: ~52.7 GFLOPs per token (reference section 4).
double training_flops_per_token(const TransformerConfig& c, std::int64_t seq_len);

// Forward FLOPs per token of the pieces a layer-by-layer schedule runs, for sequences of
// `seq_len` tokens, on the same accounting as training_flops_per_token: training is 3x forward
// (backward = input gradient + weight gradient, each as large as the forward's multiplies), and
//   3 x (embedding + layers x (layer_matmul + layer_attention) + head) == training_flops_per_token.
struct ForwardFlopsPerToken {
  double embedding = 0;        // a table lookup: no multiplies
  double layer_matmul = 0;     // 2 x one layer's parameters (Kaplan et al. 2020, sec. 2.1)
  double layer_attention = 0;  // 4 x d_attn x (s + 1) / 2: QK^T and AV over the causal context
  double head = 0;             // 2 x (LM head + final norm) parameters
};
ForwardFlopsPerToken forward_flops_per_token(const TransformerConfig& c, std::int64_t seq_len);

// Causal attention pairs in a sequence of s tokens: s (s + 1) / 2 (figure 10-28/10-29). With a
// sliding window of w tokens (w > 0: each query sees itself and the w - 1 keys before it, as
// Mistral's and Gemma's sliding_window), w (w + 1) / 2 + (s - w) w once s passes w.
std::int64_t causal_attention_pairs(std::int64_t s, std::int64_t window = 0);
// The causal pairs of the `count` query tokens from position `first` on, each against every key
// at or before it (within the window, if any): sum of min(j + 1, w) for j in [first, first + count).
std::int64_t causal_pairs_of(std::int64_t first, std::int64_t count, std::int64_t window = 0);

// A causal sequence of s tokens over cp context-parallel ranks (figure 10-28/10-29). Contiguous:
// rank i takes tokens [i s/cp, (i+1) s/cp), so the last rank has the most pairs. Balanced: the
// sequence is cut into 2 cp chunks and rank i takes chunk i and chunk 2cp-1-i, so every rank has
// s (s + 1) / (2 cp) pairs when 2 cp divides s.
struct CpRankShare {
  std::vector<int> chunks;  // chunk indices (contiguous: the rank's one chunk of cp)
  std::int64_t tokens = 0;
  std::int64_t pairs = 0;
  // With a window: the keys before its chunks within the window that other ranks hold (the halo
  // its queries need; 0 without a window).
  std::int64_t halo = 0;
};
// A window (> 0) counts each rank's pairs and halo within it.
std::vector<CpRankShare> cp_rank_shares(std::int64_t s, int cp, bool balanced, std::int64_t window = 0);

// Built-in configurations: "qwen3-8b" (N = 8,190,735,360), "tiny-1m" (the ~1M-parameter model of
// the resource-bill chapter is given by its parameter count, not a shape; this is a small shape
// for tests and examples).
const TransformerConfig* find_transformer(std::string_view name);
std::vector<std::string> transformer_names();

}  // namespace stepsim
