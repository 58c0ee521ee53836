#pragma once
// Per-layer costs of a transformer job from first principles: a model shape, a parallel layout
// and a cluster give each pipeline chunk's forward, backward-input and backward-weight times
// (compute split into GEMMs, attention and memory-bound kernels, plus the TP / CP / EP
// communications that sit between them), the bytes its collectives move, and the FLOPs that MFU
// and HFU count. Pure functions; the lowering (schedules/lowering/job/) turns them into ops.
//
// Sources (cited again where used):
//  * GEMM FLOPs, 2 x m x n x k per multiply; backward = input gradient + weight gradient, each as
//    large as the forward (Narayanan et al. SC21, sec. 5.1 / appendix: F = 96 B s l h^2 (1 + s/6h
//    + V/16lh) counts 4 passes with full recompute).
//  * Attention core 4 x s_q x s_kv x d per layer forward (QK^T and AV); FlashAttention skips the
//    masked half of a causal sequence: s (s + 1) / 2 pairs (figure 10-28/29); the unfused
//    Megatron kernels of 2021-22 compute the full s x s scores and then mask them.
//  * Tensor parallelism: two all-reduces of b s h per layer forward and two backward (Shoeybi
//    et al. 2019, Megatron-LM, sec. 3); with sequence parallelism the same bytes as all-gather +
//    reduce-scatter, and LayerNorm/dropout work divided by t (Korthikanti et al. 2022, sec. 4.2.2).
//  * Activation bytes per layer: s b h (34 + 5 a s / h) without parallelism, s b h (10 + 24/t +
//    5 a s / (h t)) with TP, s b h / t (34 + 5 a s / h) with TP + SP, 34 s b h / t with selective
//    recompute and SP, 2 s b h (/ t with SP) for the layer input kept by full recompute
//    (Korthikanti et al. 2022, sec. 4, eq. 1-2, Table 2).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/accelerators.hpp"
#include "models/collectives.hpp"
#include "models/moe_routing.hpp"
#include "models/transformer.hpp"

namespace stepsim {

enum class AttentionKernel : std::uint8_t { Flash, Unfused };
enum class JobRecompute : std::uint8_t { None, Selective, Full };
// The names inputs and reports use (job_step YAML, measured-runs CSV, search results); nullopt
// for a name that is none of them.
const char* recompute_name(JobRecompute r);
std::optional<JobRecompute> recompute_from_name(std::string_view name);
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
std::optional<AttentionKernel> attention_from_name(std::string_view name);

struct JobModel {
  TransformerConfig shape;  // layers, hidden, intermediate (= FFN), heads, kv_heads, head_dim, vocab, tied
  std::int64_t seq = 2048;
  bool gated_mlp = true;  // SwiGLU (3 matrices) vs GeLU (2 matrices)
  int experts = 0;        // MoE: routed experts per layer (0: dense)
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
  };
  Mla mla;
  bool latent_attention() const { return mla.kv_lora_rank > 0; }
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
};

