#include "models/transformer.hpp"

#include <algorithm>

namespace stepsim {

ParameterCount count_parameters(const TransformerConfig& c) {
  ParameterCount p;
  const std::int64_t q = static_cast<std::int64_t>(c.heads) * c.head_dim;
  const std::int64_t kv = static_cast<std::int64_t>(c.kv_heads) * c.head_dim;
  const std::int64_t attention = c.hidden * q + 2 * c.hidden * kv + q * c.hidden;  // Wq, Wk, Wv, Wo (no biases)
  const std::int64_t mlp = 3 * c.hidden * c.intermediate;                          // gate, up, down
  const std::int64_t norms = 2 * c.hidden + (c.qk_norm ? 2 * c.head_dim : 0);      // pre-attn, pre-mlp, q/k norms
  p.per_layer = attention + mlp + norms;
  p.embedding = c.vocab * c.hidden;
  p.lm_head = c.tied_embeddings ? 0 : c.vocab * c.hidden;
  p.final_norm = c.hidden;
  p.total = p.embedding + p.lm_head + p.final_norm + p.per_layer * c.layers;
  return p;
}

double training_flops_per_token(const TransformerConfig& c, std::int64_t seq_len) {
  const ParameterCount p = count_parameters(c);
  const double d_attn = static_cast<double>(c.heads) * c.head_dim;
  const double mean_context = (static_cast<double>(seq_len) + 1.0) / 2.0;
  return 6.0 * static_cast<double>(p.matmul()) + 3.0 * c.layers * 4.0 * d_attn * mean_context;
}

ForwardFlopsPerToken forward_flops_per_token(const TransformerConfig& c, std::int64_t seq_len) {
  const ParameterCount p = count_parameters(c);
  const double d_attn = static_cast<double>(c.heads) * c.head_dim;
  const double mean_context = (static_cast<double>(seq_len) + 1.0) / 2.0;
  ForwardFlopsPerToken f;
  f.layer_matmul = 2.0 * static_cast<double>(p.per_layer);
  f.layer_attention = 4.0 * d_attn * mean_context;
  f.head = 2.0 * static_cast<double>(p.lm_head + p.final_norm);
  return f;
}

std::int64_t causal_attention_pairs(std::int64_t s, std::int64_t window) {
  if (window <= 0 || s <= window) return s * (s + 1) / 2;
  return window * (window + 1) / 2 + (s - window) * window;  // the first w queries fill up, the rest see w each
}

std::int64_t causal_pairs_of(std::int64_t first, std::int64_t count, std::int64_t window) {
  return causal_attention_pairs(first + count, window) - causal_attention_pairs(first, window);
}

std::vector<CpRankShare> cp_rank_shares(std::int64_t s, int cp, bool balanced, std::int64_t window) {
  std::vector<CpRankShare> out(static_cast<std::size_t>(std::max(1, cp)));
  const int chunks = balanced ? 2 * cp : cp;
  for (int c = 0; c < chunks; ++c) {
    // Chunk c: tokens [c s / chunks, (c + 1) s / chunks).
    const std::int64_t first = s * c / chunks, count = s * (c + 1) / chunks - first;
    const int rank = c < cp ? c : 2 * cp - 1 - c;
    CpRankShare& r = out[static_cast<std::size_t>(rank)];
    r.chunks.push_back(c);
    r.tokens += count;
    r.pairs += causal_pairs_of(first, count, window);
  }
  if (window > 0)
    for (int c = 0; c < chunks; ++c) {
      const int rank = c < cp ? c : 2 * cp - 1 - c;
      // Its first query sees the window - 1 keys before it (TE's left window, window_size[0]).
      const std::int64_t first = s * c / chunks, from = first - std::min(window - 1, first);
      for (int src = 0; src < c; ++src) {  // the earlier chunks the halo [from, first) overlaps
        const int owner = src < cp ? src : 2 * cp - 1 - src;
        const std::int64_t lo = std::max(from, s * src / chunks), hi = s * (src + 1) / chunks;
        if (owner != rank && hi > lo) out[static_cast<std::size_t>(rank)].halo += hi - lo;
      }
    }
  return out;
}

namespace {
const std::vector<TransformerConfig>& builtins() {
  static const std::vector<TransformerConfig> configs = {
      // Qwen3-8B (config.json of Qwen/Qwen3-8B): 36 layers, hidden 4096, MLP 12288, 32 query heads,
      // 8 KV heads of 128, vocabulary 151,936, untied embeddings, q/k RMSNorm.
      {"qwen3-8b", 36, 4096, 12288, 32, 8, 128, 151936, false, true},
      // A small model for examples: 4 layers of width 64.
      {"tiny", 4, 64, 256, 4, 4, 16, 1000, true, false},
  };
  return configs;
}
}  // namespace

const TransformerConfig* find_transformer(std::string_view name) {
  for (const auto& c : builtins())
    if (c.name == name) return &c;
  return nullptr;
}

std::vector<std::string> transformer_names() {
  std::vector<std::string> out;
  for (const auto& c : builtins()) out.push_back(c.name);
  return out;
}

}  // namespace stepsim
