#pragma once
// What one GPU of a job holds: its parameters by the ranks that hold them too, the bytes of
// their weights, gradients and optimizer state under ZeRO, the activations a schedule keeps in
// flight, the most loaded pipeline rank's memory; and the data-parallel collectives and the
// optimizer step those parameters cost.
#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "models/comm_paths.hpp"
#include "models/layer_costs.hpp"

namespace stepsim {

// The parameters one GPU holds, by the ranks that hold them too: dense weights are on every
// one of weight_replicas(), an expert's on expert_replicas(). ZeRO shards each over its own
// replicas (of one HSDP replica group: zero_shards()), and the data-parallel collectives run
// over each group.
struct HeldParameters {
  std::int64_t dense = 0, expert = 0;
};
HeldParameters held_parameters(const ChunkCost& chunk);
HeldParameters held_parameters(const std::vector<int>& chunks_held, const std::vector<ChunkCost>& chunks);
// Bytes per GPU of a state of `p` (weights, gradients, Adam's) at `bytes_per_parameter`: each
// part divided by its shards when ZeRO shards that state, else whole.
double state_bytes(const HeldParameters& p, const JobLayout& l, double bytes_per_parameter, bool sharded);
// A data-parallel collective of `bytes_per_parameter` x `p`: the dense part among its shards,
// then the expert part among its own, back to back (seconds). With HSDP (dp_replicate > 1) a
// reduce-scatter's shard is then all-reduced across the replicas (PyTorch FSDP's HYBRID_SHARD:
// reduce-scatter in the shard group, all-reduce in the replicate group).
double replica_collective_seconds(Collective c, const HeldParameters& p, double bytes_per_parameter, const JobLayout& l,
                                  const GroupPaths& paths);
// What one member sends in such a collective: a ring's passes x (n - 1) / n of each part, n its
// shards, and 2 (r - 1) / r of what the replicas all-reduce.
Bytes replica_collective_bytes(Collective c, const HeldParameters& p, double bytes_per_parameter, const JobLayout& l,
                               std::string_view what);

// Bytes per parameter the distributed optimizer gathers for `chunk`: BF16 weights, 2; with FP8
// parameters (JobLayout::fp8_params) its FP8 GEMMs' weights at 1 B (Float8Tensor's data; each GPU
// makes the transpose itself) and the rest (norms, embedding, LM head, router) at 2, as their mean.
// MXFP8 parameters below ZeRO-3 are gathered in BF16, 2: into the gradient buffer, each GPU then
// casting its copy to MXFP8 (Megatron-Core's reuse_grad_buf_for_mxfp8_param_ag, which
// Megatron-Bridge's MXFP8 recipe sets: DistributedDataParallel.start_param_sync copies the
// gathered BF16 into the MXFP8 parameters).
double gathered_bytes_per_parameter(const JobLayout& l, const ChunkCost& chunk);

// Memory per GPU of one pipeline rank, bytes.
struct JobMemory {
  Bytes weights = 0, gradients = 0, optimizer = 0, activations = 0, buffers = 0;
  // The FP8 GEMMs' weight copies (fp8_weight_copy_bytes): a part of the buffers, or of the weights
  // where they are the weights (fp8_parameters: JobLayout::fp8_params, no BF16 beside them).
  Bytes fp8_weight_copies = 0;
  bool fp8_parameters = false;
  int device = 0;               // the pipeline rank
  // In the GPU's host memory, not the GPU's (offload_optimizer): its shard of the FP32 master
  // weights and Adam's moments, and the FP32 gradient shard the host steps them with.
  Bytes host = 0;
  // In host memory too (offload_activations): the offloaded layers' activations of the
  // micro-batches in flight.
  Bytes host_activations = 0;
  Bytes total() const { return weights + gradients + optimizer + activations + buffers; }
};
// Chunk activations (one chunk, one micro-batch) pipeline device `device` holds at its peak, by
// schedule: 1F1B and ZB-H1 min(m, pp - d) (the first device pp: SC21 sec. 2.2.1); GPipe m;
// interleaved Megatron's warm-up forwards and one, min(m v, 2 (pp - d - 1) + (v - 1) pp + 1)
// (the first device pp v + pp - 1: in layers L (1 + (pp-1)/(pp v)), Korthikanti sec. 4.2.3);
// on every device ZB-H1 min(m, pp) and ZB-H2 min(m, 2pp - 1) (deferred weight-gradient passes
// keep their inputs: Qi et al. 2024, Table 1), DualPipe pp + 1 stages (DeepSeek-V3 report
// Table 2), DualPipe-V 2pp + 1 chunks; 1 for ZeRO-3 (the data-parallel lowering runs each
// micro-batch through).
std::int64_t chunks_in_flight(const JobLayout& l, int device = 0);
// A dense layer's last module's weights on one GPU, its MLP's output projection (h x ffn / tp):
// gathered by module (DeepSpeed), what the reuse distance keeps from a recomputed layer's rerun
// forward to its backward, which follows at once.
std::int64_t zero3_kept_at_rerun(const JobModel& m, const JobLayout& l);
// Bytes per weight of a linear module (ChunkCost::gemm_weights) that FP8 GEMMs keep beside the
// weights on a GPU of `arch`, 0 without `fp8`. Transformer Engine casts each linear module's weight
// once a step and caches it across the step's micro-batches (Megatron-Core's TE modules pass
// is_first_microbatch: TransformerEngineBaseModule.get_weight_workspace keeps it in
// _fp8_workspaces, refreshed on a step's first micro-batch), with the column-wise copy the
// backward's input-gradient GEMM reads (the weight quantizer's columnwise usage while grad is
// enabled). Tensorwise: Float8Tensor's _data, 1 B, one FP32 scale-inverse per tensor, and its
// _transpose, 1 B more, only where cuBLAS's FP8 GEMM takes the TN layout alone (Ada and Hopper:
// is_non_tn_fp8_gemm_supported is false below compute capability 10.0; Blackwell reads _data
// either way). Blockwise: Float8BlockwiseQTensor's row-wise and column-wise data, each with an
// FP32 scale per 128 x 128 block (DeepSeek-V3 report sec. 3.3.1): 2 x (1 + 4 / 16,384) B. MXFP8:
// MXFP8Tensor's row-wise and column-wise data, each scaled along its own rows in 1 x 32 blocks
// with a 1-byte E8M0 scale (a transpose would put the blocks across the wrong dimension, so the
// column-wise copy is quantized apart on every architecture): 2 x (1 + 1 / 32) B.
double fp8_weight_copy_bytes(const JobLayout& l, GpuArchitecture arch);
// The most loaded pipeline rank (the largest total; the lowest rank on ties): its weights,
// gradients and optimizer state from the chunks it holds, its activations, its buffers (the
// LM head's FP32 logits where the head is; ZeRO-3's gathered weights and a gather's gradients;
// full recompute's rebuilt layer; FP8 GEMMs' weight copies of the device's linear modules, or
// under ZeRO-3 of one gathered layer's). `activation_peaks`: each rank's simulated peak, or empty for
// the analytic figure, a lower bound: each rank's chunks_in_flight at its smallest chunk, or,
// interleaved, at the chunks Megatron's warm-up takes them through.
JobMemory job_memory(const JobModel& m, const JobLayout& l, const std::vector<ChunkCost>& chunks,
                     const std::vector<Bytes>& activation_peaks = {});
// The same for every pipeline rank, in rank order (job_memory is their most_loaded).
std::vector<JobMemory> job_memory_by_rank(const JobModel& m, const JobLayout& l, const std::vector<ChunkCost>& chunks,
                                          const std::vector<Bytes>& activation_peaks = {});
// The largest total of `ranks` (the lowest rank on ties).
JobMemory most_loaded(const std::vector<JobMemory>& ranks);

// For full recompute of only the first N layers of each chunk (Megatron-LM's --recompute-method
// block --recompute-num-layers N): the fewest N for which `l` (recompute set to full) fits the
// accelerator's usable memory analytically; -1 (every layer) where only that fits, nothing does,
// or check_layout refuses the layout on `cards` (0: not checked against a card count). N at or
// past a chunk's layers recomputes it whole: past every chunk's, N is -1.
int fewest_recomputed_layers(const JobModel& m, JobLayout l, const ClusterSpec& c, std::int64_t cards);
// For offload_activations: the fewest layers whose activations on the host let `l` fit the
// accelerator's usable memory analytically, 0 where it fits without; the model's layers less one
// (the most) where none does. 1 where check_layout refuses offloading in `l` on `cards` (0: not
// checked against a card count), so that the refusal names it. Each count is tried in turn, from
// 1: the handler's windows need not make the GPU's share fall at every step.
int fewest_offloaded_layers(const JobModel& m, JobLayout l, const ClusterSpec& c, std::int64_t cards);
// The most layers any chunk of `l` holds (chunk_layer_counts), 0 for a layout check_layout refuses.
int most_chunk_layers(const JobModel& m, const JobLayout& l);

// Optimizer step seconds (Adam): HBM traffic of the GPU's shard, the state and an FP32 gradient
// read, the state and a BF16 weight copy written: 16 + 14 bytes per parameter with FP32 moments.
// Offloaded (offload_optimizer), the same traffic in host memory, whose bandwidth the node's GPUs
// share, beside the copies over the GPU's host link: the reduced gradient shard down (BF16
// converted to FP32 where the book's rule puts it, offload.hpp: on the host below the break-even
// link bandwidth) and the BF16 weights back, one after the other (DeepSpeed's default; Megatron-
// Core's --overlap-cpu-optimizer-d2h-h2d is not modelled).
double optimizer_seconds(const JobLayout& l, const ClusterSpec& c, const HeldParameters& params_on_gpu);
// The parts of an offloaded step, seconds (the host's in sequence beside the GPU's: total() is
// optimizer_seconds).
struct HostOptimizerStep {
  double gradients_down = 0;  // the gradient shard to the host, with its conversion to FP32
  bool converted_on_gpu = false;
  double adam = 0;        // the update in host memory
  double weights_up = 0;  // the BF16 weights back to the GPU
  // The part left on the GPU (offload_fraction below 1), stepped beside the host's (Megatron-Core's
  // HybridDeviceOptimizer launches the GPU's kernels, then steps the host's).
  double gpu = 0;
  double host() const { return gradients_down + adam + weights_up; }
  double total() const { return std::max(gpu, host()); }
};
HostOptimizerStep host_optimizer_step(const JobLayout& l, const ClusterSpec& c, const HeldParameters& params_on_gpu);
// The smallest share of each GPU's optimizer on the host (offload_fraction, in hundredths, rounded
// up; at least 0.01) with which `l`, offloading, fits the accelerator's usable memory analytically:
// the GPU's memory falls linearly with the share. 1 where even the whole does not fit.
double smallest_offload_fraction(const JobModel& m, JobLayout l, const ClusterSpec& c);
// The host memory a node's offloaded optimizers and activations take, at most: the largest
// JobMemory::host + host_activations of `ranks` for every GPU of the node that a job of `gpus` uses.
Bytes host_memory_per_node(const std::vector<JobMemory>& ranks, const ClusterSpec& c, std::int64_t gpus);

}  // namespace stepsim