// How an MoE layer's tokens reach their experts' GPUs (and come back).
enum class EpDispatch : std::uint8_t {
  AllToAll,  // every routed copy to its expert's GPU (Megatron-Core's all-to-all token dispatcher)
  PerNode,   // once per destination node over the network, then over NVLink inside it (DeepEP)
};
const char* ep_dispatch_name(EpDispatch d);
std::optional<EpDispatch> ep_dispatch_from_name(std::string_view name);

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
  bool fp8 = false;                  // GEMMs at the FP8 peak
  EpDispatch ep_dispatch = EpDispatch::AllToAll;  // how MoE tokens reach their experts' GPUs
  bool permute_fusion = false;                    // MoE token shuffles fused (Megatron-Core --moe-permute-fusion)
  bool fp8_dispatch = false;                      // tokens dispatched in FP8 (combined in BF16)
  bool fp8_activations = false;                   // FP8 GEMMs keep their inputs for the backward in FP8
  int grad_bytes = 4;                             // bytes per gradient element reduced (Megatron: FP32 main grads)
  int adam_moment_bytes = 4;                      // bytes of each of Adam's m and v per parameter (FP32; BF16 2)
  bool cp_balanced = true;                        // CP: 2 cp chunks, rank i takes i and 2cp-1-i (else contiguous)
  CpComm cp_comm = CpComm::P2p;                   // CP: how the ranks exchange what attention needs
  ExpertPlacement expert_placement = ExpertPlacement::Contiguous;  // expert e on EP rank e / (E / ep), or e mod ep
  // Decoder layers of the pipeline's first and last model chunk, the others sharing the rest
  // evenly (-1: an even share). A lighter first chunk balances the embedding, a lighter last one
  // the LM head and loss (Llama 3 paper sec. 3.3.2: one layer fewer at each end of 126; with
  // one chunk per device Megatron-LM's --decoder-first/last-pipeline-num-layers).
  int first_chunk_layers = -1, last_chunk_layers = -1;
  // Selective recompute's modules (RecomputeModule bits): Megatron-Core's default, core_attn.
  std::uint8_t recompute_modules = kRecomputeCoreAttn;
  // Whether TP collectives are pipelined with their GEMMs (Transformer Engine's userbuffers,
  // Megatron-Core --tp-comm-overlap, which needs sequence parallelism).
  bool tp_overlapped() const { return overlap_tp && sequence_parallel && tp > 1; }
  bool recomputes(RecomputeModule m) const { return recompute == JobRecompute::Selective && (recompute_modules & m); }
  // With full recompute, only the first N layers of each chunk are recomputed, the others keep
  // their activations (Megatron-LM's --recompute-method block --recompute-num-layers N). -1: all.
  int recompute_layers = -1;
  // Whether some layers are recomputed whole and others not (recompute_layers under full).
  bool partial_recompute() const { return recompute == JobRecompute::Full && recompute_layers >= 0; }
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
};

// An upper bound on the ops one step of `l` simulates, before it is built (docs/limits.md): per
// pipeline chunk copy and micro-batch a forward, a backward, a weight gradient, two sends and
// in-pass collectives (8); for ZeRO-3 (the data-parallel lowering) per layer and micro-batch a
// gather, the passes and a reduction (6).
inline double job_step_ops_bound(const JobLayout& l, std::int64_t layers) {
  const double m = static_cast<double>(l.global_batch) / std::max<std::int64_t>(1, std::int64_t{l.micro_batch} * l.dp);
  return m * (8.0 * l.pp * l.chunks_per_device() * l.stage_copies() + 6.0 * static_cast<double>(layers));
}

// Decoder layers of each model chunk in pipeline order (pp x chunks_per_device of them): the
// first and last as the layout sets them, the others an even share of the rest (the first ones
// one more while they do not divide; check_layout refuses that unless the ends are even too).
std::vector<int> chunk_layer_counts(int layers, const JobLayout& l);

// The chunks (indices along the model, 0 .. pp x chunks_per_device - 1) each pipeline device
// holds, ascending: interleaved d, d + pp, ...; DualPipe-V d and 2pp-1-d; DualPipe d and pp-1-d.
std::vector<std::vector<int>> device_chunks(const JobLayout& l);

// One pass of one chunk for one micro-batch on one GPU, in seconds (double: summed over layers
// once, then rounded to integer nanoseconds by the lowering).
struct PassSeconds {
  double gemm = 0, attention = 0, memory = 0;  // compute, by kind of kernel
  double host = 0;                             // the stream waiting on the host (moe_host)
  double tp = 0, cp = 0, ep = 0;               // exposed communication inside the pass
  // The GPU busy, and the compute stream's time (its kernels and its waits on the host).
  double kernels() const { return gemm + attention + memory; }
  double compute() const { return kernels() + host; }
  double comm() const { return tp + cp + ep; }
  PassSeconds& operator+=(const PassSeconds& o);
};
PassSeconds operator*(PassSeconds p, double k);
PassSeconds operator+(PassSeconds a, const PassSeconds& b);

struct ChunkCost {
  int layers = 0;
  bool first = false, last = false;                      // holds the embedding / the LM head
  PassSeconds forward, backward_input, backward_weight;  // recompute inside backward_input
  std::int64_t parameters = 0;                           // held by one GPU of this chunk
  std::int64_t expert_parameters = 0;                    // of those, MoE expert weights
  Bytes activation = 0;                                  // kept per micro-batch until its backward
};

