#pragma once
// Per-layer costs of a transformer job from first principles: a model shape, a parallel layout
// and a cluster give each pipeline chunk's forward, backward-input and backward-weight times
// (compute split into GEMMs, attention and memory-bound kernels, plus the TP / CP / EP
// communications that sit between them), the bytes its collectives move, and the FLOPs that MFU
// and HFU count. Pure functions; the lowering (schedules/lowering/job/) turns them into ops.
// What they read lives beside them, one purpose a file: the job (job_spec.hpp), a GEMM's time
// (gemm_costs.hpp), the groups' paths and collectives (comm_paths.hpp), the expert exchange
// (expert_exchange.hpp), a Gated DeltaNet or Mamba-2 mixer (recurrent_mixer.hpp); what a GPU
// holds is job_memory.hpp's.
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
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "models/accelerators.hpp"
#include "models/activation_offload.hpp"
#include "models/attention_kernels.hpp"
#include "models/comm_paths.hpp"
#include "models/expert_exchange.hpp"
#include "models/gemm_costs.hpp"
#include "models/job_spec.hpp"

namespace stepsim {

// One pass of one chunk for one micro-batch on one GPU, in seconds (double: summed over layers
// once, then rounded to integer nanoseconds by the lowering).
struct PassSeconds {
  double gemm = 0, attention = 0, memory = 0;  // compute, by kind of kernel
  double host = 0;                             // the stream waiting on the host (MoE host waits)
  double offload = 0;  // the stream waiting on activations' copies to or from the host (offload_activations)
  double tp = 0, cp = 0, ep = 0;               // exposed communication inside the pass
  // The GPU busy, and the compute stream's time (its kernels and its waits on the host).
  double kernels() const { return gemm + attention + memory; }
  double compute() const { return kernels() + host + offload; }
  double comm() const { return tp + cp + ep; }
  PassSeconds& operator+=(const PassSeconds& o);
};
PassSeconds operator*(PassSeconds p, double k);
PassSeconds operator+(PassSeconds a, const PassSeconds& b);

struct ChunkCost {
  int layers = 0;
  bool first = false, last = false;                      // holds the embedding / the LM head
  PassSeconds forward, backward_input, backward_weight;  // recompute inside backward_input
  PassSeconds deferred_weight_grad;                      // LayerPasses' of its layers, summed
  std::int64_t parameters = 0;                           // held by one GPU of this chunk
  std::int64_t expert_parameters = 0;                    // of those, MoE expert weights
  // Of parameters, a copy of the first chunk's embedding (V h / tp) the last chunk keeps for a
  // tied LM head or the prediction modules' shared embedding: the same tensor on a device that
  // also holds the first chunk (DualPipe's device 0), counted once there (held_parameters).
  std::int64_t embedding_copy = 0;
  // Of parameters, the weights of the chunk's linear modules, what FP8 GEMMs compute with
  // (LayerWork::gemm_weights by layer but of those kept in BF16, and a prediction module's
  // projection).
  std::int64_t gemm_weights = 0;
  // Bytes per such weight of the FP8 GEMMs' cached copies on this accelerator (0 without FP8;
  // models/job_memory.hpp, fp8_weight_copy_bytes).
  double fp8_copy_bytes = 0;
  Bytes activation = 0;  // kept per micro-batch until its backward (on the GPU: less what is offloaded)
  // The layers' activations on the host (offload_activations; activation_offload.hpp): the waits
  // are in forward.offload and backward_input.offload.
  ActivationOffload offload;
};

struct LayerWork {  // one decoder layer, one micro-batch, one GPU, forward only
  // The GEMMs, forward shapes: QKV, output projection, MLP in, MLP out (MoE: router, experts);
  // gemm_flops is their sum.
  std::vector<GemmShape> gemms;
  double gemm_flops = 0, attention_flops = 0, memory_bytes = 0;
  // The attention core's HBM traffic where it bounds the kernels (a Gated DeltaNet layer's chunked
  // delta rule: its time the longer of FLOPs and bytes); 0 for FlashAttention's, bound by FLOPs.
  double attention_bytes = 0;
  // Its backward's, where its kernels are counted (the SSD scan's); 0: 2.5x attention_bytes.
  double attention_backward_bytes = 0;
  // A softmax attention core, run by the layout's attention kernel, as its tiles see it
  // (attention_tile_share); keys_per_query 0: no softmax core (a recurrent mixer's scan or none).
  AttentionTiles attention_tiles;
  double tp_bytes = 0;     // bytes of each of the TP collectives (full buffer)
  int tp_collectives = 0;  // per forward (all-reduces, or AG+RS pairs with SP)
  double cp_bytes = 0;     // this GPU's K and V chunk: what one ring step passes (CP)
  double cp_q_bytes = 0;   // this GPU's Q chunk (CP all-to-all: exchanged with K and V)
  double cp_o_bytes = 0;   // this GPU's attention output chunk (CP all-to-all: exchanged back)
  // A Gated DeltaNet layer exchanges heads by all-to-all whatever cp_comm says (its recurrence runs
  // over the whole sequence): cp_q_bytes its projected inputs, cp_o_bytes its normed output.
  bool cp_heads = false;
  // A sliding window under the p2p exchange (Transformer Engine's AttnFuncWithCPAndKVP2PSWA): the
  // halo, the K and V before this GPU's chunks within the window that other ranks hold, fetched in
  // place of the ring (cp_halo_bytes: the busiest rank's; a window of 1 needs none); or, where
  // the window passes cp - 1 chunks, TE's fallback to the all-gather. None: the ring as configured.
  enum class CpWindow : std::uint8_t { None, Halo, Gather };
  CpWindow cp_window = CpWindow::None;
  double cp_halo_bytes = 0;
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
  // Of parameters, the weights of the layer's GEMMs but the router's (each GEMM's k x n x count)
  // where they run in FP8 (0 in BF16: a BF16 layout, a layer kept in BF16): the linear modules
  // Transformer Engine runs in FP8 (QKV, projection, MLP, routed and shared experts, MLA's
  // projections), not the router, which stays BF16, nor the norms.
  std::int64_t gemm_weights = 0;
  // The forward's cast of the FP32 weights it computes with to BF16 (casts_weights_per_pass):
  // read 4 B, write 2 B a parameter; a rerun forward casts again.
  double weight_cast_bytes = 0;
};
// `expert_load` scales the routed experts' rows (their GEMMs, activation function and token
// exchange): expert_rank_load's busiest for a step's time, its computed for hardware FLOPs.
// `ep_per_node` (GroupPaths::ep_per_node) places the EP ranks for DeepEP's fused permute.
LayerWork layer_work(const JobModel& m, const JobLayout& l, double expert_load = 1, int ep_per_node = 1);

// Transformer Engine's TP communication overlap (Megatron-Core --tp-comm-overlap; Wang et al.,
// ASPLOS'23, "Overlap Communication with Dependent Computation via Decomposition"): a
// column-parallel GEMM takes its all-gathered input in tp chunks, computing on one while the
// next arrives, and a row-parallel GEMM's output is reduce-scattered chunk by chunk as it is
// computed. tp GEMM chunks of gemm / tp beside tp - 1 ring steps of collective / (tp - 1): the
// collective shows for (tp - 1) x max(0, collective / (tp - 1) - gemm / tp) (seconds).
double pipelined_tp_exposed(double collective, double gemm, int tp);
// One layer pass's TP communication, seconds: what shows of the collectives that wait (plain),
// what shows of those run beside GEMMs (layout.tp_overlapped(): the attention block's and a dense
// MLP's pipelined with their own GEMMs in the forward and input-gradient passes; in the
// input-gradient pass, a column-parallel GEMM's collectives beside its input and weight
// gradients), and the time these run under GEMMs (slowing them by the contention share).
struct TpExposure {
  double plain = 0, pipelined = 0, hidden = 0;
};
// weight_grad_follows false: the input-gradient pass of a split schedule (zb-h1, zb-h2, DualPipe's
// B), whose weight gradient runs later: nothing runs beside its collectives.
TpExposure tp_exposure(const LayerWork& w, const JobLayout& l, const ClusterSpec& c, const GroupPaths& paths,
                       GemmPass pass, bool weight_grad_follows = true);

// One decoder layer's passes on one GPU for one micro-batch, with recompute in the backward
// (an MoE model's MoE layer; dense_layer_model for its dense ones).
struct LayerPasses {
  PassSeconds forward, backward_input, backward_weight;
  Bytes activation = 0;  // kept per micro-batch
  // What backward_input gains where its weight gradient is deferred (a split schedule's input
  // gradient: zb-h1, zb-h2, DualPipe's): the TP collectives that ran beside that weight gradient
  // wait, and no longer slow the GEMMs by the contention share (docs/overlap.md "TP in the backward").
  // Zero without TP.
  PassSeconds deferred_weight_grad{};
};
LayerPasses layer_passes(const JobModel& m, const JobLayout& l, const ClusterSpec& c);
// An MoE layer's MoE block alone (router, permute, dispatch, routed and shared experts, combine,
// unpermute) on the busiest EP rank for one micro-batch, without recompute: what a benchmark of
// Megatron-Core's MoELayer times by itself. All zero for a dense model.
LayerPasses moe_block_passes(const JobModel& m, const JobLayout& l, const ClusterSpec& c);

// A model's decoder layers on one GPU, each kind costed once: layers(first, count) sums the layers
// [first, first + count) as a chunk without embedding or head (first and last false).
class LayerStack {
 public:
  LayerStack(const JobModel& m, const JobLayout& l, const ClusterSpec& c);
  ChunkCost layers(int first, int count) const;
  // A multi-token prediction module's decoder layer: the model's last kind, its GEMMs in FP8 even
  // where the last layers run in BF16 (Megatron-Core opens the module's FP8 context without a
  // layer number, which is_first_last_bf16_layer keeps in FP8).
  ChunkCost prediction_layer() const;

