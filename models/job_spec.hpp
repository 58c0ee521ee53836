#pragma once
// What a job is, as the cost model reads it: the model (its transformer shape, MoE and MLA
// parameters, routing), the parallel layout (TP, PP, DP with ZeRO, CP, EP, recompute, overlap,
// number formats), the names inputs and reports give their options, and how the layout deals
// the model's layers into pipeline chunks and the chunks onto devices. No costs here: those are
// models/layer_costs.hpp's.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/accelerators.hpp"
#include "models/moe_routing.hpp"
#include "models/transformer.hpp"

namespace stepsim {

// The attention core's kernel. Flash: the accelerator's own fused kernel, at its `attention`
// efficiency (cuDNN's fused attention on Hopper and Blackwell, as Transformer Engine runs it;
// FlashAttention-2 on Ampere and Ada). Flash2, Flash3: FlashAttention-2 or -3 by name, at their
// speed against the accelerator's own (models/attention_kernels.hpp). Unfused: the scores written
// to HBM, softmaxed and read back around batched QK^T and AV GEMMs (Megatron 2021-23).
enum class AttentionKernel : std::uint8_t { Flash, Unfused, Flash2, Flash3 };
// Whether the kernel keeps the scores on chip (FlashAttention's tiling): all but unfused.
inline bool fused(AttentionKernel a) { return a != AttentionKernel::Unfused; }
// What the backward recomputes: nothing; Megatron-Core's selective modules (recompute_modules);
// whole layers; or by op as torchtitan checkpoints a block (PyTorch's selective activation
// checkpointing: every matmul's output saved but every second one, FlashAttention's and the
// reduce-scatters'; all else rerun).
enum class JobRecompute : std::uint8_t { None, Selective, Full, Op };
// The names inputs and reports use (job_step YAML, measured-runs CSV, search results); nullopt
// for a name that is none of them.
const char* recompute_name(JobRecompute r);
std::optional<JobRecompute> recompute_from_name(std::string_view name);
const char* fp8_recipe_name(Fp8Recipe r);  // tensorwise, blockwise, mxfp8
std::optional<Fp8Recipe> fp8_recipe_from_name(std::string_view name);
const char* architecture_name(GpuArchitecture a);  // ampere, ada, hopper, blackwell
std::optional<GpuArchitecture> architecture_from_name(std::string_view name);
// Megatron-Core's selective recompute modules (--recompute-modules; recompute: selective): each
// drops what its module keeps for the backward and reruns its forward there. Bits of a set.
enum RecomputeModule : std::uint8_t {
  kRecomputeCoreAttn = 1,        // core_attn: the attention core (scores; FlashAttention reruns it anyway)
  kRecomputeLayerNorm = 2,       // layernorm: the two norms' outputs
  kRecomputeMlaUpProj = 4,       // mla_up_proj: MLA's up-projected queries, keys and values
  kRecomputeMoeAct = 8,          // moe_act: the experts' activation function output
  kRecomputeMlp = 16,            // mlp: a dense layer's whole MLP
  kRecomputeSharedExperts = 32,  // shared_experts: the shared experts' MLP
  kRecomputeMoe = 64,            // moe: the routed experts, their dispatch and combine
};
// The names in Megatron-Core's order.
const std::vector<std::pair<const char*, RecomputeModule>>& recompute_module_names();
// The set `names` give into `modules` (a YAML list, a CSV cell's '+'-joined names), or the
// message naming the first that is none of them.
std::optional<std::string> parse_recompute_modules(const std::vector<std::string>& names, std::uint8_t& modules);
// "layernorm, moe_act" for a set, in the order above.
std::string recompute_module_list(std::uint8_t modules);
const char* attention_name(AttentionKernel a);  // flash, unfused, flash2, flash3
std::optional<AttentionKernel> attention_from_name(std::string_view name);

struct JobModel {
  TransformerConfig shape;  // layers, hidden, intermediate (= FFN), heads, kv_heads, head_dim, vocab, tied
  std::int64_t seq = 2048;
  bool gated_mlp = true;  // SwiGLU (3 matrices) vs GeLU (2 matrices)
  // A non-gated MLP's activation squared ReLU (Primer, So et al. 2021; Nemotron-H's relu2), which
  // Megatron-Core runs as two unfused kernels (relu, then pow) where GeLU's is one.
  bool squared_relu = false;
  // Dropout after the attention and the MLP and on the attention scores, with its masks kept for
  // the backward (GPT-2/3 and Megatron-LM's defaults, 0.1; Korthikanti 2022's activation count).
  // Llama, Qwen, DeepSeek and MPT train without: no mask, no dropout kernel. The readers set it
  // (a job's model file: without by default; a measured-runs row: with, as for GPT).
  bool dropout = true;
  int experts = 0;  // MoE: routed experts per layer (0: dense)
  int top_k = 0;
  std::int64_t expert_ffn = 0;
  // Shared experts (DeepSeekMoE, Qwen2-MoE, Llama 4): an MLP of this width every token goes
  // through beside its routed experts, split by TP as a dense MLP (Megatron-Core's
  // moe_shared_expert_intermediate_size; DeepSeek-V3: one shared expert, 2,048). 0: none.
  std::int64_t shared_expert_ffn = 0;
  // The first layers dense, with an MLP of `ffn` (DeepSeek-V3's first_k_dense_replace: 3 of
  // 61; Kimi K2 1); the others MoE. 0: every layer MoE.
  int dense_layers = 0;
  // Node-limited routing: each token's top_k experts lie on at most this many nodes (0: no
  // limit). DeepSeek-V3 trains with 4 (report sec. 2.1.2).
  int node_limit = 0;
  // Device-limited routing: each token's top_k experts lie on at most this many EP ranks
  // (DeepSeek-V2 report sec. 2.2.1, M = 3; Megatron-Core's router groups, one per EP rank, with
  // --moe-router-group-topk). 0: no limit; not with node_limit.
  int device_limit = 0;
  // Multi-head latent attention (DeepSeek-V2 report sec. 2.1, DeepSeek-V3 sec. 2.1.1; the names of
  // their config.json): queries through a q_lora_rank latent (0: projected from the hidden state
  // directly), keys and values through a kv_lora_rank latent; a head's query and key are
  // qk_nope_head_dim + qk_rope_head_dim wide (the RoPE part of the key shared by the heads and
  // projected from the hidden state beside the latent), its value v_head_dim. The down-projections
  // are not split by TP (every rank computes them, as Megatron-Core's MLA does). kv_lora_rank 0:
  // standard attention (heads, kv_heads, head_dim).
  struct Mla {
    std::int64_t q_lora_rank = 0, kv_lora_rank = 0;
    int qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
    bool operator==(const Mla&) const = default;
  };
  Mla mla;
  bool latent_attention() const { return mla.kv_lora_rank > 0; }
  // Sliding-window attention (Mistral 7B, Gemma 2 and 3, GPT-OSS; the names of their config.json):
  // each query attends to itself and the sliding_window - 1 keys before it; every
  // sliding_window_pattern-th layer (1-based: Gemma 3's layers 6, 12, ...) attends to its whole
  // causal context instead. Gemma 3: 1,024 and 6; GPT-OSS: 128 and 2; Mistral 7B: 4,096 and 0
  // (every layer windowed). sliding_window 0: no window.
  std::int64_t sliding_window = 0;
  int sliding_window_pattern = 0;
  // Whether decoder layer i (0-based) attends within the window.
  bool windowed_layer(int i) const {
    return sliding_window > 0 && (sliding_window_pattern == 0 || (i + 1) % sliding_window_pattern != 0);
  }
  // The window each of the model's layers has: sliding_window where every layer is windowed, 0
  // where none is or where they differ (a layer's cost is then taken per kind, from
  // windowed_layer_model and full_attention_layer_model).
  std::int64_t every_layer_window() const { return sliding_window_pattern == 0 ? sliding_window : 0; }
  // Gated DeltaNet linear attention (Yang, Kautz and Hatamizadeh, "Gated Delta Networks", ICLR
  // 2025; Qwen3-Next and Qwen3.5, the linear_* names of their config.json): in place of softmax
  // attention, an input projection to queries and keys (key_heads of key_head_dim), values and an
  // output gate (value_heads of value_head_dim) and a decay and a write strength per value head,
  // a causal depthwise convolution (conv_kernel taps) over queries, keys and values, the gated
  // delta rule in chunks (a key_head_dim x value_head_dim state per value head), a gated RMSNorm
  // and the output projection. Every full_attention_interval-th layer (1-based: Qwen3-Next's 4, 8,
  // ...) keeps softmax attention instead; 0: every layer linear. value_heads 0: none.
  struct LinearAttention {
    int key_heads = 0, value_heads = 0, key_head_dim = 0, value_head_dim = 0, conv_kernel = 0;
    int full_attention_interval = 0;
    bool operator==(const LinearAttention&) const = default;
  };
  LinearAttention linear;
  // Whether decoder layer i (0-based) is a Gated DeltaNet layer.
  bool linear_layer(int i) const {
    return linear.value_heads > 0 &&
           (linear.full_attention_interval == 0 || (i + 1) % linear.full_attention_interval != 0);
  }
  bool every_layer_linear() const { return linear.value_heads > 0 && linear.full_attention_interval == 0; }
  // Mamba-2 (Dao and Gu 2024, "Transformers are SSMs", sec. 7-8; Megatron-Core's MambaMixer,
  // ssm/mamba_mixer.py; the mamba_* names of Nemotron-H's config): an input projection to a gate z
  // and inputs x (heads of head_dim each), B and C (groups of state each) and a step size per head;
  // a causal depthwise convolution (conv_kernel taps, with a bias) over x, B and C; the SSD scan in
  // chunks (a head_dim x state state per head); a gated RMSNorm by group and the output
  // projection. heads 0: none.
  struct Mamba {
    int heads = 0, head_dim = 0, state = 0, groups = 0, conv_kernel = 0;
    bool operator==(const Mamba&) const = default;
  };
  Mamba mamba;
  // Megatron-Core's hybrid layer pattern (--hybrid-override-pattern; Nemotron-H's
  // hybrid_override_pattern): a character per decoder layer, each layer one block with its own
  // norm and residual: M a Mamba-2 mixer, * softmax attention, - an MLP, E an MoE block
  // (Nemotron-H 8B: "M-M-M-M*-M-..."). Empty: every layer a mixer (attention, or Mamba-2 where
  // `mamba` is set) and an MLP (or MoE block).
  std::string hybrid_pattern;
  // Which blocks a layer has: a transformer layer's two, or one (a hybrid pattern's layer, as
  // layer_kind_model gives it).
  enum class Blocks : std::uint8_t { Both, Mixer, Mlp };
  Blocks blocks = Blocks::Both;
  bool has_mixer() const { return blocks != Blocks::Mlp; }
  bool has_mlp() const { return blocks != Blocks::Mixer; }
  // Layer i's symbol in the hybrid pattern ('\0' without one).
  char pattern_symbol(int i) const {
    return i >= 0 && static_cast<std::size_t>(i) < hybrid_pattern.size() ? hybrid_pattern[static_cast<std::size_t>(i)]
                                                                         : '\0';
  }
  // Whether layer i's mixer is a Mamba-2 one, and whether every layer's is (a model of one kind).
  bool mamba_layer(int i) const { return hybrid_pattern.empty() ? mamba.heads > 0 : pattern_symbol(i) == 'M'; }
  bool every_layer_mamba() const { return mamba.heads > 0 && hybrid_pattern.empty() && has_mixer(); }
  // Softmax attention with an output gate (Qwen3-Next's full-attention layers, after Qiu et al.
  // 2025, "Gated Attention for Large Language Models"): the query projection also gives a gate as
  // wide as the queries, and the attention's output is multiplied by its sigmoid.
  bool attention_output_gate = false;
  // Multi-token prediction modules (DeepSeek-V3 sec. 2.2, its config's num_nextn_predict_layers):
  // each predicts one more token ahead with a 2h -> h projection, one more decoder layer and the
  // shared embedding and LM head, on the pipeline's last chunk. 0: none.
  int mtp_layers = 0;
  // How the router spreads tokens over the experts (models/moe_routing.hpp; figure 10-27's hot
  // experts) and the capacity factor (GShard sec. 2.2: rows past ceil(c x mean) dropped, the
  // rest padded to it; none: dropless). Balanced and dropless by default: the mean everywhere.
  MoeRoutingSpec routing;
  std::optional<double> capacity_factor;
  bool even_routing() const { return routing.kind == MoeRoutingSpec::Kind::Balanced && !capacity_factor; }
  bool operator==(const JobModel&) const = default;
};

// How an MoE layer's tokens reach their experts' GPUs (and come back).
enum class EpDispatch : std::uint8_t {
  AllToAll,  // every routed copy to its expert's GPU (Megatron-Core's all-to-all token dispatcher)
  PerNode,   // once per destination node over the network, then over NVLink inside it (DeepEP)
};
const char* ep_dispatch_name(EpDispatch d);
std::optional<EpDispatch> ep_dispatch_from_name(std::string_view name);

// What one ZeRO-3 gather fetches: a framework's setting (zero 0-2 layouts, which gather nothing
// per layer, ignore it).
enum class Zero3Fetch : std::uint8_t {
  // A layer's weights whole, before its forward and again before its backward, inside which a
  // recomputed layer reruns (PyTorch FSDP wrapping each block, Megatron-FSDP).
  Layer,
  // Each module's weights before the module runs, released after (DeepSpeed's ZeRO-3 hooks): a
  // recomputed layer's rerun forward fetches them again, all but its last module's, which its
  // coordinator's reuse distance keeps for the backward that follows at once (schedules/lowering/job/job_emission.cpp).
  Module,
};
const char* zero3_fetch_name(Zero3Fetch f);
std::optional<Zero3Fetch> zero3_fetch_from_name(std::string_view name);

// How ZeRO 2 accumulates gradients over a step's micro-batches: a framework's setting (zero 2
// with more than one micro-batch per pipeline; the other stages ignore it). ZeRO 2 shards the
// gradients, but each micro-batch's backward makes the whole of them: either they are
// reduce-scattered every micro-batch and only the shard is accumulated, or they are accumulated
// whole and reduce-scattered once.
enum class Zero2Accumulate : std::uint8_t {
  // Every micro-batch's gradients reduce-scattered as its backward makes them, the shard
  // accumulated (DeepSpeed's ZeRO stage 2: its gradient buckets are reduced in every backward):
  // m times the reduce-scatters of zero 1, the gradients held sharded.
  Sharded,
  // Accumulated whole, reduce-scattered after the last micro-batch (PyTorch FSDP's
  // SHARD_GRAD_OP under no_sync, FSDP2's set_requires_gradient_sync(False) as torchtitan runs
  // it with a pipeline): zero 1's traffic, and its whole gradients held until then.
  Whole,
};
const char* zero2_accumulate_name(Zero2Accumulate a);
std::optional<Zero2Accumulate> zero2_accumulate_from_name(std::string_view name);

// Where mixed-precision training keeps its FP32 master weights: a framework's setting.
enum class MasterWeights : std::uint8_t {
  // In the optimizer's state, beside the BF16 weights the model computes with: 2 B + 4 B a
  // parameter (Megatron-LM's main params, DeepSpeed's FP32 partitions).
  Optimizer,
  // The model's own weights are FP32 and the master; each pass computes with BF16 copies cast from
  // them: 4 B a parameter (PyTorch autocast; FSDP's MixedPrecision, whose sharded parameter stays
  // FP32 and is cast to BF16 for each gather).
  Model,
};
const char* master_weights_name(MasterWeights w);
std::optional<MasterWeights> master_weights_from_name(std::string_view name);

// How context-parallel ranks share a sequence's attention (Megatron-Core --cp-comm-type).
enum class CpComm : std::uint8_t {
  P2p,        // K/V chunks passed around a ring under the attention (ring attention)
  AllGather,  // K and V all-gathered before the attention (Llama 3 paper sec. 3.3.2)
  AllToAll,   // Q, K, V exchanged from sequence to heads and back (DeepSpeed-Ulysses, Jacobs et al. 2023)
};
const char* cp_comm_name(CpComm c);  // "p2p", "all_gather", "a2a"
std::optional<CpComm> cp_comm_from_name(std::string_view name);

struct JobLayout {
  int tp = 1, pp = 1, vpp = 1, dp = 1, cp = 1, ep = 1;
  // The routed experts' own TP (Megatron-Core --expert-tensor-parallel-size, "MoE parallel
  // folding", Liu et al. 2025): 0 follows tp. Below tp, the expert layer's ranks are laid out
  // again, expert TP innermost, then EP: the EP group folds over attention's TP ranks.
  int expert_tp = 0;
  int etp() const { return expert_tp > 0 ? expert_tp : tp; }
  bool folded() const { return etp() != tp; }
  std::string schedule = "1f1b";  // a pipeline schedule family (schedules/registry.hpp)
  int zero = 0;                   // 0 DDP, 1 optimizer states, 2 + gradients, 3 + weights (FSDP)
  // Data-parallel replicas of ZeRO's shards (HSDP): the dp ranks split into dp_replicate groups of
  // dp / dp_replicate neighbouring ranks, each sharding the state among its own; a gradient is
  // reduce-scattered in its group, then its shard all-reduced across the replicas (PyTorch FSDP's
  // HYBRID_SHARD, torchtitan's data_parallel_replicate_degree, Megatron-LM's
  // --num-distributed-optimizer-instances). 1: every dp rank in one group.
  int dp_replicate = 1;
  bool sequence_parallel = false;
  int micro_batch = 1;            // sequences per micro-batch
  std::int64_t global_batch = 1;  // sequences per step
  JobRecompute recompute = JobRecompute::None;
  AttentionKernel attention = AttentionKernel::Flash;
  bool overlap_grad_reduce = true;   // DP gradient collectives overlap the backward
  bool overlap_param_gather = true;  // ZeRO-3 / distributed optimizer gathers prefetched
  bool overlap_pp = true;            // PP sends run beside the compute (false: they block the sender)
  bool overlap_pairs = true;         // DualPipe pairs run their in-pass collectives beside their compute
  bool overlap_tp = false;           // TP collectives pipelined with their GEMMs (TE userbuffers; needs SP)
  // Without SP, a column-parallel GEMM's input-gradient all-reduce runs beside its weight gradient
  // (Megatron-LM's asynchronous TP all-reduce; false: it waits, as in Megatron-LM of early 2021).
  bool overlap_tp_wgrad = true;
  // 1F1B's steady-state forward and backward of two micro-batches as one overlapped pair, each half's
  // expert all-to-alls (and other in-pass collectives) beside the other's compute: Megatron-Core's
  // --overlap-moe-expert-parallel-comm (schedules/pipeline/forward_backward_pairs.hpp).
  bool overlap_ep_a2a = false;
  bool fp8 = false;                               // GEMMs at the FP8 peak
  Fp8Recipe fp8_recipe = Fp8Recipe::Tensorwise;   // how FP8 GEMMs scale their operands
  EpDispatch ep_dispatch = EpDispatch::AllToAll;  // how MoE tokens reach their experts' GPUs
  bool permute_fusion = false;                    // MoE token shuffles fused (Megatron-Core --moe-permute-fusion)
  bool fp8_dispatch = false;                      // tokens dispatched in FP8 (combined in BF16)
  bool fp8_activations = false;                   // FP8 GEMMs keep their inputs for the backward in FP8
  // The FP8 GEMMs' weights kept as FP8 parameters, no BF16 copy beside them, and gathered by the
  // distributed optimizer in FP8 (Megatron-Core's --fp8-param-gather: Transformer Engine's
  // fp8_model_init; NeMo's FP8 precision plugins set it). Where it applies: fp8_params().
  bool fp8_param_gather = false;
  // Decoder layers at the model's start and end kept out of the FP8 (or NVFP4) GEMMs, whole, in
  // BF16 (Megatron-Core's --first-last-layers-bf16 with --num-layers-at-start-in-bf16 and
  // --num-layers-at-end-in-bf16, counted over the whole model: fp8_utils.is_first_last_bf16_layer).
  int bf16_first_layers = 0, bf16_last_layers = 0;
  int grad_bytes = 4;                             // bytes per gradient element reduced (Megatron: FP32 main grads)
  int adam_moment_bytes = 4;                      // bytes of each of Adam's m and v per parameter (FP32; BF16 2)
  // A cap on each GPU's data-parallel / ZeRO collective rate, bytes/s, for a framework that moves
  // them slower than the network allows (0: the network's rate). DeepSpeed 0.3's ZeRO-3 gathered
  // at about 21 GB/s even over NVLink (DeepSpeed issue 1174).
  std::int64_t dp_bandwidth = 0;
  Zero3Fetch zero3_fetch = Zero3Fetch::Layer;               // what one ZeRO-3 gather fetches
  // ZeRO-3: each layer's gathered weights kept from its forward to its backward, not gathered
  // again (PyTorch FSDP2's reshard_after_forward=False, FSDP1's SHARD_GRAD_OP; the data-parallel
  // scenario's keep_gathered): one gather a layer and micro-batch, the whole model held unsharded
  // at the backward's start. Zero 0-2 layouts, which gather nothing per layer, ignore it.
  bool keep_gathered = false;
  Zero2Accumulate zero2_accumulate = Zero2Accumulate::Sharded;  // zero 2 over several micro-batches
  MasterWeights master_weights = MasterWeights::Optimizer;  // where the FP32 master weights are
  // Each GPU's shard of the optimizer (the FP32 master weights and Adam's moments) kept and stepped
  // on its host (DeepSpeed's offload_optimizer with ZeRO 1-3, Megatron-Core's
  // --optimizer-cpu-offload): the reduced gradient shard goes down the GPU's host link, the host
  // updates it, and the BF16 weights come back (job_memory.hpp, optimizer_seconds).
  bool offload_optimizer = false;
  // The share of each GPU's shard offloaded, in (0, 1]: the rest stays and steps on the GPU beside
  // the host's part (Megatron-Core's --optimizer-offload-fraction, its HybridDeviceOptimizer).
  // Without offload_optimizer it is not used (a variant that turns offload off keeps it).
  double offload_fraction = 1.0;
  // The share of the optimizer on the GPU (1 without offload) and on the host.
  double optimizer_on_gpu() const { return offload_optimizer ? 1.0 - offload_fraction : 1.0; }
  double optimizer_on_host() const { return offload_optimizer ? offload_fraction : 0.0; }
  // The saved activations of the model's first N decoder layers copied to the host during the
  // forward and back during the backward, on a copy stream beside the compute (Megatron-Core's
  // --cpu-offloading --cpu-offloading-num-layers N, through Transformer Engine; without a pipeline
  // or recompute, as Megatron-Core requires; models/activation_offload.hpp). 0: none.
  int offload_activations = 0;
  bool cp_balanced = true;       // CP: 2 cp chunks, rank i takes i and 2cp-1-i (else contiguous)
  CpComm cp_comm = CpComm::P2p;  // CP: how the ranks exchange what attention needs
  ExpertPlacement expert_placement = ExpertPlacement::Contiguous;  // expert e on EP rank e / (E / ep), or e mod ep
  // Decoder layers of the pipeline's first and last model chunk, the others sharing the rest
  // evenly (-1: an even share). A lighter first chunk balances the embedding, a lighter last one
  // the LM head and loss (Llama 3 paper sec. 3.3.2: one layer fewer at each end of 126; with
  // one chunk per device Megatron-LM's --decoder-first/last-pipeline-num-layers).
  int first_chunk_layers = -1, last_chunk_layers = -1;
  // Selective recompute's modules (RecomputeModule bits): Megatron-Core's default, core_attn.
  std::uint8_t recompute_modules = kRecomputeCoreAttn;
  // The GEMMs' FP8 recipe, nullopt for BF16 GEMMs.
  std::optional<Fp8Recipe> fp8_gemms() const { return fp8 ? std::optional<Fp8Recipe>(fp8_recipe) : std::nullopt; }
  // Whether layer i of a model of `layers` runs in BF16 under FP8 GEMMs (bf16_first_layers,
  // bf16_last_layers).
  bool bf16_layer(int i, int layers) const { return fp8 && (i < bf16_first_layers || i >= layers - bf16_last_layers); }
  // The LM head's: as the layers' in FP8 (docs/job.md, the cost model's notes), BF16 under nvfp4,
  // whose autocast Megatron-Core opens around each decoder layer only (fp4_utils.get_fp4_context).
  std::optional<Fp8Recipe> head_gemms() const { return fp8_recipe == Fp8Recipe::Nvfp4 ? std::nullopt : fp8_gemms(); }
  // Whether TP collectives are pipelined with their GEMMs (Transformer Engine's userbuffers,
  // Megatron-Core --tp-comm-overlap, which needs sequence parallelism).
  bool tp_overlapped() const { return overlap_tp && sequence_parallel && tp > 1; }
  // fp8_param_gather where there are FP8 weights to keep (FP8 GEMMs, not NVFP4's) and an FP32
  // master to cast them from: below ZeRO-3 the optimizer's, the FP8 weights then gathered by the
  // distributed optimizer (zero 1-2) or by nothing (zero 0); under ZeRO-3 / FSDP either master,
  // each shard cast to FP8 before its gather (Megatron-FSDP's FP8 parameter shards beside the
  // optimizer's master; torchao's enable_fsdp_float8_all_gather on FSDP2's FP32 shards, the
  // master). Elsewhere it changes nothing, as bf16_first_layers without fp8 (a variant in BF16 of
  // an FP8 base).
  bool fp8_params() const {
    return fp8_param_gather && fp8 && fp8_recipe != Fp8Recipe::Nvfp4 &&
           (zero >= 3 || master_weights == MasterWeights::Optimizer);
  }
  bool recomputes(RecomputeModule m) const { return recompute == JobRecompute::Selective && (recompute_modules & m); }
  // With full recompute, only the first N layers of each chunk are recomputed, the others keep
  // their activations (Megatron-LM's --recompute-method block --recompute-num-layers N). -1: all.
  int recompute_layers = -1;
  // `recompute_layers: auto`: the fewest that fit (models/job_memory.hpp fewest_recomputed_layers,
  // set in recompute_layers before the run), one more while the simulated peak is over
  // (run_job_step).
  bool fewest_recompute = false;
  // `offload_fraction: auto`: the smallest share of the optimizer on the host that fits the GPU
  // (models/job_memory.hpp smallest_offload_fraction, set in offload_fraction before the run).
  bool smallest_offload = false;
  // `offload_activations: auto`: the fewest layers on the host that fit the GPU (models/job_memory.hpp
  // fewest_offloaded_layers, set in offload_activations before the run), one more while the
  // simulated peak is over (run_job_step).
  bool fewest_offloaded = false;
  // Whether some layers are recomputed whole and others not (recompute_layers under full).
  bool partial_recompute() const { return recompute == JobRecompute::Full && recompute_layers >= 0; }
  bool operator==(const JobLayout&) const = default;
  int ranks() const { return tp * pp * dp * cp; }
  std::int64_t microbatches() const { return global_batch / (static_cast<std::int64_t>(micro_batch) * dp); }
  // Model chunks per device: v for interleaved 1F1B, 2 for DualPipe-V (its V shape), else 1.
  int chunks_per_device() const { return schedule == "dualpipe-v" ? 2 : vpp; }
  // Devices of one pipeline holding each chunk: 2 for DualPipe (both directions hold every
  // stage: device d holds stages d and pp-1-d, DeepSeek-V3 report sec. 3.2.1), else 1.
  int stage_copies() const { return schedule == "dualpipe" ? 2 : 1; }
  // Ranks holding the same weights and reducing their gradients together: DP and CP ranks, and
  // DualPipe's two copies of each stage.
  int weight_replicas() const { return dp * cp * stage_copies(); }
  // Ranks holding the same experts: the ep ranks of an expert-parallel group hold different
  // ones, so each expert is on weight_replicas / ep of them (Megatron-Core's expert data-parallel
  // group, ep x edp = dp x cp; the layout check makes ep divide dp x cp).
  // Folded, the tp x cp x dp ranks of a stage split into expert TP x EP x expert DP (Megatron-
  // Core's expert grid): each expert on tp x weight_replicas / (etp x ep) of them.
  int expert_replicas() const {
    return static_cast<int>(static_cast<std::int64_t>(weight_replicas()) * (tp / etp()) / ep);
  }
  // The ranks ZeRO shards a weight's state over: its replicas in one of the dp_replicate groups
  // (the layout check makes dp_replicate divide dp, and the expert replicas).
  int zero_shards() const { return weight_replicas() / dp_replicate; }
  // Whether the gradients are held sharded through the step (zero 2 accumulating whole holds
  // them whole until its one reduce-scatter, as zero 1 does).
  bool gradients_sharded() const {
    return zero >= 3 || (zero == 2 && (zero2_accumulate == Zero2Accumulate::Sharded || microbatches() <= 1));
  }
  // Whether each micro-batch's gradients are reduce-scattered as they are made (zero 2
  // accumulating the shard, over more than one micro-batch), not once a step.
  bool reduces_every_micro_batch() const {
    return zero == 2 && zero2_accumulate == Zero2Accumulate::Sharded && microbatches() > 1;
  }
  int expert_zero_shards() const { return expert_replicas() / dp_replicate; }
};

// HSDP's replicas when each shard group is one node's data-parallel ranks (PyTorch FSDP's
// HYBRID_SHARD default: shard inside the node, replicate across): dp / (gpus_per_node / (tp cp));
// 1 when the node does not hold whole tp x cp groups, holds one data-parallel rank (nothing to
// shard among), or dp does not split so.
inline int dp_replicate_per_node(const JobLayout& l, int gpus_per_node) {
  const std::int64_t group = std::int64_t{l.tp} * l.cp;
  if (group <= 0 || gpus_per_node % group != 0) return 1;
  const std::int64_t shard = gpus_per_node / group;
  return shard > 1 && shard < l.dp && l.dp % shard == 0 ? static_cast<int>(l.dp / shard) : 1;
}

// The tokens one GPU's layers see per micro-batch: its sequences, split by CP.
inline double tokens_on_gpu(const JobModel& m, const JobLayout& l) {
  return static_cast<double>(l.micro_batch) * static_cast<double>(m.seq) / l.cp;
}

// An upper bound on the ops one step of `l` simulates, before it is built (docs/limits.md): per
// pipeline chunk copy and micro-batch a forward, a backward, a weight gradient, two sends and
// in-pass collectives (8); for ZeRO-3 (the data-parallel lowering) per layer and micro-batch a
// gather, the passes and a reduction (6).
inline double job_step_ops_bound(const JobLayout& l, std::int64_t layers) {
  const double m = static_cast<double>(l.global_batch) / std::max<std::int64_t>(1, std::int64_t{l.micro_batch} * l.dp);
  return m * (8.0 * l.pp * l.chunks_per_device() * l.stage_copies() + 6.0 * static_cast<double>(layers));
}

// The layers a full recompute reruns, as the reports say it after "recompute full": " (the
// first 2 layers of each chunk)", with ", the fewest that fit" where recompute_layers: auto chose
// them, " (no layer: ...)" / " (every layer: ...)" where auto chose none or all; "" otherwise.
std::string recomputed_layers_note(const JobLayout& l);
// Where the optimizer steps, as the reports say it: "optimizer on the host", "61 % of the
// optimizer on the host"; "" without offload_optimizer.
std::string offload_words(const JobLayout& l);

// Decoder layers of each model chunk in pipeline order (pp x chunks_per_device of them): the
// first and last as the layout sets them, the others an even share of the rest (the first ones
// one more while they do not divide; check_layout refuses that unless the ends are even too).
std::vector<int> chunk_layer_counts(int layers, const JobLayout& l);

// The chunks (indices along the model, 0 .. pp x chunks_per_device - 1) each pipeline device
// holds, ascending: interleaved d, d + pp, ...; DualPipe-V d and 2pp-1-d; DualPipe d and pp-1-d.
std::vector<std::vector<int>> device_chunks(const JobLayout& l);

// An MoE model's dense layers as a model of their own: the same shape, a dense MLP.
JobModel dense_layer_model(const JobModel& m);
// How many of the decoder layers [first, first + count) are dense (an MoE model's first
// dense_layers, or its hybrid pattern's - layers; every layer of a dense model).
int dense_layers_in(const JobModel& m, int first, int count);

// A windowed or hybrid model's layers of each kind as models of their own: every layer windowed;
// every layer Gated DeltaNet; every layer softmax attention over its whole causal context.
JobModel windowed_layer_model(const JobModel& m);
JobModel linear_layer_model(const JobModel& m);
JobModel full_attention_layer_model(const JobModel& m);
// How many of the decoder layers [first, first + count) are Gated DeltaNet layers.
int linear_layers_in(const JobModel& m, int first, int count);
// A hybrid pattern's symbols and what each layer is, in the order reports give them:
// M Mamba-2, * attention, - MLP, E MoE.
const std::vector<std::pair<char, const char*>>& hybrid_pattern_blocks();
// How many of the decoder layers [first, first + count) are a hybrid pattern's `symbol` layers.
int pattern_layers_in(const JobModel& m, char symbol, int first, int count);

// A decoder layer's kind, as bits: what its costs depend on in the model. Dense (an MoE model's
// dense first layers or a hybrid pattern's MLP layers; every layer of a dense model), windowed
// (sliding-window attention), linear (Gated DeltaNet), Mamba-2, and a hybrid pattern's layer of
// one block: the mixer only, or the MLP only. (Bits 2 and 8 are LayerStack's, of the layout.)
enum LayerKindBit : int {
  kKindDense = 1,
  kKindWindowed = 4,
  kKindLinear = 16,
  kKindMamba = 32,
  kKindMixerOnly = 64,
  kKindMlpOnly = 128,
  kKindBits = 256,  // kinds are below this
};
int layer_kind(const JobModel& m, int i);
// The kind's layer as a model of its own, every layer of that kind.
JobModel layer_kind_model(const JobModel& m, int kind);
// How many of the decoder layers [first, first + count) attend within a sliding window.
int windowed_layers_in(const JobModel& m, int first, int count);

// The layout a layer kept in BF16 under FP8 GEMMs runs (bf16_first_layers, bf16_last_layers):
// every FP8 setting off, its dispatch too (its experts' inputs are BF16).
JobLayout bf16_layer_layout(const JobLayout& l);
// Whether any of the model's layers runs its GEMMs in FP8, of the dense ones (an MoE model's first
// layers; every layer of a dense model) or of the MoE ones.
bool has_fp8_layer(const JobModel& m, const JobLayout& l, bool dense);

// Adam's state per parameter: the FP32 master weight where the optimizer keeps it and the two
// moments (12 B in FP32; DeepSeek-V3 sec. 3.3.3 and Megatron-Core's precision-aware optimizer
// keep the moments in BF16).
inline int adam_state_bytes(const JobLayout& l) {
  return (l.master_weights == MasterWeights::Optimizer ? 4 : 0) + 2 * l.adam_moment_bytes;
}
// The model's weights per parameter: BF16 beside the optimizer's master, or FP32 as the master.
inline int weight_bytes(const JobLayout& l) { return l.master_weights == MasterWeights::Optimizer ? 2 : 4; }
// The gradients a GPU keeps for the optimizer, per parameter: as reduced (grad_bytes: Megatron's
// main grads), or, where the FP32 weights are the master, in FP32 whatever the reduction's type
// (PyTorch FSDP casts each reduced shard back to its parameter's dtype; DDP's are the weights').
inline int kept_grad_bytes(const JobLayout& l) { return l.master_weights == MasterWeights::Model ? 4 : l.grad_bytes; }
// Whether each forward casts the FP32 weights it computes with to BF16 (PyTorch autocast): zero
// 0-2 keep whole weights; ZeRO-3 casts its shard before each gather, 1/dp of that (not counted).
inline bool casts_weights_per_pass(const JobLayout& l) {
  return l.master_weights == MasterWeights::Model && l.zero < 3;
}

}  // namespace stepsim