// One GEMM of a pass, C[m x n] = A[m x k] B[k x n], or `count` of them launched together (an MoE
// layer's local experts as one grouped GEMM).
// The module a GEMM belongs to, for selective recompute (RecomputeModule).
enum class GemmPart : std::uint8_t { Attention, MlaUpProj, Router, Experts, SharedExperts, Mlp };
// How TP splits a GEMM (Shoeybi et al. 2019 sec. 3): by output columns (its input gathered
// with sequence parallelism), by input rows (its output reduced or reduce-scattered), or not.
enum class TpSplit : std::uint8_t { None, Column, Row };
struct GemmShape {
  double m = 0, n = 0, k = 0;
  double count = 1;
  GemmPart part = GemmPart::Attention;
  TpSplit split = TpSplit::None;
};
// The backward of Y[m x n] = X[m x k] W[k x n] computes dX[m x k] = dY W^T (inner n) and
// dW[k x n] = X^T dY (inner m): as many FLOPs, other output shapes.
enum class GemmPass : std::uint8_t { Forward, InputGrad, WeightGrad };

// Tile and wave quantization (NVIDIA, "Matrix Multiplication Background User's Guide", sections
// "Tile quantization" and "Wave quantization"): the m x n output is computed in tile_m x tile_n
// tiles, each SM one tile at a time, so a partial tile costs a whole one and the last wave of
// ceil(tiles / sms) leaves SMs idle. Returns the useful share of the occupied tile slots,
// (count m n / (tile_m tile_n)) / (waves x sms), in (0, 1]; 1 when the tiling is not modelled.
double gemm_wave_efficiency(double m, double n, double count, const GemmTiling& g);
// The bytes an FP8 recipe's casts move in one pass (Transformer Engine's cast_transpose: read the
// BF16 tensor, write its FP8 copy and the transposed copy the weight gradient reads, 4 B per
// element): forward, the inputs of row-parallel GEMMs (the projection, the MLP's and the experts'
// second GEMMs: another kernel's output; a column-parallel GEMM's input is cast inside the norm
// or the dispatch before it, except the routed experts' first GEMM's after a BF16 dispatch,
// `fp8_dispatch` false, which Transformer Engine's grouped linear casts itself); input gradient,
// every GEMM's output gradient. The router stays BF16. What the casts cost is the bytes over
// HBM, as any memory-bound kernel.
double fp8_cast_bytes(const std::vector<GemmShape>& gemms, GemmPass pass, bool fp8_dispatch);
// Seconds of `gemms` in one pass: each one's 2 m n k x count FLOPs / (peak x efficiency.gemm x
// its wave efficiency); efficiency.gemm is what quantization leaves unexplained (fitted).
double gemm_seconds(const std::vector<GemmShape>& gemms, GemmPass pass, const AcceleratorSpec& a, bool fp8);

// An MoE model's dense first layers as a model of their own: the same shape, a dense MLP.
JobModel dense_layer_model(const JobModel& m);
// Whether the model has two kinds of layer: MoE, with dense first layers.
inline bool has_dense_first_layers(const JobModel& m) { return m.experts > 0 && m.dense_layers > 0; }
// How many of the decoder layers [first, first + count) are dense (an MoE model's first
// dense_layers; every layer of a dense model).
int dense_layers_in(const JobModel& m, int first, int count);