 private:
  struct Kind {
    LayerPasses passes;
    std::int64_t parameters = 0, expert_parameters = 0, gemm_weights = 0;
  };
  Kind kind_of(const JobModel& m, const JobLayout& l, const ClusterSpec& c) const;
  // A layer's kind, as bits: the model's (layer_kind: dense, windowed, linear, Mamba-2, a hybrid
  // pattern's one block) and the layout's: kept (not recomputed, under partial recompute), BF16
  // (kept out of the FP8 GEMMs: bf16_first_layers, bf16_last_layers). A chunk sums its kinds in
  // index order.
  static constexpr int kKept = 2, kBf16 = 8, kKinds = kKindBits;
  int kind_index(int layer) const;
  void add_kind(int k, const JobLayout& l, const ClusterSpec& c);
  ChunkCost sum(const std::array<int, kKinds>& layers_of_kind) const;
  JobModel model_;
  JobLayout layout_;
  std::vector<bool> recomputed_;                   // partial recompute: per layer whether it is recomputed
  std::array<std::optional<Kind>, kKinds> kinds_;  // those the model's layers have
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

// A checkpoint of the job's recoverable state: each parameter's weights and Adam's state (14 B
// a parameter with BF16 weights beside an FP32 master and FP32 moments, book 10.4.2; 12 B where
// the FP32 weights are the master).
inline Bytes checkpoint_state_bytes(const JobModel& m, const JobLayout& l) {
  return (weight_bytes(l) + adam_state_bytes(l)) * total_parameters(m);
}

// The activations one layer keeps per micro-batch on one GPU (Korthikanti 2022 sec. 4.1's count
// for the layer's shapes, with its TP, SP, selective and full-recompute forms).
Bytes layer_activation_bytes(const JobModel& m, const JobLayout& l);

}  // namespace stepsim
