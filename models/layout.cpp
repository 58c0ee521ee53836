#include "models/layout.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <numeric>
#include <utility>
#include <vector>

#include "models/attention_kernels.hpp"
#include "models/expert_exchange.hpp"

namespace stepsim {

std::vector<int> divisors(std::int64_t n, std::int64_t limit) {
  std::vector<int> out;
  for (std::int64_t d = 1; d <= n && d <= limit; ++d)
    if (n % d == 0) out.push_back(static_cast<int>(d));
  return out;
}

std::string divisors_of(std::int64_t n, std::int64_t limit) {
  return fmt::format("{}", fmt::join(divisors(n, limit), ", "));
}

namespace {

// Each degree, micro_batch and global_batch within its limits, and the GPUs they span.
std::optional<InputProblem> check_sizes(const JobModel& m, const JobLayout& l) {
  const std::pair<const char*, int> degrees[] = {
      {"tp", l.tp}, {"pp", l.pp}, {"virtual_stages", l.vpp},     {"dp", l.dp},
      {"cp", l.cp}, {"ep", l.ep}, {"micro_batch", l.micro_batch}};
  for (const auto& [key, value] : degrees) {
    if (value < 1) return InputProblem{key, fmt::format("must be at least 1 (got {})", value)};
    if (value > kMaxGpus)
      return InputProblem{key, fmt::format("{} is past the largest layout stepsim takes ({})", value, kMaxGpus)};
  }
  if (l.global_batch < 1 || l.global_batch > kMaxGlobalBatch)
    return InputProblem{"global_batch",
                        fmt::format("{} is not between 1 and {} sequences", l.global_batch, kMaxGlobalBatch)};
  // Each factor is at most 10^6, so each partial product checked on the way stays under 10^12.
  std::int64_t ranks = 1;
  for (const int factor : {l.tp, l.pp, l.dp, l.cp})
    if ((ranks *= factor) > kMaxGpus) break;
  if (ranks > kMaxGpus)
    return InputProblem{"dp", fmt::format("tp x pp x dp x cp = {} x {} x {} x {} GPUs is past the largest layout "
                                          "stepsim takes ({})",
                                          l.tp, l.pp, l.dp, l.cp, kMaxGpus)};
  if (std::int64_t{l.micro_batch} * m.seq > kMaxMicroBatchTokens)
    return InputProblem{"micro_batch", fmt::format("micro_batch x seq = {} x {} tokens is past the largest micro-batch "
                                                   "stepsim takes ({})",
                                                   l.micro_batch, m.seq, kMaxMicroBatchTokens)};
  return std::nullopt;
}

}  // namespace

std::optional<InputProblem> check_layer_split(int layers, const JobLayout& l) {
  const int v = l.chunks_per_device();
  const char* what = v != l.vpp ? "chunks per device (DualPipe-V: 2)" : "virtual_stages";
  const std::int64_t chunks = std::int64_t{l.pp} * v;
  const bool first = l.first_chunk_layers >= 0, last = l.last_chunk_layers >= 0;
  if (!first && !last) {
    if (layers % chunks == 0) return std::nullopt;
    return InputProblem{l.vpp > 1 ? "virtual_stages" : "pp",
                        fmt::format("{} layers do not split into pp x {} = {} x {} = {} equal chunks (would fit: "
                                    "pp x {} in {}; or set first_chunk_layers / last_chunk_layers)",
                                    layers, what, l.pp, v, chunks, what, divisors_of(layers, layers))};
  }
  const char* key = first ? "first_chunk_layers" : "last_chunk_layers";
  const int ends = (first ? 1 : 0) + (last ? 1 : 0);
  if (chunks < 2)
    return InputProblem{key, "sets a pipeline end's layers but the model is one chunk (pp x virtual_stages = 1)"};
  const std::int64_t set = std::int64_t{std::max(l.first_chunk_layers, 0)} + std::max(l.last_chunk_layers, 0);
  const std::int64_t rest = layers - set, others = chunks - ends;
  if (others == 0 && rest != 0)
    return InputProblem{key, fmt::format("the two chunks hold {} + {} layers but the model has {}",
                                         l.first_chunk_layers, l.last_chunk_layers, layers)};
  if (others == 0) return std::nullopt;
  if (rest < others)
    return InputProblem{key, fmt::format("{} of the {} layers at the ends leave {} for the other {} chunks: fewer than "
                                         "one each",
                                         set, layers, rest, others)};
  if (rest % others != 0) {
    std::string fit;  // what the ends may hold together: the rest then shares evenly
    for (std::int64_t e = layers % others; e <= layers - others && e <= layers % others + 8 * others; e += others)
      fit += (fit.empty() ? "" : ", ") + std::to_string(e);
    return InputProblem{key, fmt::format("the {} layers less {} at the ends leave {} for the other {} chunks: not an "
                                         "equal share (would fit: ends holding {} layers together)",
                                         layers, set, rest, others, fit.empty() ? "none" : fit)};
  }
  return std::nullopt;
}

std::optional<InputProblem> check_accelerator_kernels(const JobLayout& l, const AcceleratorSpec& a) {
  if (l.fp8 && a.peak_fp8 <= 0)
    return InputProblem{"fp8",
                        fmt::format("{} has no FP8 tensor cores (no FP8 peak): its GEMMs run in BF16 only", a.name)};
  // MXFP8's 32-value blocks are scaled inside the tensor cores from Blackwell on (Transformer
  // Engine's MXFP8BlockScaling needs compute capability 10.0).
  if (l.fp8 && l.fp8_recipe == Fp8Recipe::Mx && a.architecture != GpuArchitecture::Blackwell) {
    std::vector<std::string> blackwell;
    for (const auto& name : cluster_preset_names())
      if (find_cluster_preset(name)->accelerator.architecture == GpuArchitecture::Blackwell) blackwell.push_back(name);
    return InputProblem{"fp8_recipe",
                        fmt::format("mxfp8 needs Blackwell's block-scaled tensor cores ({}); {} is {}: "
                                    "tensorwise or blockwise would run",
                                    fmt::join(blackwell, ", "), a.name, architecture_name(a.architecture))};
  }
  // NVFP4 GEMMs need FP4 tensor cores (Blackwell's fifth generation).
  if (l.fp8 && l.fp8_recipe == Fp8Recipe::Nvfp4 && a.peak_fp4 <= 0) {
    std::vector<std::string> fp4;
    for (const auto& name : cluster_preset_names())
      if (find_cluster_preset(name)->accelerator.peak_fp4 > 0) fp4.push_back(name);
    return InputProblem{"fp8_recipe", fmt::format("nvfp4 needs FP4 tensor cores ({}); {} has none (no FP4 peak)",
                                                  fmt::join(fp4, ", "), a.name)};
  }
  if (auto why = attention_kernel_refusal(l.attention, a)) return InputProblem{"attention", std::move(*why)};
  return std::nullopt;
}

namespace {
// Megatron-Core's CPU activation offloading without a pipeline or recompute (TransformerConfig
// refuses both); under ZeRO-3 too (Megatron-FSDP: NeMo's GB200 and GB300 Llama 3 70B recipes).
std::optional<InputProblem> check_activation_offload(const JobLayout& l) {
  if (l.offload_activations < 0)
    return InputProblem{"offload_activations",
                        fmt::format("{} layers: the count of layers whose activations go to the host, 0 or more",
                                    l.offload_activations)};
  if (l.offload_activations == 0) return std::nullopt;
  if (l.pp > 1)
    return InputProblem{"offload_activations",
                        "copies layers' activations to the host without a pipeline, as Megatron-Core's "
                        "--cpu-offloading does: needs pp: 1 (would fit: offload_activations: 0)"};
  if (l.recompute != JobRecompute::None)
    return InputProblem{"offload_activations",
                        "copies the activations recompute would rebuild; Megatron-Core's --cpu-offloading refuses "
                        "recompute: needs recompute: none (would fit: offload_activations: 0)"};
  return std::nullopt;
}

// The last layer's activations stay (Megatron-Core: --cpu-offloading-num-layers below num_layers).
std::optional<InputProblem> check_offloaded_layers(int layers, const JobLayout& l) {
  if (l.offload_activations < layers) return std::nullopt;
  return InputProblem{"offload_activations",
                      fmt::format("{} of the {} layers: the last layer's activations stay on the GPU, whose backward "
                                  "starts at once (Megatron-Core's --cpu-offloading-num-layers; would fit: at most {})",
                                  l.offload_activations, layers, layers - 1)};
}
}  // namespace

std::optional<InputProblem> check_layout_settings(const JobLayout& l) {
  if (l.zero < 0 || l.zero > 3)
    return InputProblem{"zero", fmt::format("zero stage {} does not exist (0, 1, 2 or 3)", l.zero)};
  if (l.grad_bytes != 2 && l.grad_bytes != 4)
    return InputProblem{"grad_bytes", "gradients are reduced in BF16 (2) or FP32 (4)"};
  if (l.adam_moment_bytes != 1 && l.adam_moment_bytes != 2 && l.adam_moment_bytes != 4)
    return InputProblem{"adam_moment_bytes", "Adam's moments are kept in FP32 (4), BF16 (2) or FP8 (1)"};
  if (l.fp8_dispatch && !l.fp8)
    return InputProblem{"fp8_dispatch", "FP8 dispatch sends the inputs of FP8 expert GEMMs: needs fp8: true"};
  if (l.fp8_recipe != Fp8Recipe::Tensorwise && !l.fp8)
    return InputProblem{"fp8_recipe", "the FP8 GEMMs' scaling: needs fp8: true"};
  if (l.fp8_activations && !l.fp8)
    return InputProblem{"fp8_activations", "keeps the inputs of FP8 GEMMs in FP8: needs fp8: true"};
  if (l.overlap_tp && l.tp > 1 && !l.sequence_parallel)
    return InputProblem{"overlap.tp",
                        "pipelines the TP all-gathers and reduce-scatters with their GEMMs: needs sp: "
                        "true (Megatron-Core's --tp-comm-overlap needs sequence parallelism)"};
  if (l.recompute_layers >= 0 && l.recompute != JobRecompute::Full)
    return InputProblem{"recompute_layers", "recomputes the first layers of each chunk whole: needs recompute: full"};
  if (l.offload_optimizer && l.zero < 1)
    return InputProblem{"offload_optimizer",
                        "steps each GPU's shard of the optimizer on its host (DeepSpeed's ZeRO 1-3, Megatron-Core's "
                        "distributed optimizer): needs zero: 1 or more"};
  if (!(l.offload_fraction > 0 && l.offload_fraction <= 1))
    return InputProblem{"offload_fraction",
                        fmt::format("{} is not a share of the optimizer: above 0, at most 1", l.offload_fraction)};
  if (l.offload_optimizer && l.master_weights == MasterWeights::Model)
    return InputProblem{"offload_optimizer",
                        "keeps the FP32 master weights on the host beside Adam's moments, the GPU holding BF16 "
                        "copies: needs master_weights: optimizer"};
  return check_activation_offload(l);
}

namespace {
// Folded expert TP (expert_tp below tp): a divisor of tp, with sequence parallelism as
// Megatron-Core's MoE with TP has it, and expert TP x EP dividing the stage's tp x cp x dp ranks.
std::optional<InputProblem> check_expert_tp(const JobModel& m, const JobLayout& l) {
  if (l.expert_tp == 0) return std::nullopt;
  if (l.expert_tp < 0 || l.expert_tp > kMaxGpus)
    return InputProblem{"expert_tp", fmt::format("must be between 1 and {} (got {})", kMaxGpus, l.expert_tp)};
  if (m.experts == 0) return InputProblem{"expert_tp", "expert_tp splits routed experts: the model has none"};
  if (l.tp % l.expert_tp != 0)
    return InputProblem{"expert_tp", fmt::format("expert_tp {} does not divide tp {} (would fit: {})", l.expert_tp,
                                                 l.tp, divisors_of(l.tp))};
  if (!l.folded()) return std::nullopt;
  if (!l.sequence_parallel)
    return InputProblem{"expert_tp",
                        "an expert TP below tp gathers the experts' tokens from sequence-parallel "
                        "shards: needs sequence_parallel: true"};
  const std::int64_t ranks = std::int64_t{l.tp} * l.cp * l.dp, grid = std::int64_t{l.expert_tp} * l.ep;
  if (ranks % grid != 0)
    return InputProblem{"ep",
                        fmt::format("expert_tp x ep = {} x {} = {} does not divide tp x cp x dp = {} (the "
                                    "expert grid folds over them; would fit: ep {})",
                                    l.expert_tp, l.ep, grid, ranks,
                                    divisors_of(std::gcd(static_cast<std::int64_t>(m.experts), ranks / l.expert_tp)))};
  return std::nullopt;
}

// torchtitan's op policy is defined on a dense block with FlashAttention (its saved set names
// the matmuls in call order and the SDPA kernels): another block has no such order to follow.
std::optional<InputProblem> check_op_recompute(const JobModel& m, const JobLayout& l) {
  if (l.recompute != JobRecompute::Op) return std::nullopt;
  const auto refuse = [](const char* what) { return InputProblem{"recompute", what}; };
  if (m.experts > 0 || m.latent_attention() || m.linear.value_heads > 0 || m.mamba.heads > 0)
    return refuse(
        "op checkpoints a dense block's matmuls in torchtitan's order: the model has experts, mla, "
        "linear_attention or mamba (selective with recompute_modules, or full)");
  if (!fused(l.attention))
    return refuse(
        "op saves FlashAttention's output (torchtitan's SDPA): needs a fused attention (flash, flash2, flash3)");
  return std::nullopt;
}

// Megatron-Core's GatedDeltaNet splits its key and value heads over TP, and over CP as well (its
// all-to-all gives each rank whole heads).
std::optional<InputProblem> check_linear_heads(const JobModel& m, const JobLayout& l) {
  const auto& a = m.linear;
  if (a.value_heads == 0) return std::nullopt;
  const std::int64_t split = std::int64_t{l.tp} * l.cp;
  if (a.key_heads % split == 0 && a.value_heads % split == 0) return std::nullopt;
  return InputProblem{
      l.cp > 1 ? "cp" : "tp",
      fmt::format("tp x cp = {} x {} = {} does not divide the {} linear-attention key heads and {} "
                  "value heads (would fit: tp x cp among {})",
                  l.tp, l.cp, split, a.key_heads, a.value_heads, divisors_of(std::gcd(a.key_heads, a.value_heads)))};
}

// Megatron-Core's MambaMixer splits its heads and groups over TP ("nheads must be evenly divisible
// by tp_size", ngroups alike), and MambaContextParallel its heads over CP too.
std::optional<InputProblem> check_mamba_heads(const JobModel& m, const JobLayout& l) {
  const auto& a = m.mamba;
  if (a.heads == 0) return std::nullopt;
  const std::int64_t split = std::int64_t{l.tp} * l.cp;
  if (a.groups % l.tp == 0 && a.heads % split == 0) return std::nullopt;
  return InputProblem{l.cp > 1 && a.groups % l.tp == 0 ? "cp" : "tp",
                      fmt::format("tp {} and cp {} do not split the {} Mamba-2 heads and {} groups (would fit: tp "
                                  "among {}, tp x cp among {})",
                                  l.tp, l.cp, a.heads, a.groups, divisors_of(a.groups), divisors_of(a.heads))};
}

// A selective module the model does not have would recompute nothing: refused, naming it.
std::optional<InputProblem> check_recompute_modules(const JobModel& m, const JobLayout& l) {
  if (l.recompute != JobRecompute::Selective) return std::nullopt;
  const auto refuse = [](const char* what) { return InputProblem{"recompute_modules", what}; };
  if (l.recomputes(kRecomputeMlaUpProj) && !m.latent_attention())
    return refuse("mla_up_proj recomputes latent attention's up-projections: the model has no mla");
  if ((l.recomputes(kRecomputeMoeAct) || l.recomputes(kRecomputeMoe)) && m.experts == 0)
    return refuse("moe and moe_act recompute routed experts: the model has none (mlp for a dense MLP)");
  if (l.recomputes(kRecomputeSharedExperts) && (m.experts == 0 || m.shared_expert_ffn == 0))
    return refuse("shared_experts recomputes the shared experts: the model has none");
  if (l.recomputes(kRecomputeMlp) && m.experts > 0 && dense_layers_in(m, 0, m.shape.layers) == 0)
    return refuse("mlp recomputes a dense layer's MLP: every MLP of this model is MoE (moe or moe_act)");
  return std::nullopt;
}

// overlap.ep_a2a needs the expert exchange and, under a pipeline, interleaved 1F1B (not settings:
// a search opens ep and schedule).
std::optional<InputProblem> check_forward_backward_pairs(const JobLayout& l) {
  if (l.overlap_ep_a2a && l.ep <= 1)
    return InputProblem{"overlap.ep_a2a",
                        "overlaps the expert all-to-alls of one micro-batch with another's compute: "
                        "needs ep > 1"};
  if (l.overlap_ep_a2a && l.pp > 1 && !(l.schedule == "interleaved-1f1b" && l.vpp > 1))
    return InputProblem{"overlap.ep_a2a",
                        fmt::format("pairs the steady state of interleaved-1f1b with virtual_stages > 1 under a "
                                    "pipeline (Megatron-Core requires VPP), not {} with {} (DualPipe pairs its own: "
                                    "overlap.pairs)",
                                    l.schedule, l.vpp > 1 ? fmt::format("virtual_stages {}", l.vpp) : "one chunk")};
  return std::nullopt;
}
// HSDP: dp_replicate groups of dp / dp_replicate ranks, each sharding ZeRO's state; an expert's
// replicas split the same way, so each group holds whole EP groups.
std::optional<InputProblem> check_dp_replicate(const JobModel& m, const JobLayout& l) {
  const int r = l.dp_replicate;
  if (r == 1) return std::nullopt;
  if (r < 1 || r > kMaxGpus)
    return InputProblem{"dp_replicate", fmt::format("must be between 1 and {} (got {})", kMaxGpus, r)};
  if (l.dp % r != 0)
    return InputProblem{"dp_replicate", fmt::format("dp_replicate {} does not divide dp {} (would fit: {})", r, l.dp,
                                                    divisors_of(l.dp))};
  if (l.zero == 0)
    return InputProblem{"dp_replicate",
                        "replicates ZeRO's shards over groups of data-parallel ranks: needs zero 1-3 (with zero 0 "
                        "every rank holds the whole state)"};
  if (l.zero_shards() == 1)
    return InputProblem{"dp_replicate",
                        fmt::format("dp_replicate {} leaves one rank in each shard group, which holds the whole "
                                    "state: that is zero 0 (DDP)",
                                    r)};
  if (m.experts > 0 && l.folded())
    return InputProblem{"dp_replicate", "HSDP with a folded expert TP (expert_tp below tp) is not modelled"};
  auto whole_ep_groups = [&](int n) { return (std::int64_t{l.dp / n} * l.cp) % l.ep == 0; };
  if (m.experts > 0 && !whole_ep_groups(r)) {
    std::vector<std::string> fits;
    for (int n = 1; n <= l.dp && fits.size() < 16; ++n)
      if (l.dp % n == 0 && whole_ep_groups(n)) fits.push_back(std::to_string(n));
    return InputProblem{"dp_replicate",
                        fmt::format("each replica's dp / dp_replicate x cp = {} x {} ranks must hold whole EP groups "
                                    "of {} (would fit: {})",
                                    l.dp / r, l.cp, l.ep, fmt::join(fits, ", "))};
  }
  return std::nullopt;
}

// ZeRO-3 (FSDP) runs one chunk of every layer per rank, without a pipeline.
std::optional<InputProblem> check_zero3(const JobModel& m, const JobLayout& l) {
  if (l.zero < 3) return std::nullopt;
  if (m.mtp_layers > 0)
    return InputProblem{"zero",
                        "multi-token prediction (mtp_layers) is modelled on a pipeline's last chunk, not under "
                        "zero 3's per-layer gathers: use zero 0-2"};
  if (l.pp > 1)
    return InputProblem{
        "zero",
        "zero 3 (FSDP) shards the weights over data-parallel ranks and runs without a pipeline: use pp 1, "
        "or zero 1 with pp > 1"};
  // A pipeline's chunks and copies mean nothing without a pipeline; the step ran one chunk's layers.
  if (l.chunks_per_device() > 1 || l.stage_copies() > 1)
    return InputProblem{l.vpp > 1 ? "virtual_stages" : "schedule",
                        fmt::format("zero 3 (FSDP) runs the layers in order on each rank, without pipeline chunks: use "
                                    "virtual_stages 1 and a one-chunk schedule (got {} with v {})",
                                    l.schedule, l.vpp)};
  return std::nullopt;
}
}  // namespace

std::optional<InputProblem> check_layout(const JobModel& m, const JobLayout& l, std::int64_t gpus) {
  if (auto p = check_layout_settings(l)) return p;
  if (auto p = check_sizes(m, l)) return p;
  if (auto p = check_forward_backward_pairs(l)) return p;
  const auto& s = m.shape;
  const int kv = s.kv_heads > 0 ? s.kv_heads : s.heads;
  if (s.heads % l.tp != 0 || kv % l.tp != 0)
    return InputProblem{
        "tp", fmt::format("tp {} does not divide the {} attention heads and {} key/value heads (would fit: {})", l.tp,
                          s.heads, kv, divisors_of(std::gcd(s.heads, kv)))};
  if (auto p = check_linear_heads(m, l)) return p;
  if (auto p = check_mamba_heads(m, l)) return p;
  if (auto p = check_layer_split(s.layers, l)) return p;
  if (auto p = check_offloaded_layers(s.layers, l)) return p;
  // Without FP8 every layer is BF16: the counts say nothing then (a BF16 variant need not reset them).
  if (l.fp8 && std::int64_t{l.bf16_first_layers} + l.bf16_last_layers >= s.layers)
    return InputProblem{l.bf16_last_layers > 0 ? "bf16_last_layers" : "bf16_first_layers",
                        fmt::format("bf16_first_layers + bf16_last_layers = {} + {} leave none of the {} layers in FP8 "
                                    "(would fit: at most {} together; or fp8: false)",
                                    l.bf16_first_layers, l.bf16_last_layers, s.layers, s.layers - 1)};
  if (m.seq % l.cp != 0 || (l.cp > 1 && (m.seq / l.cp) % 2 != 0))
    return InputProblem{
        "cp", fmt::format("cp {} does not split the sequence of {} into 2 x cp balanced chunks", l.cp, m.seq)};
  if (l.cp > 1 && l.cp_comm == CpComm::AllToAll) {
    // Each rank takes whole heads: tp x cp of them divide the query and the key/value heads.
    // Blamed at cp_comm: the exchange asks for it (a variant that sets only cp_comm is named there).
    const std::int64_t split = std::int64_t{l.tp} * l.cp;
    if (s.heads % split != 0 || kv % split != 0)
      return InputProblem{
          "cp_comm",
          fmt::format("cp_comm a2a splits the heads over tp x cp = {} x {} = {} ranks, which does not divide the "
                      "{} attention heads and {} key/value heads (would fit: cp {}; or cp_comm p2p)",
                      l.tp, l.cp, split, s.heads, kv, divisors_of(std::gcd(s.heads, kv) / l.tp))};
  }
  if (m.experts > 0 && m.experts % l.ep != 0)
    return InputProblem{"ep", fmt::format("ep {} does not divide the {} experts (would fit: {})", l.ep, m.experts,
                                          divisors_of(m.experts))};
  if (m.experts == 0 && l.ep != 1) return InputProblem{"ep", "ep needs a mixture-of-experts model (experts > 0)"};
  if (m.experts == 0 && l.permute_fusion)
    return InputProblem{"permute_fusion", "fuses an MoE block's token shuffles: needs a mixture-of-experts model"};
  if (auto p = check_expert_tp(m, l)) return p;
  if (!l.folded() && (std::int64_t{l.dp} * l.cp) % l.ep != 0)
    return InputProblem{
        "ep", fmt::format("ep {} does not divide dp x cp = {} (experts are sharded over data-parallel "
                          "ranks; would fit: {})",
                          l.ep, std::int64_t{l.dp} * l.cp,
                          divisors_of(std::gcd(static_cast<std::int64_t>(m.experts), std::int64_t{l.dp} * l.cp)))};
  if (auto p = check_dp_replicate(m, l)) return p;
  if (auto p = check_recompute_modules(m, l)) return p;
  if (auto p = check_op_recompute(m, l)) return p;
  if (m.experts > 0 && !m.even_routing()) try {
      expert_rank_load(m, l);
    } catch (const MoeInputError& e) {
      return InputProblem{"ep", fmt::format("the model's {} with ep {}: {}", e.key(), l.ep, e.what())};
    }
  if (gpus > 0 && l.ranks() != gpus) {
    const std::int64_t mp = static_cast<std::int64_t>(l.tp) * l.pp * l.cp;
    return InputProblem{
        "dp",
        gpus % mp == 0
            ? fmt::format("tp x pp x dp x cp = {} x {} x {} x {} = {} but the cluster has {} GPUs (would fit: dp {})",
                          l.tp, l.pp, l.dp, l.cp, l.ranks(), gpus, gpus / mp)
            : fmt::format("tp x pp x cp = {} does not divide the cluster's {} GPUs", mp, gpus)};
  }
  const std::int64_t per_step = static_cast<std::int64_t>(l.micro_batch) * l.dp;
  if (l.global_batch % per_step != 0)
    return InputProblem{
        "global_batch",
        fmt::format("global batch {} is not a multiple of micro_batch x dp = {} x {} = {} (would fit: {})",
                    l.global_batch, l.micro_batch, l.dp, per_step,
                    per_step * std::max<std::int64_t>(1, l.global_batch / per_step))};
  if (auto p = check_zero3(m, l)) return p;
  if (l.vpp > 1 && l.microbatches() % l.pp != 0)
    return InputProblem{
        "global_batch",
        fmt::format("the interleaved schedule needs micro-batches ({}) divisible by pp ({})", l.microbatches(), l.pp)};
  return std::nullopt;
}

}  // namespace stepsim