struct LayerWork {  // one decoder layer, one micro-batch, one GPU, forward only
  // The GEMMs, forward shapes: QKV, output projection, MLP in, MLP out (MoE: router, experts);
  // gemm_flops is their sum.
  std::vector<GemmShape> gemms;
  double gemm_flops = 0, attention_flops = 0, memory_bytes = 0;
  double tp_bytes = 0;     // bytes of each of the TP collectives (full buffer)
  int tp_collectives = 0;  // per forward (all-reduces, or AG+RS pairs with SP)
  double cp_bytes = 0;     // this GPU's K and V chunk: what one ring step passes (CP)
  double cp_q_bytes = 0;   // this GPU's Q chunk (CP all-to-all: exchanged with K and V)
  double cp_o_bytes = 0;   // this GPU's attention output chunk (CP all-to-all: exchanged back)
  double ep_tokens = 0;    // tokens each EP member exchanges, x expert_load (0: no EP all-to-all)
  // Folded expert TP: the routed experts' gather and reduce-scatter, among moe_tp_members ranks
  // (0: none, or the MoE block's collective is one of tp_collectives, unfolded).
  double moe_tp_bytes = 0;
  int moe_tp_members = 0;
  // Of memory_bytes, what selective recompute's modules rerun: the two norms, and the activation
  // function of the routed experts, the shared experts and a dense MLP; the MoE block's token
  // permute and unpermute (rerun with the moe module).
  double norm_bytes = 0, expert_act_bytes = 0, shared_act_bytes = 0, mlp_act_bytes = 0, permute_bytes = 0;
  // The shuffles' backward bytes: fused, each kernel's transpose and the copies read again; unfused
  // 1.5 x permute_bytes, as any memory-bound kernel's.
  double permute_backward_bytes = 0;
  std::int64_t parameters = 0;         // held by one GPU
  std::int64_t expert_parameters = 0;  // of those, MoE expert weights (replicated over fewer ranks)
};
// `expert_load` scales the routed experts' rows (their GEMMs, activation function and token
// exchange): expert_rank_load's busiest for a step's time, its computed for hardware FLOPs.
// `ep_per_node` (GroupPaths::ep_per_node) places the EP ranks for DeepEP's fused permute.
LayerWork layer_work(const JobModel& m, const JobLayout& l, double expert_load = 1, int ep_per_node = 1);

// Seconds of a ring collective of `bytes` among `members` on a path: (n-1) or 2(n-1) steps of
// latency plus the ring's bytes over the bandwidth (models/collectives.hpp).
double ring_seconds(Collective c, int members, double bytes, const PathBandwidth& path);
// A collective as NCCL runs it: the ring, except an all-reduce across nodes, which NCCL's tuner
// gives to its double binary trees when they are faster (Sanders, Speck & Traeff 2009; NVIDIA,
// "Massively Scale Your Deep Learning Training with NCCL 2.4", 2019): 2 ceil(log2 n) steps of
// latency instead of 2 (n - 1), each member sending and receiving the whole buffer twice
// (2 S / B against the ring's 2 (n - 1) / n S / B). Trees win on small buffers over many nodes.
double collective_seconds(Collective c, int members, double bytes, const PathBandwidth& path);

// The network path of each group: nodes spanned by TP (stride 1), CP (stride tp), EP, DP
// (stride tp*cp) and PP (stride tp*cp*dp) groups, ranks ordered tp, cp, dp, pp (Megatron).
struct GroupPaths {
  PathBandwidth tp, cp, ep, dp, pp;
  PathBandwidth edp;       // the expert data-parallel group: ranks ep data-parallel ranks apart
  PathBandwidth ep_intra;  // between the EP members on one node (the fabric)
  PathBandwidth etp;       // the routed experts' TP group (= tp unless folded)
  int ep_per_node = 1;     // EP members on one node
};
GroupPaths group_paths(const ClusterSpec& c, const JobLayout& l);

// Transformer Engine's TP communication overlap (Megatron-Core --tp-comm-overlap; Wang et al.,
// ASPLOS'23, "Overlap Communication with Dependent Computation via Decomposition"): a
// column-parallel GEMM takes its all-gathered input in tp chunks, computing on one while the
// next arrives, and a row-parallel GEMM's output is reduce-scattered chunk by chunk as it is
// computed. tp GEMM chunks of gemm / tp beside tp - 1 ring steps of collective / (tp - 1): the
// collective shows for (tp - 1) x max(0, collective / (tp - 1) - gemm / tp) (seconds).
double pipelined_tp_exposed(double collective, double gemm, int tp);
// One layer pass's TP communication, seconds: what shows of the collectives that wait (plain; in
// the input-gradient pass half of them partly under the weight gradients), what shows of those
// pipelined with their GEMMs (layout.tp_overlapped(): the attention block's and a dense MLP's,
// in the forward and input-gradient passes), and the time these run under their GEMMs.
struct TpExposure {
  double plain = 0, pipelined = 0, hidden = 0;
};
TpExposure tp_exposure(const LayerWork& w, const JobLayout& l, const ClusterSpec& c, const GroupPaths& paths,
                       GemmPass pass);

