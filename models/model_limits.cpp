#include "models/model_limits.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/layer_costs.hpp"

namespace stepsim {

namespace {

// `key` at least 1 and at most `max`: the problem, or nullopt.
std::optional<InputProblem> in_range(const char* key, std::int64_t value, std::int64_t max) {
  if (value < 1) return InputProblem{key, fmt::format("must be at least 1 (got {})", value)};
  if (value > max) return InputProblem{key, fmt::format("{} is past the largest model stepsim takes ({})", value, max)};
  return std::nullopt;
}

std::optional<InputProblem> too_many_parameters(std::int64_t parameters) {
  if (parameters <= kMaxParameters) return std::nullopt;
  return InputProblem{"layers", fmt::format("the model has {:g} parameters, too many: at most {:g} (1,000x the "
                                            "largest models trained)",
                                            static_cast<double>(parameters), static_cast<double>(kMaxParameters))};
}

}  // namespace

std::optional<InputProblem> check_transformer(const TransformerConfig& c) {
  for (const auto& p : {in_range("layers", c.layers, kMaxLayers), in_range("hidden", c.hidden, kMaxHidden),
                        in_range("ffn", c.intermediate, kMaxFfn), in_range("heads", c.heads, kMaxHeads),
                        in_range("kv_heads", c.kv_heads, kMaxHeads), in_range("vocab", c.vocab, kMaxVocab)})
    if (p) return p;
  if (c.head_dim < 1)
    return InputProblem{"head_dim",
                        fmt::format("hidden {} is smaller than the {} heads: give head_dim", c.hidden, c.heads)};
  if (auto p = in_range("head_dim", c.head_dim, kMaxHeads)) return p;
  if (static_cast<std::int64_t>(c.heads) * c.head_dim > kMaxFfn)
    return InputProblem{"head_dim", fmt::format("heads x head_dim = {} x {} is past the largest model stepsim takes "
                                                "({})",
                                                c.heads, c.head_dim, kMaxFfn)};
  if (c.heads % c.kv_heads != 0)
    return InputProblem{"kv_heads", fmt::format("{} heads do not split into {} KV groups", c.heads, c.kv_heads)};
  // Within the limits above a layer holds under 2^46 parameters, the model under 2^62.
  return too_many_parameters(count_parameters(c).total);
}

std::optional<InputProblem> check_latent_attention(const JobModel& m) {
  if (!m.latent_attention()) return std::nullopt;
  const auto& a = m.mla;
  if (a.q_lora_rank != 0)
    if (auto p = in_range("q_lora_rank", a.q_lora_rank, kMaxFfn)) return p;
  for (const auto& p :
       {in_range("kv_lora_rank", a.kv_lora_rank, kMaxFfn), in_range("qk_nope_head_dim", a.qk_nope_head_dim, kMaxHeads),
        in_range("qk_rope_head_dim", a.qk_rope_head_dim, kMaxHeads), in_range("v_head_dim", a.v_head_dim, kMaxHeads)})
    if (p) return p;
  // Within these a head is under 2^17 wide, and heads x its width stays under kMaxFfn x 2.
  if (static_cast<std::int64_t>(m.shape.heads) * (a.qk_nope_head_dim + a.qk_rope_head_dim) > kMaxFfn)
    return InputProblem{"qk_nope_head_dim",
                        fmt::format("heads x (qk_nope_head_dim + qk_rope_head_dim) = {} x {} is past the largest "
                                    "model stepsim takes ({})",
                                    m.shape.heads, a.qk_nope_head_dim + a.qk_rope_head_dim, kMaxFfn)};
  if (static_cast<std::int64_t>(m.shape.heads) * a.v_head_dim > kMaxFfn)
    return InputProblem{"v_head_dim", fmt::format("heads x v_head_dim = {} x {} is past the largest model stepsim "
                                                  "takes ({})",
                                                  m.shape.heads, a.v_head_dim, kMaxFfn)};
  return std::nullopt;
}

std::optional<InputProblem> check_linear_attention(const JobModel& m) {
  const auto& a = m.linear;
  if (a.value_heads == 0) return std::nullopt;
  for (const auto& p :
       {in_range("num_key_heads", a.key_heads, kMaxHeads), in_range("num_value_heads", a.value_heads, kMaxHeads),
        in_range("key_head_dim", a.key_head_dim, kMaxHeads), in_range("value_head_dim", a.value_head_dim, kMaxHeads)})
    if (p) return p;
  if (a.value_heads % a.key_heads != 0)
    return InputProblem{"num_value_heads", fmt::format("{} value heads are not a multiple of the {} key heads",
                                                       a.value_heads, a.key_heads)};
  if (static_cast<std::int64_t>(a.value_heads) * std::max(a.key_head_dim, a.value_head_dim) > kMaxFfn)
    return InputProblem{"num_value_heads",
                        fmt::format("num_value_heads x head width = {} x {} is past the largest model stepsim takes "
                                    "({})",
                                    a.value_heads, std::max(a.key_head_dim, a.value_head_dim), kMaxFfn)};
  if (a.conv_kernel < 1 || a.conv_kernel > 64)
    return InputProblem{"conv_kernel_dim", fmt::format("{} is not between 1 and 64 taps", a.conv_kernel)};
  if (a.full_attention_interval < 0 || a.full_attention_interval > m.shape.layers)
    return InputProblem{"full_attention_interval",
                        fmt::format("{} is not between 0 (every layer linear) and the {} layers",
                                    a.full_attention_interval, m.shape.layers)};
  if (m.latent_attention())
    return InputProblem{"num_value_heads", "linear_attention beside mla is not modelled: give one of them"};
  if (m.sliding_window != 0)
    return InputProblem{"num_value_heads", "linear_attention beside sliding_window is not modelled: give one of them"};
  return std::nullopt;
}

std::optional<InputProblem> check_mamba(const JobModel& m) {
  const auto& a = m.mamba;
  if (a.heads == 0) return std::nullopt;
  for (const auto& p : {in_range("num_heads", a.heads, kMaxHeads), in_range("head_dim", a.head_dim, kMaxHeads),
                        in_range("state_size", a.state, kMaxHeads), in_range("n_groups", a.groups, kMaxHeads)})
    if (p) return p;
  if (a.heads % a.groups != 0)
    return InputProblem{"n_groups", fmt::format("{} groups do not divide the {} heads (Megatron-Core's MambaMixer "
                                                "shares each group's B and C among its heads)",
                                                a.groups, a.heads)};
  if (static_cast<std::int64_t>(a.heads) * a.head_dim > kMaxFfn ||
      static_cast<std::int64_t>(a.groups) * a.state > kMaxFfn)
    return InputProblem{"num_heads", fmt::format("num_heads x head_dim = {} x {} or n_groups x state_size = {} x {} is "
                                                 "past the largest model stepsim takes ({})",
                                                 a.heads, a.head_dim, a.groups, a.state, kMaxFfn)};
  if (a.conv_kernel < 1 || a.conv_kernel > 64)
    return InputProblem{"conv_kernel", fmt::format("{} is not between 1 and 64 taps", a.conv_kernel)};
  return std::nullopt;
}

std::optional<InputProblem> check_hybrid_pattern(const JobModel& m) {
  const std::string& p = m.hybrid_pattern;
  const auto refuse = [](std::string what) { return InputProblem{"hybrid_override_pattern", std::move(what)}; };
  if (p.empty()) return std::nullopt;
  if (const auto bad = p.find_first_not_of("M*-E"); bad != std::string::npos)
    return refuse(
        fmt::format("'{}' at position {} is none of M (Mamba-2), * (attention), - (MLP), E (MoE)", p[bad], bad + 1));
  if (p.size() != static_cast<std::size_t>(m.shape.layers))
    return refuse(fmt::format("{} symbols for the {} layers (one a layer, as Megatron-Core counts them)", p.size(),
                              m.shape.layers));
  if ((p.find('M') != std::string::npos) != (m.mamba.heads > 0))
    return refuse(m.mamba.heads > 0 ? "has no M layer for the model's mamba" : "has M layers: needs mamba");
  if ((p.find('E') != std::string::npos) != (m.experts > 0))
    return refuse(m.experts > 0 ? "has no E layer for the model's experts" : "has E layers: needs experts");
  if (m.latent_attention() || m.linear.value_heads > 0 || m.sliding_window != 0 || m.dense_layers > 0 ||
      m.mtp_layers > 0)
    return refuse("beside mla, linear_attention, sliding_window, dense_layers or mtp_layers is not modelled");
  return std::nullopt;
}

std::optional<InputProblem> check_job_model(const JobModel& m) {
  if (auto p = check_transformer(m.shape)) return p;
  if (auto p = check_latent_attention(m)) return p;
  if (auto p = check_linear_attention(m)) return p;
  if (auto p = check_mamba(m)) return p;
  if (auto p = check_hybrid_pattern(m)) return p;
  if (m.mamba.heads > 0 && (m.latent_attention() || m.linear.value_heads > 0 || m.sliding_window != 0))
    return InputProblem{"mamba", "mamba beside mla, linear_attention or sliding_window is not modelled"};
  // DeepSeek-V3 trains with one module; 64 keeps their parameters within int64 whatever the layer.
  if (m.mtp_layers < 0 || m.mtp_layers > 64)
    return InputProblem{"mtp_layers", fmt::format("{} is not between 0 and 64", m.mtp_layers)};
  if (auto p = in_range("seq", m.seq, kMaxSeq)) return p;
  if (m.sliding_window != 0)
    if (auto p = in_range("sliding_window", m.sliding_window, kMaxSeq)) return p;
  if (m.sliding_window_pattern < 0 || m.sliding_window_pattern > m.shape.layers)
    return InputProblem{"sliding_window_pattern",
                        fmt::format("{} is not between 0 (every layer windowed) and the {} layers",
                                    m.sliding_window_pattern, m.shape.layers)};
  if (m.sliding_window_pattern != 0 && m.sliding_window == 0)
    return InputProblem{"sliding_window_pattern", "needs sliding_window (the window's tokens)"};
  if (m.experts < 0) return InputProblem{"experts", fmt::format("must be at least 0 (got {})", m.experts)};
  if (m.experts > 0) {
    if (auto p = in_range("experts", m.experts, kMaxHeads)) return p;
    if (m.top_k < 1 || m.top_k > m.experts)
      return InputProblem{"top_k", fmt::format("top_k {} is not between 1 and the {} experts", m.top_k, m.experts)};
    if (auto p = in_range("expert_ffn", m.expert_ffn, kMaxFfn)) return p;
    if (m.device_limit > 0 && m.node_limit > 0)
      return InputProblem{"device_limit", "a token's experts are limited to nodes or to devices, not both"};
    if (m.device_limit > m.top_k)
      return InputProblem{"device_limit", fmt::format("device_limit {} is past top_k {}: a token's {} experts lie on "
                                                      "at most {} devices",
                                                      m.device_limit, m.top_k, m.top_k, m.top_k)};
    if (m.dense_layers >= m.shape.layers)
      return InputProblem{"dense_layers", fmt::format("{} dense layers leave none of the {} layers an MoE layer",
                                                      m.dense_layers, m.shape.layers)};
    if (m.shared_expert_ffn != 0)
      if (auto p = in_range("shared_expert_ffn", m.shared_expert_ffn, kMaxFfn)) return p;
    // The routing as one sequence routes it (the layout's token count is checked with the layout).
    if (!m.even_routing()) try {
        route_experts({m.experts, m.top_k, m.seq, m.capacity_factor}, m.routing);
      } catch (const MoeInputError& e) { return InputProblem{e.key(), e.what()}; }
    if (m.experts * m.expert_ffn > kMaxExpertWidth)
      return InputProblem{"expert_ffn", fmt::format("experts x expert_ffn = {} x {} is past the largest model stepsim "
                                                    "takes ({} per layer)",
                                                    m.experts, m.expert_ffn, kMaxExpertWidth)};
  }
  return too_many_parameters(total_parameters(m));
}

}  // namespace stepsim
