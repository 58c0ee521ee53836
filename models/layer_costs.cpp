#include "models/layer_costs.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

#include "models/attention_kernels.hpp"
#include "models/block_scaling.hpp"
#include "models/job_memory.hpp"
#include "models/recurrent_mixer.hpp"
#include "sim/checked.hpp"

namespace stepsim {

PassSeconds& PassSeconds::operator+=(const PassSeconds& o) {
  gemm += o.gemm;
  attention += o.attention;
  memory += o.memory;
  host += o.host;
  offload += o.offload;
  tp += o.tp;
  cp += o.cp;
  ep += o.ep;
  return *this;
}
PassSeconds operator+(PassSeconds a, const PassSeconds& b) { return a += b; }

PassSeconds operator*(PassSeconds p, double k) {
  p.gemm *= k;
  p.attention *= k;
  p.memory *= k;
  p.host *= k;
  p.offload *= k;
  p.tp *= k;
  p.cp *= k;
  p.ep *= k;
  return p;
}

namespace {
constexpr double kFp8Row = 1 + 4.0 / 128;  // FP8 elements with a 4-byte scale per 128 (DeepSeek-V3 sec. 3.3.1)

// The tokens an MoE block's dispatcher on one GPU holds, of the T its attention sees: an expert TP
// group of etp ranks gathers etp / tp of them (its members' sequence shards); not folded, all T.
double dispatcher_tokens(const JobLayout& l, double T) { return T * l.etp() / l.tp; }

// The experts each GPU holds: E / ep (expert TP splits each one's width, not their number).
int local_experts(const JobModel& m, const JobLayout& l) { return m.experts / std::max(1, l.ep); }

// Unfused attention writes each score (BF16), softmaxes it (read, write), drops it out (read,
// write, a mask byte) and reads it for AV: 13 bytes a score; without dropout 8.
double unfused_score_bytes(const JobModel& m) { return m.dropout ? 13.0 : 8.0; }

int head_dim(const TransformerConfig& s) { return s.head_dim > 0 ? s.head_dim : static_cast<int>(s.hidden / s.heads); }

// The widths of a layer's attention arrays, all heads: queries, keys, values and the output
// projection's input (GQA: fewer key/value heads; MLA: per head nope + rope for queries and
// keys, v_head_dim for values), and the latents every TP rank computes whole (MLA).
struct LayerDims {
  double q = 0, k = 0, v = 0, o = 0;
  double latent = 0;  // MLA: q_lora_rank + kv_lora_rank + qk_rope_head_dim (0 otherwise)
  double gate = 0;    // attention_output_gate: the output gate, as wide as the queries (0 otherwise)
};
LayerDims layer_dims(const JobModel& m) {
  const auto& s = m.shape;
  if (m.latent_attention()) {
    const auto& a = m.mla;
    const double H = s.heads, qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    return {H * qk, H * qk, H * a.v_head_dim, H * a.v_head_dim,
            static_cast<double>(a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim)};
  }
  const double d = head_dim(s), q = s.heads * d, kv = (s.kv_heads > 0 ? s.kv_heads : s.heads) * d;
  return {q, kv, kv, q, 0, m.attention_output_gate ? q : 0};
}

// MLA's attention weights (DeepSeek-V2 sec. 2.1.2-2.1.3): the down-projections (and their
// norms), which every TP rank holds whole, and the rest, which TP splits by heads.
struct MlaWeights {
  std::int64_t whole = 0, split = 0;
};
MlaWeights mla_weights(const JobModel& m) {
  const auto& a = m.mla;
  const std::int64_t h = m.shape.hidden, H = m.shape.heads, qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
  MlaWeights w;
  if (a.q_lora_rank > 0) {
    w.whole += h * a.q_lora_rank + a.q_lora_rank;  // W_DQ and the latent's norm
    w.split += a.q_lora_rank * H * qk;             // W_UQ (with the RoPE queries W_QR)
  } else {
    w.split += h * H * qk;
  }
  w.whole += h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank;  // W_DKV, W_KR, the norm
  w.split += a.kv_lora_rank * H * (a.qk_nope_head_dim + a.v_head_dim);    // W_UK, W_UV
  w.split += H * a.v_head_dim * h;                                        // W_O
  return w;
}

std::int64_t layer_parameters(const JobModel& m) {
  const auto& s = m.shape;
  const std::int64_t h = s.hidden, q = static_cast<std::int64_t>(s.heads) * head_dim(s),
                     kv = static_cast<std::int64_t>(s.kv_heads > 0 ? s.kv_heads : s.heads) * head_dim(s);
  std::int64_t attn = h * (q + 2 * kv) + q * h + (m.attention_output_gate ? h * q : 0);
  if (const auto r = recurrent_mixer(m)) attn = r->parameters;
  if (m.latent_attention()) {
    const MlaWeights w = mla_weights(m);
    attn = w.whole + w.split;
  }
  const int mats = m.gated_mlp ? 3 : 2;
  const std::int64_t mlp = m.experts > 0 ? static_cast<std::int64_t>(m.experts) * mats * h * m.expert_ffn +
                                               h * m.experts + mats * h * m.shared_expert_ffn
                                         : mats * h * s.intermediate;
  // Each block with its norm: a hybrid pattern's layer has one.
  return (m.has_mixer() ? attn + h : 0) + (m.has_mlp() ? mlp + h : 0);
}

// The forward GEMMs of one layer on one GPU (Megatron's column-parallel QKV and MLP-in GEMMs
// split N by t, the row-parallel output projection and MLP-out split K by t; gate and up fused
// into one GEMM of 2 ffn / t columns). MoE: the router (N = experts, unsplit) and the GPU's
// experts / ep local experts as one grouped GEMM, each expert T top_k / (experts / ep) tokens,
// and the shared experts as a dense MLP.
std::vector<GemmShape> layer_gemms(const JobModel& m, const JobLayout& l, double T, double h, const LayerDims& d,
                                   double expert_load) {
  const double t = l.tp;
  const double in_mats = m.gated_mlp ? 2 : 1;
  std::vector<GemmShape> g;
  if (!m.has_mixer()) {
    // A hybrid pattern's MLP layer: no mixer.
  } else if (m.latent_attention()) {
    // MLA: the down-projections whole on every rank, the up-projections and W_O split by heads.
    const auto& a = m.mla;
    const double kv_latent = static_cast<double>(a.kv_lora_rank);
    if (a.q_lora_rank > 0) {
      const double q_latent = static_cast<double>(a.q_lora_rank);
      g.push_back({T, q_latent, h, 1});
      g.push_back({T, d.q / t, q_latent, 1, GemmPart::MlaUpProj, TpSplit::Column});
    } else {
      g.push_back({T, d.q / t, h, 1, GemmPart::Attention, TpSplit::Column});
    }
    g.push_back({T, kv_latent + a.qk_rope_head_dim, h, 1});
    g.push_back({T, static_cast<double>(m.shape.heads) * (a.qk_nope_head_dim + a.v_head_dim) / t, kv_latent, 1,
                 GemmPart::MlaUpProj, TpSplit::Column});
    g.push_back({T, h, d.o / t, 1, GemmPart::Attention, TpSplit::Row});
  } else if (const auto r = recurrent_mixer(m)) {
    g = {{T, r->projected / t, h, 1, GemmPart::Attention, TpSplit::Column},
         {T, h, r->inner / t, 1, GemmPart::Attention, TpSplit::Row}};
  } else {
    g = {{T, (d.q + d.k + d.v + d.gate) / t, h, 1, GemmPart::Attention, TpSplit::Column},
         {T, h, d.o / t, 1, GemmPart::Attention, TpSplit::Row}};
  }
  if (!m.has_mlp()) return g;
  if (m.experts > 0) {
    // Folded, the experts' FFN is split etp ways over the expert TP group's tokens.
    const double e = l.etp(), moe_tokens = dispatcher_tokens(l, T);
    const double local = static_cast<double>(m.experts) / std::max(1, l.ep);
    const double per_expert = moe_tokens * m.top_k * expert_load / local, ffn = static_cast<double>(m.expert_ffn) / e;
    g.push_back({moe_tokens, static_cast<double>(m.experts), h, 1, GemmPart::Router});
    g.push_back({per_expert, in_mats * ffn, h, local, GemmPart::Experts, TpSplit::Column});
    g.push_back({per_expert, h, ffn, local, GemmPart::Experts, TpSplit::Row});
    if (m.shared_expert_ffn > 0) {
      const double shared = static_cast<double>(m.shared_expert_ffn) / t;
      g.push_back({T, in_mats * shared, h, 1, GemmPart::SharedExperts, TpSplit::Column});
      g.push_back({T, h, shared, 1, GemmPart::SharedExperts, TpSplit::Row});
    }
  } else {
    const double ffn = static_cast<double>(m.shape.intermediate) / t;
    g.push_back({T, in_mats * ffn, h, 1, GemmPart::Mlp, TpSplit::Column});
    g.push_back({T, h, ffn, 1, GemmPart::Mlp, TpSplit::Row});
  }
  return g;
}

// The matmuls torchtitan's op policy reruns (recompute: op; check_op_recompute). A block calls
// them wq, wk, wv, wo, w1, w3, w2 (GeLU: w1, w2) and saves the output of every one but the
// second, fourth and sixth it calls (torchtitan's _custom_policy counts them: "every second mm"):
// wk, wo, and w3 (GeLU: w2).
std::vector<GemmShape> op_recomputed_gemms(const JobModel& m, const JobLayout& l, double T, double h,
                                           const LayerDims& d) {
  const double t = l.tp, ffn = static_cast<double>(m.shape.intermediate) / t;
  std::vector<GemmShape> g = {{T, d.k / t, h, 1, GemmPart::Attention, TpSplit::Column},
                              {T, h, d.o / t, 1, GemmPart::Attention, TpSplit::Row}};
  if (m.gated_mlp)
    g.push_back({T, ffn, h, 1, GemmPart::Mlp, TpSplit::Column});
  else
    g.push_back({T, h, ffn, 1, GemmPart::Mlp, TpSplit::Row});
  return g;
}

double gemm_flops_of(const std::vector<GemmShape>& gemms) {
  double f = 0;
  for (const GemmShape& g : gemms) f += 2 * g.m * g.n * g.k * g.count;
  return f;
}
}  // namespace

std::int64_t total_parameters(const JobModel& m) {
  const auto& s = m.shape;
  // Each kind of layer (layer_kind) counted once.
  std::array<std::int64_t, kKindBits> of_kind{};
  const auto layer = [&](int i) {
    const auto k = static_cast<std::size_t>(layer_kind(m, i));
    if (of_kind[k] == 0) of_kind[k] = layer_parameters(layer_kind_model(m, static_cast<int>(k)));
    return of_kind[k];
  };
  std::int64_t layers = 0;
  for (int i = 0; i < s.layers; ++i) layers += layer(i);
  // Multi-token prediction: per module a layer of the model's last kind, the 2h x h projection
  // and two norms (the embedding and the head are the model's).
  const std::int64_t mtp =
      m.mtp_layers > 0 ? m.mtp_layers * (layer(s.layers - 1) + 2 * s.hidden * s.hidden + 2 * s.hidden) : 0;
  return layers + s.vocab * s.hidden * (s.tied_embeddings ? 1 : 2) + s.hidden + mtp;
}

namespace {
// What one layer's TP, CP and EP exchanges move, per micro-batch on one GPU (T tokens).
void layer_comm_bytes(LayerWork& w, const JobModel& m, const JobLayout& l, double T, const LayerDims& d,
                      double expert_load) {
  const double t = l.tp, h = static_cast<double>(m.shape.hidden);
  const int mixer = m.has_mixer() ? 1 : 0;  // the mixer block's collective (none in an MLP layer)
  if (t > 1) {
    w.tp_bytes = T * h * kAct;  // b s h of each all-reduce (or all-gather + reduce-scatter)
    w.tp_collectives = mixer + (m.has_mlp() ? 1 : 0);
  }
  const bool dispatched = m.experts > 0 && m.has_mlp() && l.ep > 1;
  if (m.experts > 0 && m.has_mlp() && (l.folded() || (dispatched && t > 1))) {
    // The attention block's collectives, the shared experts' own (they keep attention's TP),
    // and the routed experts' among their expert TP group. Dispatched to other EP ranks, each
    // rank sends its own sequence shard's routed copies and the expert TP group gathers the
    // copies its members received (reduce-scatters them before the combine): Megatron-Core's
    // all-to-all token dispatcher, all-to-all then gather_from_sequence_parallel_region, so
    // top_k copies of each token cross the expert TP group and a 1/tp share of them the EP
    // group. Not dispatched (ep 1), the group gathers the tokens themselves.
    w.tp_collectives = t > 1 ? mixer + (m.shared_expert_ffn > 0 ? 1 : 0) : 0;
    if (l.etp() > 1) {
      w.moe_tp_bytes = dispatcher_tokens(l, T) * (dispatched ? m.top_k * expert_load : 1) * h * kAct;
      w.moe_tp_members = l.etp();
    }
  }
  if (l.cp > 1 && !m.has_mixer()) {
    // A hybrid pattern's MLP layer: nothing to exchange.
  } else if (const auto r = l.cp > 1 ? recurrent_mixer(m) : std::nullopt) {
    // By head (Megatron-Core's GatedDeltaNet and MambaContextParallel, ssm/mamba_context_parallel.py):
    // the input projection's output from sequence to heads before the convolution, the scan's
    // (normed) output back before the output projection.
    w.cp_heads = true;
    w.cp_q_bytes = T * r->projected / t * kAct;
    w.cp_o_bytes = T * r->inner / t * kAct;
  } else if (l.cp > 1) {
    w.cp_bytes = T * (d.k + d.v) / t * kAct;  // this GPU's K and V chunk
    w.cp_q_bytes = T * d.q / t * kAct;
    w.cp_o_bytes = T * d.o / t * kAct;
  }
  if (dispatched) w.ep_tokens = T / t * expert_load;  // this rank's sequence shard (above)
}
}  // namespace

namespace {
// An MoE block's token shuffles, memory-bound: the permute gathers each token's top_k copies
// into expert order (reads and writes top_k rows per token), the unpermute reads them back,
// weighted by the router's probabilities, and sums them into one row (reads top_k, writes 1):
// Megatron-Core's moe_utils permute / unpermute, around every token dispatcher's exchange.
// Rows: `tokens`, the tokens this GPU's dispatcher holds (dispatcher_tokens).
// The all-to-all dispatcher receives its rows grouped by sender and, holding several experts,
// sorts them by expert before the GEMMs and back after (sort_chunks_by_idxs: reads and writes
// each received row twice); DeepEP's receive is already grouped.
// Fused (Transformer Engine's permutation kernels, Megatron-Core --moe-permute-fusion), the
// permute reads each source row once and writes its copies, the unpermute reads the copies and
// writes one row: the all-to-all's T source rows and T top_k copies, twice; DeepEP's permute runs
// after the exchange, from the R = T x ranks reached rows a GPU receives to its load x T top_k
// copies, and back. Their backward moves as many bytes (each kernel's transpose), and the
// unpermute's reads its copies once more for the router probabilities' gradient (Transformer
// Engine's _unpermute_bwd_with_merging_probs_kernel): the forward's plus one row per copy. The
// unfused ones' backward is costed as any memory-bound kernel's, 1.5 x.
struct PermuteBytes {
  double forward = 0, backward = 0;
};
PermuteBytes permute_bytes(const JobModel& m, const JobLayout& l, double tokens, double expert_load, int ep_per_node) {
  const double row = static_cast<double>(m.shape.hidden) * kAct, k = m.top_k;
  const bool per_node = l.ep > 1 && l.ep_dispatch == EpDispatch::PerNode;
  PermuteBytes b;
  if (!l.permute_fusion)
    b.forward = tokens * (3 * k + 1) * row;
  else if (per_node)
    b.forward = 2 * tokens * (per_node_receipt(m, l.ep, ep_per_node).ranks() + k * expert_load) * row;
  else
    b.forward = 2 * tokens * (k + 1) * row;
  if (l.ep > 1 && local_experts(m, l) > 1 && l.ep_dispatch == EpDispatch::AllToAll)
    b.forward += 4 * tokens * k * expert_load * row;
  b.backward = l.permute_fusion ? b.forward + tokens * k * (per_node ? expert_load : 1) * row : 1.5 * b.forward;
  return b;
}

// Attention core: the mean keys each of a GPU's local queries is scored against. Causal
// FlashAttention visits only the causal pairs: the most loaded CP rank's share of s (s + 1) / 2
// (balanced chunks: exactly 1/cp of them, a mean context of (s + 1) / 2; contiguous: the last
// rank's more); unfused kernels all s keys. CP all-to-all gives each rank 1/cp of the heads over
// the whole sequence: 1/cp of the pairs however the sequence is split. A sliding window leaves
// each query at most that many keys (FlashAttention's window_size skips the tiles outside it);
// the unfused kernels compute every score and mask them, as for causality. Sets a windowed
// layer's CP exchange in `w` (cp_window, cp_halo_bytes), a fused kernel's tiles computed for no
// pairs and the calls its keys are split across (attention_tiles).
double attention_keys(const JobModel& m, const JobLayout& l, const LayerDims& d, LayerWork& w) {
  const std::int64_t window = m.every_layer_window() < m.seq ? m.every_layer_window() : 0;  // a wider one: none
  const bool split = l.cp > 1 && l.cp_comm != CpComm::AllToAll;  // each rank its chunks' queries
  const std::vector<CpRankShare> shares =
      split ? cp_rank_shares(m.seq, l.cp, l.cp_balanced, window) : std::vector<CpRankShare>{};
  if (split && window > 0 && l.cp_comm == CpComm::P2p) {
    // TE fetches the halo when its left window (window - 1 keys) spans at most cp - 1 chunks of
    // the 2 cp (use_p2p_swa).
    std::int64_t halo = 0;
    for (const auto& r : shares) halo = std::max(halo, r.halo);
    const bool fits = window - 1 <= (l.cp - 1) * (m.seq / (l.cp_balanced ? 2 * l.cp : l.cp));
    w.cp_window = fits ? LayerWork::CpWindow::Halo : LayerWork::CpWindow::Gather;
    if (fits) w.cp_halo_bytes = static_cast<double>(halo) * l.micro_batch * (d.k + d.v) / l.tp * kAct;
  }
  if (!fused(l.attention)) return static_cast<double>(m.seq);
  w.attention_tiles.masked_tiles = window > 0 ? 1.0 : 0.5;
  // The ring calls the kernel once a step, on the K/V chunk it has just passed (a windowed layer
  // fetches its halo or gathers first and calls once).
  if (split && window == 0 && l.cp_comm == CpComm::P2p) w.attention_tiles.calls = l.cp;
  std::int64_t most = causal_attention_pairs(m.seq, window);
  if (split) {
    most = 0;
    for (const auto& r : shares) most = std::max(most, r.pairs);
  }
  const double pairs =
      l.cp > 1 && l.cp_comm == CpComm::AllToAll ? static_cast<double>(most) / l.cp : static_cast<double>(most);
  return pairs / (static_cast<double>(m.seq) / l.cp);
}
}  // namespace

namespace {
// A layer's memory-bound kernels (memory_bytes) and the parts selective recompute reruns.
void layer_memory_bytes(LayerWork& w, const JobModel& m, const JobLayout& l, double T, const LayerDims& d,
                        double expert_load, int ep_per_node) {
  // Memory-bound kernels, bytes per token: two norms (read + write), two residual adds (read 2,
  // write 1) with dropout (one mask byte more), the activation function (GeLU: read + write the
  // FFN activations; SwiGLU: read 2, write 1). Without sequence parallelism the norms, adds and
  // dropouts run on the full hidden size on every TP rank (Korthikanti 2022, sec. 4.2.2).
  // A hybrid pattern's layer has one block: one norm, one residual add.
  const double t = l.tp, h = static_cast<double>(m.shape.hidden);
  const double hid = l.sequence_parallel ? h / t : h, blocks = m.has_mixer() && m.has_mlp() ? 2 : 1;
  double per_token = blocks * 2 * hid * kAct + blocks * (3 * hid * kAct + (m.dropout ? hid : 0));
  const double ffn_local =
      !m.has_mlp() ? 0.0
      : m.experts > 0
          ? (m.top_k * expert_load * static_cast<double>(m.expert_ffn) + static_cast<double>(m.shared_expert_ffn)) / t
          : static_cast<double>(m.shape.intermediate) / t;
  // Squared ReLU as Megatron-Core runs it (activations.squared_relu, torch.pow(F.relu(x), 2),
  // outside any fusion): two kernels, each reading and writing the FFN activations.
  const int act_kernels = m.squared_relu ? 2 : 1;
  per_token += act_kernels * (m.gated_mlp ? 3 : 2) * ffn_local * kAct;
  // The parts selective recompute reruns (memory_bytes is left as summed above).
  const double act_per_ffn = act_kernels * (m.gated_mlp ? 3 : 2) * kAct / t * T;
  w.norm_bytes = blocks * 2 * hid * kAct * T;
  if (!m.has_mlp()) {
    // A hybrid pattern's mixer layer: no MLP.
  } else if (m.experts > 0) {
    w.expert_act_bytes = act_per_ffn * m.top_k * expert_load * static_cast<double>(m.expert_ffn);
    w.shared_act_bytes = act_per_ffn * static_cast<double>(m.shared_expert_ffn);
  } else {
    w.mlp_act_bytes = act_per_ffn * static_cast<double>(m.shape.intermediate);
  }
  if (!m.has_mixer()) {
    // A hybrid pattern's MLP layer: no mixer.
  } else if (const auto r = recurrent_mixer(m)) {
    per_token += (r->memory_bytes + (l.micro_batch > 1 ? r->batch_copy_bytes : 0)) / t;
  } else {
    // The output gate: the attention's output and the gate read, their product written.
    per_token += 3 * d.gate * kAct / t;
    if (l.attention == AttentionKernel::Unfused)
      per_token += unfused_score_bytes(m) * m.shape.heads / t * static_cast<double>(m.seq);
  }
  w.memory_bytes = T * per_token;
  if (m.experts > 0 && m.has_mlp()) {
    const PermuteBytes shuffles = permute_bytes(m, l, dispatcher_tokens(l, T), expert_load, ep_per_node);
    w.permute_bytes = shuffles.forward;
    w.permute_backward_bytes = shuffles.backward;
    w.memory_bytes += w.permute_bytes;
  }
}
}  // namespace

LayerWork layer_work(const JobModel& m, const JobLayout& l, double expert_load, int ep_per_node) {
  const auto& s = m.shape;
  LayerWork w;
  const double t = l.tp;
  const double T = tokens_on_gpu(m, l);
  const double h = static_cast<double>(s.hidden);
  const LayerDims d = layer_dims(m);
  // GEMMs: QKV, output projection, MLP (or routed experts: each token through top_k of them);
  // their FLOPs are read off the shapes, 2 m n k per multiply.
  w.gemms = layer_gemms(m, l, T, h, d, expert_load);
  w.gemm_flops = gemm_flops_of(w.gemms);
  if (!m.has_mixer()) {
    // A hybrid pattern's MLP layer: no mixer.
  } else if (const auto r = recurrent_mixer(m)) {
    // The scan on this GPU's heads: with CP's all-to-all, 1/cp of them over the whole sequence,
    // as many token-heads as its own chunk's.
    w.attention_flops = T * r->heads / t * r->core_flops;
    w.attention_bytes = T * r->heads / t * r->core_bytes;
    w.attention_backward_bytes = T * r->heads / t * r->core_backward_bytes;
  } else {
    const double ctx = attention_keys(m, l, d, w);
    w.attention_flops = 2 * T * ctx * (d.q + d.o) / t;  // QK^T over the query width, AV over the value width
    w.attention_tiles.keys_per_query = ctx;
    w.attention_tiles.head_dim = (d.q + d.o) / (2.0 * s.heads);
  }
  layer_memory_bytes(w, m, l, T, d, expert_load, ep_per_node);
  layer_comm_bytes(w, m, l, T, d, expert_load);
  // TP splits every weight but MLA's down-projections.
  const std::int64_t whole = m.latent_attention() ? mla_weights(m).whole : 0;
  w.parameters = (layer_parameters(m) - whole) / l.tp + whole;
  if (m.experts > 0 && m.has_mlp()) {
    const int mats_i = m.gated_mlp ? 3 : 2;
    const std::int64_t expert = static_cast<std::int64_t>(m.experts) * mats_i * s.hidden * m.expert_ffn;
    w.expert_parameters = expert / (static_cast<std::int64_t>(l.etp()) * l.ep);
    w.parameters = (layer_parameters(m) - expert - whole) / l.tp + whole + w.expert_parameters;
  }
  if (casts_weights_per_pass(l)) w.weight_cast_bytes = (4 + 2) * static_cast<double>(w.parameters);
  double gemm_weights = 0;
  for (const GemmShape& g : w.gemms)
    if (l.fp8 && g.part != GemmPart::Router) gemm_weights += g.k * g.n * g.count;
  w.gemm_weights = static_cast<std::int64_t>(std::llround(gemm_weights));
  return w;
}

double pipelined_tp_exposed(double collective, double gemm, int tp) {
  if (tp <= 1 || collective <= 0) return collective;
  const double steps = tp - 1;
  return steps * std::max(0.0, collective / steps - gemm / tp);
}

namespace {
// The seconds of one block's column- and row-parallel GEMMs in a pass: the attention block's
// (with MLA's up-projections) or the MLP block's (a dense MLP; with `shared`, an MoE layer's
// shared experts too, which keep attention's TP).
struct BlockGemms {
  double column = 0, row = 0;
};
BlockGemms block_gemms(const LayerWork& w, const JobLayout& l, const ClusterSpec& c, bool mlp, bool shared,
                       GemmPass pass) {
  BlockGemms b;
  for (const GemmShape& g : w.gemms) {
    const bool in_block = mlp ? g.part == GemmPart::Mlp || (shared && g.part == GemmPart::SharedExperts)
                              : g.part == GemmPart::Attention || g.part == GemmPart::MlaUpProj;
    if (!in_block || g.split == TpSplit::None) continue;
    (g.split == TpSplit::Column ? b.column : b.row) += one_gemm_seconds(g, pass, c.accelerator, l.fp8_gemms());
  }
  return b;
}
}  // namespace

TpExposure tp_exposure(const LayerWork& w, const JobLayout& l, const ClusterSpec& c, const GroupPaths& paths,
                       GemmPass pass, bool weight_grad_follows) {
  TpExposure e;
  // TP collectives are on the critical path in Megatron (the next GEMM needs their result).
  const Collective tc = l.sequence_parallel ? Collective::AllGather : Collective::AllReduce;
  double one = collective_seconds(tc, l.tp, w.tp_bytes, paths.tp);
  if (l.sequence_parallel) one *= 2;  // all-gather + reduce-scatter = one all-reduce's bytes
  const double gather = one / 2;      // with SP, an all-gather, or a reduce-scatter of the same bytes
  int plain = w.tp_collectives;
  bool accounted[2] = {false, false};  // the attention block's, the MLP block's collective
  if (l.tp_overlapped() && pass != GemmPass::WeightGrad) {
    // Transformer Engine overlaps its linear layers: the attention block's and a dense MLP's.
    // An MoE block's gather sits in the token dispatcher and its experts are grouped GEMMs:
    // not overlapped (Megatron-Core's --tp-comm-overlap covers TE's linears only).
    for (const bool mlp : {false, true}) {
      const BlockGemms b = block_gemms(w, l, c, mlp, false, pass);
      if (b.column <= 0 || b.row <= 0 || plain == 0) continue;
      // Forward: the input gathered into the column-parallel GEMMs, the row-parallel output
      // reduce-scattered. Input gradient: the output gradient gathered into the row-parallel
      // GEMM's, the column-parallel GEMMs' input gradient reduce-scattered.
      const bool fwd = pass == GemmPass::Forward;
      const double shown = pipelined_tp_exposed(gather, fwd ? b.column : b.row, l.tp) +
                           pipelined_tp_exposed(gather, fwd ? b.row : b.column, l.tp);
      e.pipelined += shown;
      e.hidden += one - shown;
      accounted[mlp] = true;
      --plain;
    }
  }
  // Backward: a column-parallel GEMM's input-gradient collective runs while the same GEMM's weight
  // gradient is computed (Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication; Transformer
  // Engine's linears alike). Without SP the all-reduce (layout.overlap_tp_wgrad: Megatron-LM's
  // asynchronous TP all-reduce, absent in early 2021); with SP always: the output gradient gathered
  // before the row-parallel GEMM waits, the column-parallel GEMM's input gradient is reduce-scattered
  // under its weight gradient. The row-parallel GEMM's backward needs no collective without SP. Not
  // modelled: with SP the same GEMM's input, kept as a sequence shard, is gathered again under its
  // input gradient (hidden; only its contention would show), docs/overlap.md "TP in the backward".
  // Where the weight gradient is deferred (a split schedule) the collective waits: the zero-bubble
  // linears queue the weight gradient (WeightGradStore.put) and wait for the all-reduce's handle at
  // once, with nothing beside it.
  if (pass == GemmPass::InputGrad && weight_grad_follows && (l.sequence_parallel || l.overlap_tp_wgrad)) {
    for (const bool mlp : {false, true}) {
      if (accounted[mlp] || plain == 0) continue;
      const double wgrad = block_gemms(w, l, c, mlp, true, GemmPass::WeightGrad).column;
      if (wgrad <= 0) continue;
      const double beside = l.sequence_parallel ? gather : one;  // what runs beside the weight gradient
      const double shown = std::max(0.0, beside - wgrad);
      e.pipelined += (one - beside) + shown;
      e.hidden += beside - shown;
      --plain;
    }
  }
  e.plain = plain * one;
  if (w.moe_tp_members > 1) {  // folded: the routed experts' gather and reduce-scatter wait
    const double moe_gather = collective_seconds(tc, w.moe_tp_members, w.moe_tp_bytes, paths.etp);
    e.plain += l.sequence_parallel ? 2 * moe_gather : moe_gather;
  }
  return e;
}

namespace {
PassSeconds layer_pass(const LayerWork& w, const JobLayout& l, const ClusterSpec& c, const GroupPaths& paths,
                       GemmPass pass, double attn_mult, double mem_mult, double tp_mult) {
  const auto& a = c.accelerator;
  PassSeconds p;
  p.gemm = gemm_seconds(w.gemms, pass, a, l.fp8_gemms());
  // Attention kernels run at BF16 even in FP8 recipes (Transformer Engine keeps them BF16).
  // A core bound by its bytes (attention_bytes) takes the longer of the two.
  const double core_bytes = pass == GemmPass::InputGrad && w.attention_backward_bytes > 0
                                ? w.attention_backward_bytes
                                : attn_mult * w.attention_bytes;
  // The layout's kernel at its speed against the accelerator's own at the head dimension, at the
  // share of it the layer's keys per query leave a fused kernel's tiles.
  const AttentionPass ap = pass == GemmPass::Forward ? AttentionPass::Forward : AttentionPass::Backward;
  const double kernel = attention_kernel_share(l.attention, a.architecture, ap, w.attention_tiles);
  p.attention = std::max(attn_mult * w.attention_flops / (a.peak_bf16 * a.efficiency.attention * kernel),
                         core_bytes / (static_cast<double>(a.hbm_bandwidth) * a.efficiency.memory));
  const double casts = l.fp8 ? fp8_cast_bytes(w.gemms, pass, l.fp8_dispatch, l.fp8_recipe) : 0;
  // The token shuffles' backward moves permute_backward_bytes, not mem_mult x their forward's.
  double memory = mem_mult * w.memory_bytes;
  if (pass == GemmPass::Forward) memory += w.weight_cast_bytes;
  if (pass == GemmPass::InputGrad && mem_mult > 0) memory += w.permute_backward_bytes - mem_mult * w.permute_bytes;
  p.memory = (memory + casts) / (static_cast<double>(a.hbm_bandwidth) * a.efficiency.memory);
  const TpExposure tp = tp_exposure(w, l, c, paths, pass);
  p.tp = tp_mult * (tp.plain + tp.pipelined);
  // A collective pipelined under a GEMM takes SMs from it: slowed by contention x the overlap.
  p.gemm += tp_mult * a.efficiency.contention * tp.hidden;
  return p;
}

// The MLP block's share of layer_activation_bytes' count (bytes per token, in units of h outside
// the tensor-parallel region; in elements per token inside it, divided by h later): a dense MLP's
// inner arrays, or an MoE block's routed copies and experts' arrays at the busiest rank's load.
void mlp_activation_units(const JobModel& m, const JobLayout& l, double load, double& outside, double& inner) {
  const double inner_per_ffn = m.gated_mlp ? 6 : 4;
  if (m.experts > 0) {
    // The routed copies: their inputs (2h at the busiest rank's load), their outputs for the
    // combine (2h each), their experts' inner arrays. Selective modules: moe reruns the whole block
    // from its input (Megatron-Core's MoELayer checkpoints router, dispatch, experts and combine
    // together) and keeps none of them; moe_act drops the activation function's output (2 bytes
    // per FFN element); shared_experts the shared experts' arrays.
    const double routed_ffn = m.top_k * load * static_cast<double>(m.expert_ffn);
    if (!l.recomputes(kRecomputeMoe)) {
      outside += 2.0 * m.top_k * load + 2.0 * m.top_k;
      inner += inner_per_ffn * routed_ffn;
      if (l.recomputes(kRecomputeMoeAct)) inner -= 2 * routed_ffn;
    }
    if (!l.recomputes(kRecomputeSharedExperts)) inner += inner_per_ffn * static_cast<double>(m.shared_expert_ffn);
  } else {
    inner += inner_per_ffn * static_cast<double>(m.shape.intermediate);
    if (l.recomputes(kRecomputeMlp)) inner -= inner_per_ffn * static_cast<double>(m.shape.intermediate);
  }
}
}  // namespace

namespace {
// The attention block's share of layer_activation_bytes' count inside the tensor-parallel region
// (bytes per token), and the output projection's input width, which FP8 keeps as an FP8 copy.
struct MixerActivations {
  double inner = 0, projected = 0;
};
MixerActivations mixer_activations(const JobModel& m, const LayerDims& dims) {
  if (!m.has_mixer()) return {};
  if (const auto r = recurrent_mixer(m)) return {r->activation_bytes, r->inner};
  // Q, K, V and the projection's input; the output gate keeps the gate and the output it
  // multiplies (2 gate + 2 o).
  return {2 * (dims.q + dims.k + dims.v + dims.o) + 4 * dims.gate, dims.o};
}
}  // namespace

namespace {
// FP8 GEMMs keep their inputs for the weight gradient as FP8 copies, 1 B + a 4-byte scale
// per 128 elements (Transformer Engine's FP8 linears; DeepSeek-V3 sec. 3.3.3, its 1 x 128
// tiles) instead of 2 B: the attention block's input (a norm's output), the projection's,
// MLA's latents, a dense MLP's input and its second GEMM's, the routed copies' and the
// experts' second GEMM's. An MoE block's own input stays BF16: the router reads it, and
// its gating runs in BF16 (DeepSeek-V3 sec. 3.3.1). What recompute drops is not kept.
// NVFP4 keeps the column-wise copy its weight gradient reads (TE's quantized input, 4-bit with
// an E4M3 scale per 16).
// (In layer_activation_bytes' units: outside in h, inner in elements, latent in h.)
void fp8_kept_inputs(const JobModel& m, const JobLayout& l, double load, double projected, double& outside,
                     double& inner, double& latent) {
  const double kept = l.fp8_recipe == Fp8Recipe::Nvfp4 ? kNvfp4Bytes : kFp8Row;
  const double saved = kAct - kept;
  // The norms' outputs the GEMMs read: the mixer's, and a dense MLP's.
  const int gemm_inputs = (m.has_mixer() ? 1 : 0) + (m.has_mlp() && m.experts == 0 ? 1 : 0);
  if (!l.recomputes(kRecomputeLayerNorm)) outside -= saved * gemm_inputs;
  inner -= saved * projected;
  latent *= kept / kAct;
  if (!m.has_mlp()) {
    // A hybrid pattern's mixer layer: no MLP.
  } else if (m.experts > 0) {
    const double routed_ffn = m.top_k * load * static_cast<double>(m.expert_ffn);
    if (!l.recomputes(kRecomputeMoe)) outside -= saved * m.top_k * load;
    if (!l.recomputes(kRecomputeMoe) && !l.recomputes(kRecomputeMoeAct)) inner -= saved * routed_ffn;
    if (!l.recomputes(kRecomputeSharedExperts)) inner -= saved * static_cast<double>(m.shared_expert_ffn);
  } else if (!l.recomputes(kRecomputeMlp)) {
    inner -= saved * static_cast<double>(m.shape.intermediate);
  }
}
}  // namespace

Bytes layer_activation_bytes(const JobModel& m, const JobLayout& l) {
  // Activations kept per micro-batch per layer: Korthikanti 2022 sec. 4.1's count, bytes per
  // token in units of h, with its GPT shapes (q = kv = h, ffn 4h, GeLU) left as variables.
  // Outside the tensor-parallel region: the two norms' inputs (4), the QKV and MLP inputs (2 + 2)
  // and two dropout masks (1 + 1), 10. Inside it: Q, K, V and the output projection's input
  // (2q + 2kv + 2kv + 2q bytes; MLA: 2 x its query, key, value and output widths, and its
  // latents whole on every TP rank), and the MLP's inner arrays: GeLU's input and output (2 x 2 ffn),
  // SwiGLU's gate and up outputs and their product (3 x 2 ffn). GPT: 10 + 24 = 34 (eq. 1-2).
  // MoE: each of the top_k routed copies of a token keeps its input and its output for the
  // weighted combine (4h, outside) and its expert's inner arrays on expert_ffn; the shared
  // experts keep theirs as a dense MLP does (their input is the MLP input already counted).
  const double sbh = tokens_on_gpu(m, l) * static_cast<double>(m.shape.hidden);
  const double t = l.tp;
  const double hd = static_cast<double>(m.shape.hidden);
  // The scores' arrays: the softmax output (2 B) and, with dropout, its mask and output (1 + 2).
  const double as_h = (m.dropout ? 5.0 : 2.0) * m.shape.heads * static_cast<double>(m.seq) / hd;
  const bool scores = m.has_mixer() && !has_recurrent_mixer(m);
  const double score_term = !scores || fused(l.attention) || l.recomputes(kRecomputeCoreAttn) ? 0.0 : as_h;
  const LayerDims dims = layer_dims(m);
  // Without dropout, no masks; a hybrid pattern's layer has one block, half of them.
  const double blocks = m.has_mixer() && m.has_mlp() ? 2 : 1;
  double outside = blocks * (m.dropout ? 5 : 4);
  const MixerActivations mixer = mixer_activations(m, dims);
  double inner = mixer.inner;
  // MLA: the latents (the up-projections' inputs), computed whole on every TP rank.
  const double whole = 2 * dims.latent / hd;
  // The busiest EP rank keeps its routed rows' expert inputs (2h) and inner arrays: load x the
  // mean; each token's home rank keeps its copies' outputs (2h) for the combine.
  const double load = m.experts > 0 ? expert_rank_load(m, l).busiest : 1;
  if (m.has_mlp()) mlp_activation_units(m, l, load, outside, inner);
  // layernorm drops the norms' outputs (the QKV and MLP inputs, 2 + 2); mla_up_proj the
  // up-projected queries, keys and values (their latents stay).
  if (l.recomputes(kRecomputeLayerNorm)) outside -= 2 * blocks;
  if (l.recomputes(kRecomputeMlaUpProj)) inner -= 2 * (dims.q + dims.k + dims.v);
  double latent = whole;
  if (l.fp8_activations) fp8_kept_inputs(m, l, load, mixer.projected, outside, inner, latent);
  inner /= hd;
  if (l.recompute == JobRecompute::Op) {
    // torchtitan's op policy keeps, per token, the block's input (2h) and what its saved ops
    // return: wq's, wv's and w1's outputs and FlashAttention's (2q + 2v + 2 ffn + 2o inside the TP
    // region); with SP the two reduce-scatters' (2h + 2h); a SwiGLU block's w2, the seventh
    // matmul (2h: a row-parallel partial sum, whole on every TP rank). Nothing else.
    outside = l.sequence_parallel ? 6 : 2;
    inner = 2 * (dims.q + dims.v + dims.o + static_cast<double>(m.shape.intermediate)) / hd;
    latent = m.gated_mlp ? 2 : 0;
  }
  double act = 0;
  if (l.recompute == JobRecompute::Full)
    act = 2 * sbh / (l.sequence_parallel ? t : 1);
  else if (l.sequence_parallel)
    act = sbh / t * (outside + inner + score_term) + sbh * latent;
  else
    act = sbh * (outside + inner / t + score_term / t + latent);
  return bytes_from(act, "a layer's activations");
}

namespace {
// Whether selective recompute reruns a GEMM of this part (the attention core is not a GEMM part).
bool reruns(const JobLayout& l, GemmPart part) {
  switch (part) {
    case GemmPart::MlaUpProj: return l.recomputes(kRecomputeMlaUpProj);
    case GemmPart::Router:
    case GemmPart::Experts: return l.recomputes(kRecomputeMoe);
    case GemmPart::SharedExperts: return l.recomputes(kRecomputeSharedExperts);
    case GemmPart::Mlp: return l.recomputes(kRecomputeMlp);
    case GemmPart::Attention: return false;
  }
  return false;
}

// Selective recompute's modules past the attention core, rerun forward in the backward: their
// GEMMs and memory-bound kernels, the EP exchange with moe, and the TP collective of a dense or
// shared MLP (the collective inside the module).
PassSeconds module_recompute(const LayerWork& w, const JobLayout& l, const ClusterSpec& c, const GroupPaths& paths,
                             const PassSeconds& forward) {
  LayerWork again;
  for (const GemmShape& g : w.gemms)
    if (reruns(l, g.part)) again.gemms.push_back(g);
  if (l.recomputes(kRecomputeLayerNorm)) again.memory_bytes += w.norm_bytes;
  if (l.recomputes(kRecomputeMoeAct) || l.recomputes(kRecomputeMoe)) again.memory_bytes += w.expert_act_bytes;
  if (l.recomputes(kRecomputeMoe)) again.memory_bytes += w.permute_bytes;
  if (l.recomputes(kRecomputeSharedExperts)) again.memory_bytes += w.shared_act_bytes;
  if (l.recomputes(kRecomputeMlp)) again.memory_bytes += w.mlp_act_bytes;
  again.tp_bytes = w.tp_bytes;
  const bool mlp = (l.recomputes(kRecomputeMlp) && w.mlp_act_bytes > 0) ||
                   (l.recomputes(kRecomputeSharedExperts) && w.shared_act_bytes > 0);
  again.tp_collectives = mlp && w.tp_collectives > 0 ? 1 : 0;
  PassSeconds p = layer_pass(again, l, c, paths, GemmPass::Forward, 0, 1, 1);
  if (l.recomputes(kRecomputeMoe)) p.ep = forward.ep;
  return p;
}

// torchtitan's op policy (recompute: op) reruns in the backward all of a block's forward but
// what it saved: the matmuls it did not save, every memory-bound kernel (norms, residual adds,
// the activation function; not the attention, saved) and the TP collectives, which are not in
// its saved set but the reduce-scatters (with SP the two all-gathers rerun, half the AG + RS
// pairs; without, the two all-reduces).
PassSeconds op_recompute(const JobModel& m, const LayerWork& w, const JobLayout& l, const ClusterSpec& c,
                         const GroupPaths& paths) {
  LayerWork again;
  again.gemms = op_recomputed_gemms(m, l, tokens_on_gpu(m, l), static_cast<double>(m.shape.hidden), layer_dims(m));
  again.memory_bytes = w.memory_bytes;
  again.weight_cast_bytes = w.weight_cast_bytes;  // autocast casts the rerun's weights again
  again.tp_bytes = w.tp_bytes;
  again.tp_collectives = w.tp_collectives;
  return layer_pass(again, l, c, paths, GemmPass::Forward, 0, 1, l.sequence_parallel ? 0.5 : 1);
}

}  // namespace

namespace {
// The whole sequence's K and V gathered before the attention, in the open (Llama 3 sec. 3.3.2:
// exposed, and small with GQA's few key/value heads); the backward gathers them again (the
// gathered copy is not kept) and reduce-scatters dK, dV.
void cp_gather_exposure(const LayerWork& w, const JobLayout& l, const GroupPaths& paths, PassSeconds& f,
                        PassSeconds& bi) {
  const double gather = collective_seconds(Collective::AllGather, l.cp, l.cp * w.cp_bytes, paths.cp);
  f.cp = gather;
  bi.cp = gather + collective_seconds(Collective::ReduceScatter, l.cp, l.cp * w.cp_bytes, paths.cp);
}

// CP's exchanges in the forward and the input-gradient pass, by l.cp_comm.
void cp_exposure(const LayerWork& w, const JobLayout& l, const GroupPaths& paths, PassSeconds& f, PassSeconds& bi) {
  switch (w.cp_heads ? CpComm::AllToAll : l.cp_comm) {
    case CpComm::P2p: {
      if (w.cp_window == LayerWork::CpWindow::Halo) {
        // A window's halo: one batched exchange with the neighbours before the attention, its
        // gradients back after the backward's, each waited for (nothing to wait for without one).
        f.cp = bi.cp =
            w.cp_halo_bytes > 0 ? to_s(paths.cp.step_latency) + w.cp_halo_bytes / paths.cp.bytes_per_second : 0;
        return;
      }
      if (w.cp_window == LayerWork::CpWindow::Gather) {
        cp_gather_exposure(w, l, paths, f, bi);
        return;
      }
      // The K/V ring (cp - 1 steps) hides behind the attention it feeds; what exceeds it shows.
      const double ring = (l.cp - 1) * (to_s(paths.cp.step_latency) + w.cp_bytes / paths.cp.bytes_per_second);
      f.cp = std::max(0.0, ring - f.attention);
      bi.cp = std::max(0.0, 2 * ring - bi.attention);  // dK, dV travel back too
      return;
    }
    case CpComm::AllGather: cp_gather_exposure(w, l, paths, f, bi); return;
    case CpComm::AllToAll: {
      // Q, K and V from sequence chunks to head groups before the attention, its output back
      // after (Jacobs et al. 2023, DeepSpeed-Ulysses sec. 3); the backward the transposes, dO in
      // and dQ, dK, dV out. Each waits for the one before.
      f.cp = collective_seconds(Collective::AllToAll, l.cp, w.cp_q_bytes + w.cp_bytes, paths.cp) +
             collective_seconds(Collective::AllToAll, l.cp, w.cp_o_bytes, paths.cp);
      bi.cp = f.cp;
      return;
    }
  }
}
}  // namespace

namespace {
// EP: dispatch and combine forward, their transposes backward: the combine's gradient goes the
// dispatch's way and is sent as the dispatch is (FP8 where the dispatch is: DeepSeek-V3 sec.
// 3.3.2 quantizes the gradient before the down-projection too), the dispatch's gradient comes
// back in BF16 as the combine does. FP8 rows carry a 4-byte scale per 128 elements (the
// report's 1 x 128 activation tiles, sec. 3.3.1). Seconds of one pass's two legs.
double ep_exchange_seconds(const JobModel& m, const JobLayout& l, const GroupPaths& paths, const LayerWork& w) {
  if (w.ep_tokens <= 0) return 0;
  const double dispatch_bytes = l.fp8_dispatch ? kFp8Row : kAct;
  return ep_leg_seconds(m, l, paths, w.ep_tokens, dispatch_bytes) + ep_leg_seconds(m, l, paths, w.ep_tokens, kAct);
}
}  // namespace

LayerPasses layer_passes(const JobModel& m, const JobLayout& l, const ClusterSpec& c) {
  // The busiest EP rank's rows: the others wait for it at the combine.
  const GroupPaths paths = group_paths(c, l);
  const LayerWork w = layer_work(m, l, expert_rank_load(m, l).busiest, paths.ep_per_node);
  const auto& a = c.accelerator;
  // One layer's passes. Backward input gradient = forward GEMMs, weight gradient = forward GEMMs;
  // attention backward 2x its forward (2.5x for FlashAttention, which recomputes the scores);
  // memory-bound backward reads the saved input and the incoming gradient and writes a gradient
  // where the forward read one array and wrote one: 1.5x.
  // A Gated DeltaNet layer's delta rule recomputes what it needs whatever the attention kernel.
  // So do a Mamba-2 layer's scan and a hybrid pattern's MLP layer, which has none.
  const bool unfused = l.attention == AttentionKernel::Unfused && m.has_mixer() && !has_recurrent_mixer(m);
  const double attn_b = unfused ? 2.0 : 2.5;
  PassSeconds f = layer_pass(w, l, c, paths, GemmPass::Forward, 1, 1, 1);
  PassSeconds bi = layer_pass(w, l, c, paths, GemmPass::InputGrad, attn_b, 1.5, 1);
  PassSeconds bw = layer_pass(w, l, c, paths, GemmPass::WeightGrad, 0, 0, 0);
  if (l.cp > 1) cp_exposure(w, l, paths, f, bi);
  f.ep = bi.ep = ep_exchange_seconds(m, l, paths, w);
  // Recompute: full reruns the whole forward in the backward; selective reruns the attention
  // core (scores, softmax, dropout, AV), nothing for FlashAttention, which recomputes anyway.
  if (l.recompute == JobRecompute::Full) bi += f;
  if (l.recomputes(kRecomputeCoreAttn) && unfused) {
    PassSeconds core;
    core.attention = f.attention;
    const double scores =
        unfused_score_bytes(m) * m.shape.heads / l.tp * static_cast<double>(m.seq) * tokens_on_gpu(m, l);
    core.memory = scores / (static_cast<double>(a.hbm_bandwidth) * a.efficiency.memory);
    bi += core;
  }
  if (l.recompute == JobRecompute::Selective && (l.recompute_modules & ~kRecomputeCoreAttn))
    bi += module_recompute(w, l, c, paths, f);
  if (l.recompute == JobRecompute::Op) bi += op_recompute(m, w, l, c, paths);
  // The host time an MoE block's pass exposes, once per pass and local expert: forward,
  // backward, and the forward rerun by full recompute or the `moe` module (which reruns the
  // block's synchronizations).
  if (m.experts > 0 && m.has_mlp()) {
    const double host = a.efficiency.moe_host_per_expert * local_experts(m, l);
    f.host += host;
    bi.host += host * (l.recompute == JobRecompute::Full || l.recomputes(kRecomputeMoe) ? 2 : 1);
  }
  LayerPasses out{f, bi, bw, layer_activation_bytes(m, l)};
  // A split schedule's input gradient without its weight gradient beside it (tp_mult 1 there).
  const TpExposure beside = tp_exposure(w, l, c, paths, GemmPass::InputGrad);
  const TpExposure alone = tp_exposure(w, l, c, paths, GemmPass::InputGrad, false);
  out.deferred_weight_grad.tp = alone.plain + alone.pipelined - (beside.plain + beside.pipelined);
  out.deferred_weight_grad.gemm = a.efficiency.contention * (alone.hidden - beside.hidden);
  return out;
}

LayerPasses moe_block_passes(const JobModel& m, const JobLayout& l, const ClusterSpec& c) {
  if (m.experts <= 0) return {};
  const GroupPaths paths = group_paths(c, l);
  const LayerWork w = layer_work(m, l, expert_rank_load(m, l).busiest, paths.ep_per_node);
  // The layer's work less the attention block's: the MoE parts' GEMMs, the experts' activation
  // functions and the token shuffles; of the layer's TP collectives all but the attention
  // block's (the shared experts' or the unfolded block's), and a folded block's expert TP pair.
  LayerWork block;
  for (const GemmShape& g : w.gemms)
    if (g.part == GemmPart::Router || g.part == GemmPart::Experts || g.part == GemmPart::SharedExperts)
      block.gemms.push_back(g);
  block.memory_bytes = w.expert_act_bytes + w.shared_act_bytes + w.permute_bytes;
  block.permute_bytes = w.permute_bytes;
  block.permute_backward_bytes = w.permute_backward_bytes;
  block.tp_bytes = w.tp_bytes;
  block.tp_collectives = std::max(0, w.tp_collectives - 1);
  block.moe_tp_bytes = w.moe_tp_bytes;
  block.moe_tp_members = w.moe_tp_members;
  // The passes as layer_passes costs them (memory-bound backward 1.5x), without the attention.
  PassSeconds f = layer_pass(block, l, c, paths, GemmPass::Forward, 0, 1, 1);
  PassSeconds bi = layer_pass(block, l, c, paths, GemmPass::InputGrad, 0, 1.5, 1);
  const PassSeconds bw = layer_pass(block, l, c, paths, GemmPass::WeightGrad, 0, 0, 0);
  f.ep = bi.ep = ep_exchange_seconds(m, l, paths, w);
  return {f, bi, bw, 0};
}

LayerStack::Kind LayerStack::kind_of(const JobModel& m, const JobLayout& l, const ClusterSpec& c) const {
  const LayerWork w = layer_work(m, l);
  return {layer_passes(m, l, c), w.parameters, w.expert_parameters, w.gemm_weights};
}

std::vector<bool> recomputed_layers(int layers, const JobLayout& l) {
  std::vector<bool> out(static_cast<std::size_t>(std::max(layers, 0)), l.recompute == JobRecompute::Full);
  if (!l.partial_recompute()) return out;
  std::size_t at = 0;
  for (const int n : chunk_layer_counts(layers, l))
    for (int i = 0; i < n && at < out.size(); ++i) out[at++] = i < l.recompute_layers;
  return out;
}

int LayerStack::kind_index(int layer) const {
  const bool kept = !recomputed_.empty() && !recomputed_[static_cast<std::size_t>(layer)];
  return layer_kind(model_, layer) | (kept ? kKept : 0) | (layout_.bf16_layer(layer, model_.shape.layers) ? kBf16 : 0);
}

void LayerStack::add_kind(int k, const JobLayout& l, const ClusterSpec& c) {
  auto& kind = kinds_[static_cast<std::size_t>(k)];
  if (kind) return;
  JobLayout own_layout = (k & kBf16) != 0 ? bf16_layer_layout(l) : l;
  if ((k & kKept) != 0) own_layout.recompute = JobRecompute::None;
  kind = kind_of(layer_kind_model(model_, k & ~(kKept | kBf16)), own_layout, c);
}

LayerStack::LayerStack(const JobModel& m, const JobLayout& l, const ClusterSpec& c) : model_(m), layout_(l) {
  if (l.partial_recompute()) recomputed_ = recomputed_layers(m.shape.layers, l);
  for (int i = 0; i < m.shape.layers; ++i) add_kind(kind_index(i), l, c);
  if (m.mtp_layers > 0 && m.shape.layers > 0) add_kind(kind_index(m.shape.layers - 1) & ~kBf16, l, c);
}

ChunkCost LayerStack::layers(int first, int count) const {
  std::array<int, kKinds> n{};
  for (int i = first; i < first + count; ++i) ++n[static_cast<std::size_t>(kind_index(i))];
  return sum(n);
}

ChunkCost LayerStack::prediction_layer() const {
  std::array<int, kKinds> n{};
  ++n[static_cast<std::size_t>(kind_index(model_.shape.layers - 1) & ~kBf16)];
  return sum(n);
}

ChunkCost LayerStack::sum(const std::array<int, kKinds>& n) const {
  ChunkCost ch;
  double activation = 0;
  for (std::size_t k = 0; k < n.size(); ++k) {
    if (n[k] == 0) continue;
    if (!kinds_[k]) throw std::logic_error("LayerStack: a layer past the model's");
    const Kind& kind = *kinds_[k];
    ch.layers += n[k];
    ch.forward += kind.passes.forward * n[k];
    ch.backward_input += kind.passes.backward_input * n[k];
    ch.backward_weight += kind.passes.backward_weight * n[k];
    ch.deferred_weight_grad += kind.passes.deferred_weight_grad * n[k];
    ch.parameters += kind.parameters * n[k];
    ch.expert_parameters += kind.expert_parameters * n[k];
    ch.gemm_weights += kind.gemm_weights * n[k];
    activation += static_cast<double>(kind.passes.activation) * n[k];
  }
  ch.activation = bytes_from(activation, "a pipeline chunk's activations");
  return ch;
}

namespace {
// The chunk's first `offloaded` layers' activations on the host (activation_offload.hpp): the
// GPU keeps the most of its layers' activations the handler's rule leaves there at once, and each
// pass waits what the copies do not hide. Each layer's time on the stream: its passes with their
// exposed in-pass collectives, the backward whole (with its weight gradients: no pipeline).
void offload_activations(const LayerStack& stack, int first_layer, int offloaded, const ClusterSpec& c, ChunkCost& ch) {
  std::vector<OffloadLayer> layers;
  layers.reserve(static_cast<std::size_t>(ch.layers));
  for (int i = 0; i < ch.layers; ++i) {
    const ChunkCost one = stack.layers(first_layer + i, 1);
    const PassSeconds b = one.backward_input + one.backward_weight;
    layers.push_back({one.forward.compute() + one.forward.comm(), b.compute() + b.comm(), one.activation});
  }
  ch.offload = activation_offload(layers, std::min(offloaded, ch.layers - 1), c.host_link_rate());
  ch.activation -= ch.offload.all_layers - ch.offload.gpu_peak;
  ch.forward.offload += ch.offload.forward_wait();
  ch.backward_input.offload += ch.offload.backward_wait();
}
}  // namespace

std::vector<ChunkCost> chunk_costs(const JobModel& m, const JobLayout& l, const ClusterSpec& c) {
  const LayerStack stack(m, l, c);
  const auto& a = c.accelerator;
  const double t = l.tp;
  const std::vector<int> counts = chunk_layer_counts(m.shape.layers, l);
  const int chunks = static_cast<int>(counts.size());
  std::vector<ChunkCost> out;
  const double T = tokens_on_gpu(m, l);
  int first_layer = 0;
  for (int k = 0; k < chunks; ++k) {
    ChunkCost ch = stack.layers(first_layer, counts[static_cast<std::size_t>(k)]);
    if (l.offload_activations > 0) offload_activations(stack, first_layer, l.offload_activations, c, ch);
    first_layer += ch.layers;
    ch.fp8_copy_bytes = fp8_weight_copy_bytes(l, a.architecture);
    ch.first = k == 0;
    ch.last = k == chunks - 1;
    const double h = static_cast<double>(m.shape.hidden), V = static_cast<double>(m.shape.vocab);
    if (ch.first) {
      // Embedding lookup: read and write b s h (memory-bound); its gradient is a scatter-add.
      const double bytes = 2 * T * h * kAct;
      ch.forward.memory += bytes / (static_cast<double>(a.hbm_bandwidth) * a.efficiency.memory);
      ch.backward_input.memory += bytes / (static_cast<double>(a.hbm_bandwidth) * a.efficiency.memory);
      ch.parameters += m.shape.vocab * m.shape.hidden / l.tp;
    }
    const double hbm = static_cast<double>(a.hbm_bandwidth) * a.efficiency.memory;
    // LM head GEMM (T x V / t logits from h: 2 T h V / t forward, as many for dX and dW) and the
    // cross-entropy over FP32 logits (write, read for softmax, write the gradient: 12 bytes per
    // logit).
    auto add_head = [&](ChunkCost& x) {
      const std::vector<GemmShape> head = {{T, V / t, h, 1}};
      const double ce = 12 * T * V / t / hbm;
      x.forward.gemm += gemm_seconds(head, GemmPass::Forward, a, l.head_gemms());
      x.forward.memory += ce / 2;
      x.backward_input.gemm += gemm_seconds(head, GemmPass::InputGrad, a, l.head_gemms());
      x.backward_input.memory += ce / 2;
      x.backward_weight.gemm += gemm_seconds(head, GemmPass::WeightGrad, a, l.head_gemms());
    };
    if (ch.last) {
      add_head(ch);
      if (casts_weights_per_pass(l)) ch.forward.memory += (4 + 2) * V * h / t / hbm;  // the LM head's cast
      if (!m.shape.tied_embeddings || chunks > 1) ch.parameters += m.shape.vocab * m.shape.hidden / l.tp;
      if (m.shape.tied_embeddings && chunks > 1) ch.embedding_copy = m.shape.vocab * m.shape.hidden / l.tp;
      ch.activation += bytes_from(T * h / (l.sequence_parallel ? t : 1) * kAct, "the last chunk's output");
    }
    if (ch.last && m.mtp_layers > 0) {
      // Multi-token prediction (DeepSeek-V3 sec. 2.2, figure 3), per module: the shifted tokens'
      // embedding and the hidden state, each normed (read + write), concatenated and projected
      // from 2h to h (split by TP as a column-parallel GEMM), a decoder layer of the model's last
      // kind, the shared LM head and a loss. The last chunk also holds the shared embedding when
      // it is not the first (its gradient joins the first chunk's, as tied embeddings do).
      const ChunkCost layer = stack.prediction_layer();
      const std::vector<GemmShape> proj = {{T, h / t, 2 * h, 1}};
      const double norms = (2 * T * h * kAct + 2 * 2 * T * h * kAct) / hbm;  // embedding lookup, two norms
      for (int d = 0; d < m.mtp_layers; ++d) {
        ch.forward += layer.forward;
        ch.backward_input += layer.backward_input;
        ch.backward_weight += layer.backward_weight;
        ch.forward.gemm += gemm_seconds(proj, GemmPass::Forward, a, l.fp8_gemms());
        ch.backward_input.gemm += gemm_seconds(proj, GemmPass::InputGrad, a, l.fp8_gemms());
        ch.backward_weight.gemm += gemm_seconds(proj, GemmPass::WeightGrad, a, l.fp8_gemms());
        ch.forward.memory += norms;
        ch.backward_input.memory += 1.5 * norms;
        add_head(ch);
        ch.parameters += layer.parameters + 2 * m.shape.hidden * m.shape.hidden / l.tp + 2 * m.shape.hidden;
        ch.expert_parameters += layer.expert_parameters;
        ch.gemm_weights += layer.gemm_weights + 2 * m.shape.hidden * m.shape.hidden / l.tp;
        // The layer's activations and the projection's 2h input.
        ch.activation += layer.activation +
                         bytes_from(T * 2 * h / (l.sequence_parallel ? t : 1) * kAct, "a prediction module's input");
      }
      if (chunks > 1 && ch.embedding_copy == 0) {  // tied, the head's copy is that embedding
        ch.embedding_copy = m.shape.vocab * m.shape.hidden / l.tp;
        ch.parameters += ch.embedding_copy;
      }
    }
    out.push_back(ch);
  }
  return out;
}

namespace {
// One kind of layer's forward FLOPs on one sequence without parallelism (the layout `one`): its
// GEMMs at the experts' mean load and at the rows they compute (with a capacity factor's padding),
// its core as model FLOPs count it (causal attention as half the square, FlashAttention's, the
// quantity a kernel must do, whatever kernel runs) and as its kernel computes it, and the GEMMs
// selective recompute's modules rerun.
struct KindFlops {
  double gemm = 0, gemm_hw = 0, core = 0, core_hw = 0, modules = 0;
};
KindFlops kind_flops(const JobModel& m, const JobLayout& one, double computed_load, const JobLayout& l) {
  JobLayout flash = one;
  flash.attention = AttentionKernel::Flash;
  const LayerWork w = layer_work(m, one), hw = layer_work(m, one, computed_load);
  std::vector<GemmShape> again;
  std::copy_if(hw.gemms.begin(), hw.gemms.end(), std::back_inserter(again),
               [&](const GemmShape& g) { return reruns(l, g.part); });
  return {w.gemm_flops, hw.gemm_flops, layer_work(m, flash).attention_flops, w.attention_flops, gemm_flops_of(again)};
}
}  // namespace

StepFlops step_flops(const JobModel& m, const JobLayout& l) {
  // Per token forward: GEMMs (2 x matmul parameters touched) + the layers' cores; training = 3x
  // forward; hardware adds the recomputed forward (full: everything; selective: its modules and
  // the unfused attention core). Each kind of layer (layer_kind) costed once.
  JobLayout one = l;
  one.tp = one.cp = one.ep = 1;
  one.expert_tp = 0;
  one.micro_batch = 1;
  one.sequence_parallel = false;
  const int L = m.shape.layers;
  const double computed = expert_rank_load(m, l).computed;
  // Layers of each kind, and of those full recompute reruns (partial: the first N of a chunk).
  std::array<double, kKindBits> layers{}, rerun{};
  std::array<std::optional<KindFlops>, kKindBits> kinds;
  const std::vector<bool> recomputed = recomputed_layers(L, l);
  for (int i = 0; i < L; ++i) {
    const auto k = static_cast<std::size_t>(layer_kind(m, i));
    if (!kinds[k]) kinds[k] = kind_flops(layer_kind_model(m, static_cast<int>(k)), one, computed, l);
    layers[k] += 1;
    if (recomputed[static_cast<std::size_t>(i)]) rerun[k] += 1;
  }
  const auto total = [&](const std::array<double, kKindBits>& n, double KindFlops::*part, bool softmax_only = false) {
    double sum = 0;
    for (std::size_t k = 0; k < n.size(); ++k)
      if (n[k] > 0 && (!softmax_only || (k & (kKindLinear | kKindMamba | kKindMlpOnly)) == 0))
        sum += n[k] * (*kinds[k]).*part;
    return sum;
  };
  const double gemms = total(layers, &KindFlops::gemm), gemms_hw = total(layers, &KindFlops::gemm_hw);
  const double core = total(layers, &KindFlops::core), core_hw = total(layers, &KindFlops::core_hw);
  const double head =
      2.0 * static_cast<double>(m.seq) * static_cast<double>(m.shape.hidden) * static_cast<double>(m.shape.vocab);
  // Multi-token prediction: per module one more layer of the model's last kind, the 2h -> h
  // projection and the LM head.
  const double mtp = m.mtp_layers;
  const KindFlops last = L > 0 ? *kinds[static_cast<std::size_t>(layer_kind(m, L - 1))] : KindFlops{};
  const double h = static_cast<double>(m.shape.hidden), proj = 2.0 * static_cast<double>(m.seq) * 2 * h * h;
  const double fwd_model = gemms + core + head + mtp * (last.gemm + last.core + proj + head);
  const double fwd_hw = gemms_hw + core_hw + head + mtp * (last.gemm_hw + last.core_hw + proj + head);
  double recompute = 0;
  if (l.recompute == JobRecompute::Full) {
    recompute = total(rerun, &KindFlops::gemm_hw) + total(rerun, &KindFlops::core_hw);
    // A prediction module's layer is recomputed as the model's last layer is.
    if (!recomputed.empty() && recomputed.back()) recompute += mtp * (last.gemm_hw + last.core_hw);
  }
  // The unfused softmax cores again (a Gated DeltaNet or Mamba-2 layer has no scores to rerun).
  if (l.recomputes(kRecomputeCoreAttn) && l.attention == AttentionKernel::Unfused)
    recompute = total(layers, &KindFlops::core_hw, true);
  if (l.recompute == JobRecompute::Selective) recompute += total(layers, &KindFlops::modules) + mtp * last.modules;
  if (l.recompute == JobRecompute::Op)  // torchtitan's op policy: wk, wo and w3 (GeLU: w2) again
    recompute += (L + mtp) * gemm_flops_of(op_recomputed_gemms(m, one, tokens_on_gpu(m, one),
                                                               static_cast<double>(m.shape.hidden), layer_dims(m)));
  const double seqs = static_cast<double>(l.global_batch);
  return {3 * fwd_model * seqs, (3 * fwd_hw + recompute) * seqs};
}

}  // namespace stepsim