// What the router leaves on the EP ranks, per micro-batch: the ep x T tokens of an EP group (T
// on each rank) routed by `m.routing` over the experts placed by `l.expert_placement`
// (route_experts, card_rows). Every EP rank of a layer waits for the busiest at the combine, so
// the step runs at that rank's rows. Balanced dropless routing is the mean on every rank, 1.
struct ExpertRankLoad {
  double busiest = 1;                    // the busiest EP rank's computed rows / the mean rank's routed rows (T top_k)
  double computed = 1;                   // all ranks' computed rows / the routed rows (> 1: capacity padding)
  double dropped = 0;                    // share of the routed rows dropped past the capacity
  std::optional<std::int64_t> capacity;  // rows per expert, with a capacity factor
  std::int64_t tokens = 0;               // the group's tokens routed (0: even routing, not routed)
};
// Throws MoeInputError for a routing that cannot be (check_layout reports it at its key).
ExpertRankLoad expert_rank_load(const JobModel& m, const JobLayout& l);

// One leg of an MoE layer's token exchange (the dispatch, or the combine) for `tokens` tokens
// of h elements at `element_bytes`, by where its bytes go: to EP members on the same node over
// the fabric, to the others over the network, both at once (the slower sets the time), plus
// (ep - 1) steps of latency. The routed experts are drawn evenly (`tokens`: the busiest EP rank's,
// load x T, under skewed routing). `l.ep_dispatch` decides what
// crosses the network: every remote copy, or one per remote node holding one of the token's
// experts (at most `m.node_limit` nodes), forwarded inside the node.
double ep_leg_seconds(const JobModel& m, const JobLayout& l, const GroupPaths& paths, double tokens,
                      double element_bytes);
// Where one token goes under DeepEP's per-node dispatch over n EP ranks, `local` per node: the
// nodes its experts are drawn from, and the chance that a given one of those nodes, and a given
// GPU on one, receives it (node_limit or device_limit; ep_leg_seconds). ranks(): the EP ranks it
// reaches, its own included.
struct TokenReceipt {
  double chosen_nodes = 1, node = 1, gpu = 1;
  int local = 1, ranks_in_group = 1;
  // The ranks a token reaches: of the chosen nodes' GPUs (not past the group's: an EP group that
  // is not a whole number of nodes has a last node partly outside it), each with `gpu`.
  double ranks() const { return std::min(chosen_nodes * local, static_cast<double>(ranks_in_group)) * gpu; }
};
TokenReceipt per_node_receipt(const JobModel& m, int n, int local);

// One decoder layer's passes on one GPU for one micro-batch, with recompute in the backward
// (an MoE model's MoE layer; dense_layer_model for its dense ones).
struct LayerPasses {
  PassSeconds forward, backward_input, backward_weight;
  Bytes activation = 0;  // kept per micro-batch
};
LayerPasses layer_passes(const JobModel& m, const JobLayout& l, const ClusterSpec& c);
// An MoE layer's MoE block alone (router, permute, dispatch, routed and shared experts, combine,
// unpermute) on the busiest EP rank for one micro-batch, without recompute: what a benchmark of
// Megatron-Core's MoELayer times by itself. All zero for a dense model.
LayerPasses moe_block_passes(const JobModel& m, const JobLayout& l, const ClusterSpec& c);

// A model's decoder layers on one GPU, each kind costed once (its own layers and an MoE model's
// dense first ones): layers(first, count) sums the layers [first, first + count) as a chunk
// without embedding or head (first and last false).
class LayerStack {
 public:
  LayerStack(const JobModel& m, const JobLayout& l, const ClusterSpec& c);
  ChunkCost layers(int first, int count) const;

 private:
  struct Kind {
    LayerPasses passes;
    std::int64_t parameters = 0, expert_parameters = 0;
  };
  Kind kind_of(const JobModel& m, const JobLayout& l, const ClusterSpec& c) const;
  JobModel model_;
  Kind own_, dense_;
  // Partial recompute: the kinds without recompute, and per layer whether it is recomputed.
  Kind own_kept_, dense_kept_;
  std::vector<bool> recomputed_;
};

// Per layer, whether the layout recomputes it: every layer under full recompute, the first
// recompute_layers of each chunk under partial recompute, none otherwise.
std::vector<bool> recomputed_layers(int layers, const JobLayout& l);

// Chunks in pipeline order (pp x vpp of them): layers dealt by chunk_layer_counts (an MoE
// model's dense first layers in the first chunks), embedding on the first, LM head and loss on
// the last.
std::vector<ChunkCost> chunk_costs(const JobModel& m, const JobLayout& l, const ClusterSpec& c);

// FLOPs of one step, whole job: model FLOPs (6 N-style: forward + backward, no recompute) and
// hardware FLOPs (with the recomputed forward work), both including attention.
struct StepFlops {
  double model = 0, hardware = 0;
};
StepFlops step_flops(const JobModel& m, const JobLayout& l);

// Parameters of the whole model (dense count; MoE counts every expert).
std::int64_t total_parameters(const JobModel& m);

// The parameters one GPU holds, by the ranks that hold them too: dense weights are on every
// one of weight_replicas(), an expert's on expert_replicas(). ZeRO shards each over its own
// replicas, and the data-parallel collectives run over each group.
struct HeldParameters {
  std::int64_t dense = 0, expert = 0;
};
HeldParameters held_parameters(const ChunkCost& chunk);
HeldParameters held_parameters(const std::vector<int>& chunks_held, const std::vector<ChunkCost>& chunks);
// Bytes per GPU of a state of `p` (weights, gradients, Adam's) at `bytes_per_parameter`: each
// part divided by its replicas when ZeRO shards that state, else whole.
double state_bytes(const HeldParameters& p, const JobLayout& l, double bytes_per_parameter, bool sharded);
// A data-parallel collective of `bytes_per_parameter` x `p`: the dense part over the
// weight replicas, then the expert part over the expert replicas, back to back (seconds).
double replica_collective_seconds(Collective c, const HeldParameters& p, double bytes_per_parameter, const JobLayout& l,
                                  const GroupPaths& paths);
// What one member sends of such a gather or reduce-scatter: (n - 1) / n of each part, n its
// replicas.
Bytes replica_collective_bytes(const HeldParameters& p, double bytes_per_parameter, const JobLayout& l,
                               std::string_view what);

// Memory per GPU of one pipeline rank, bytes.
struct JobMemory {
  Bytes weights = 0, gradients = 0, optimizer = 0, activations = 0, buffers = 0;
  int device = 0;  // the pipeline rank
  Bytes total() const { return weights + gradients + optimizer + activations + buffers; }
};
// Chunk activations (one chunk, one micro-batch) the first pipeline device holds at its peak,
// by schedule: 1F1B and ZB-H1 min(m, pp); ZB-H2 min(m, 2pp - 1); GPipe m; interleaved Megatron's
// warm-up forwards and one, min(m v, pp v + pp - 1) (in layers L (1 + (pp-1)/(pp v)),
// Korthikanti sec. 4.2.3); DualPipe pp + 1 stages (DeepSeek-V3 report Table 2), DualPipe-V
// 2pp + 1 chunks; 1 for ZeRO-3 (the data-parallel lowering runs each micro-batch through).
std::int64_t chunks_in_flight(const JobLayout& l);
// The activations one layer keeps per micro-batch on one GPU (Korthikanti 2022 sec. 4.1's count
// for the layer's shapes, with its TP, SP, selective and full-recompute forms).
Bytes layer_activation_bytes(const JobModel& m, const JobLayout& l);
// The most loaded pipeline rank (the largest total; the lowest rank on ties): its weights,
// gradients and optimizer state from the chunks it holds, its activations, its buffers (the
// LM head's FP32 logits where the head is; ZeRO-3's gathered layers; full recompute's rebuilt
// layer). `activation_peaks`: each rank's simulated peak, or empty for the analytic figure:
// chunks_in_flight x the smallest chunk of rank 0, none on the others (a lower bound).
JobMemory job_memory(const JobModel& m, const JobLayout& l, const std::vector<ChunkCost>& chunks,
                     const std::vector<Bytes>& activation_peaks = {});

// Adam's state per parameter: the FP32 master weight and the two moments (12 B in FP32;
// DeepSeek-V3 sec. 3.3.3 and Megatron-Core's precision-aware optimizer keep the moments in BF16).
inline int adam_state_bytes(const JobLayout& l) { return 4 + 2 * l.adam_moment_bytes; }
// Optimizer step seconds (Adam): HBM traffic of the GPU's shard, the state and an FP32 gradient
// read, the state and a BF16 weight copy written: 16 + 14 bytes per parameter with FP32 moments.
double optimizer_seconds(const JobLayout& l, const ClusterSpec& c, const HeldParameters& params_on_gpu);

}  // namespace stepsim
