#include "models/job_memory.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/block_scaling.hpp"
#include "models/layout.hpp"
#include "models/offload.hpp"
#include "sim/checked.hpp"

namespace stepsim {

std::int64_t chunks_in_flight(const JobLayout& l, int device) {
  const std::int64_t p = l.pp, m = l.microbatches(), v = l.chunks_per_device(), d = device;
  if (l.zero >= 3) return 1;  // ZeRO-3 / FSDP (no pipeline): each micro-batch's backward follows its forward
  const std::string& s = l.schedule;
  if (s == "fill-drain") return m;                             // GPipe: every forward first
  if (s == "1f1b") return std::min(m, p - d);                  // SC21 sec. 2.2.1
  // Megatron's warm-up, (pp - d - 1) x 2 + (v - 1) pp forwards, and the first steady one.
  if (s == "interleaved-1f1b") return std::min(m * v, 2 * (p - d - 1) + (v - 1) * p + 1);
  // The schedules that defer or pair passes hold as much on every rank as on the first: rank d
  // of ZB-H1 keeps 1F1B's pp - d forwards and d deferred weight-gradient passes, whose inputs stay
  // (Qi et al. 2024, sec. 3.1 and Table 1: pp, and 2pp - 1 for ZB-H2); DualPipe's ranks each
  // run one stage of either direction (DeepSeek-V3 report, Table 2: pp + 1).
  if (s == "zb-h1") return std::min(m, p);
  if (s == "zb-h2") return std::min(m, 2 * p - 1);
  if (s == "dualpipe") return p + 1;
  if (s == "dualpipe-v") return 2 * p + 1;  // the same on 2pp chunks
  return 1;
}

std::int64_t zero3_kept_at_rerun(const JobModel& m, const JobLayout& l) {
  return m.shape.hidden * m.shape.intermediate / l.tp;
}

namespace {
// The kinds of layer whose weights and activations differ (layer_kind), each as a model of its
// own, and whether it is dense (has_fp8_layer's two groups). What a largest-layer bound takes the
// larger of.
struct LayerKind {
  JobModel model;
  bool dense = false;
};
std::vector<LayerKind> layer_kinds(const JobModel& m) {
  std::vector<LayerKind> kinds;
  std::vector<bool> seen(kKindBits, false);
  for (int i = 0; i < m.shape.layers; ++i) {
    const int k = layer_kind(m, i);
    if (seen[static_cast<std::size_t>(k)]) continue;
    seen[static_cast<std::size_t>(k)] = true;
    kinds.push_back({layer_kind_model(m, k), (k & kKindDense) != 0});
  }
  return kinds;
}

// ZeRO-3's buffers beside a GPU's shards: the gathered weights in flight, and one gather's worth
// of gradients, unsharded, waiting for their reduce-scatter in the reduced type (PyTorch FSDP2's
// foreach_reduce copies a unit's gradients into one such buffer, freed once the reduce-scatter
// is done, while the next unit's backward runs). By layer: two layers' weights (the one running
// and the one prefetched) and one layer's gradients. By module (DeepSpeed), at a dense layer's
// peak in its backward: the MLP's output projection, kept since the rerun forward (reuse
// distance), and its largest module fetched again with that module's gradients; the prefetch
// bucket (5e7 elements by default) is left out. MoE layers count by layer either way. Kept from
// forward to backward (keep_gathered), every layer's weights are gathered at the backward's start:
// counted with the device's parameters (job_memory); here the gradients' buffer alone.
double zero3_buffer_bytes(const JobModel& m, const JobLayout& l) {
  // Linear weights gathered in FP8 (fp8_params): at 1 B where no layer stays BF16 (bf16_first_layers
  // and bf16_last_layers gather a layer of the same shape at 2).
  const bool fp8 = l.fp8_params() && l.bf16_first_layers == 0 && l.bf16_last_layers == 0;
  double layer = 0, layer_gathered = 0;
  for (const LayerKind& k : layer_kinds(m)) {
    const LayerWork w = layer_work(k.model, l);
    layer = std::max(layer, static_cast<double>(w.parameters));
    layer_gathered = std::max(
        layer_gathered, 2.0 * static_cast<double>(w.parameters) - (fp8 ? static_cast<double>(w.gemm_weights) : 0));
  }
  if (l.keep_gathered) return l.grad_bytes * layer;
  double gathered = 2 * layer_gathered, reduced = layer;
  if (l.zero3_fetch == Zero3Fetch::Module && m.experts == 0) {
    // A module's weights are its GEMM's k x n (each kind of layer's GEMMs, as layer_work lists them).
    double largest = 0;
    for (const LayerKind& k : layer_kinds(m))
      for (const GemmShape& g : layer_work(k.model, l).gemms) largest = std::max(largest, g.k * g.n * g.count);
    gathered = (fp8 ? 1 : 2) * (static_cast<double>(zero3_kept_at_rerun(m, l)) + largest);
    reduced = largest;
  }
  return gathered + l.grad_bytes * reduced;
}

// The FP8 GEMMs' weight copies on a device holding `held` (fp8_weight_copy_bytes): cached for
// the step, every linear module's of its chunks (its TP shards, its EP rank's experts, both of
// DualPipe's stages); the embedding and the LM head stay BF16 (Megatron-Core builds the output
// layer as its own ColumnParallelLinear, not a TE module). Under ZeRO-3 the copies are of the
// gathered weights, made and freed with them, not kept for the backward (TE's _Linear under
// FSDP2 requantizes the gathered weight there: linear.py, TE issue 2681): one layer's.
// The linear modules' weights of the chunks a device holds (ChunkCost::gemm_weights).
double held_gemm_weights(const std::vector<int>& held, const std::vector<ChunkCost>& chunks) {
  double weights = 0;
  for (int k : held) weights += static_cast<double>(chunks[static_cast<std::size_t>(k)].gemm_weights);
  return weights;
}

Bytes fp8_weight_copies(const JobModel& m, const JobLayout& l, const std::vector<int>& held,
                        const std::vector<ChunkCost>& chunks) {
  const double per_weight = chunks.empty() ? 0 : chunks.front().fp8_copy_bytes;
  if (per_weight <= 0) return 0;
  double weights = 0;
  if (l.zero >= 3) {  // the largest layer of a kind some FP8 layer is of (not one kept in BF16)
    for (const LayerKind& k : layer_kinds(m))
      if (has_fp8_layer(m, l, k.dense))
        weights = std::max(weights, static_cast<double>(layer_work(k.model, l).gemm_weights));
    // Gathered in FP8 (fp8_params), the gathered weight is the row-wise copy (zero3_buffer_bytes):
    // what the backward reads beside it is made after the gather.
    if (l.fp8_params()) return bytes_from(std::max(0.0, per_weight - 1) * weights, "the FP8 GEMMs' weight copies");
  } else {
    weights = held_gemm_weights(held, chunks);
  }
  return bytes_from(per_weight * weights, "the FP8 GEMMs' weight copies");
}

// The device's chunks in flight at its peak: a lower bound on its simulated peak (which also
// holds messages), so that a layout refused or pruned by it cannot fit. Megatron's interleaved
// warm-up runs its forwards p at a time through the device's chunks in order (micro-batch i in
// chunk (i / p) mod v) and frees nothing: those it holds at its end are known chunk by chunk.
// Other schedules: each at the device's smallest chunk.
Bytes analytic_activations(const JobLayout& l, int device, const std::vector<int>& held,
                           const std::vector<ChunkCost>& chunks) {
  const std::int64_t in_flight = chunks_in_flight(l, device);
  double held_bytes = 0;
  if (l.schedule == "interleaved-1f1b" && l.zero < 3 && !held.empty()) {
    const auto v = static_cast<std::int64_t>(held.size());
    for (std::int64_t i = 0; i < in_flight; ++i)
      held_bytes += static_cast<double>(
          chunks[static_cast<std::size_t>(held[static_cast<std::size_t>((i / l.pp) % v)])].activation);
  } else {
    Bytes smallest = -1;
    for (int k : held)
      if (const Bytes a = chunks[static_cast<std::size_t>(k)].activation; smallest < 0 || a < smallest) smallest = a;
    held_bytes = static_cast<double>(std::max<Bytes>(0, smallest)) * static_cast<double>(in_flight);
  }
  return bytes_from(held_bytes, "the activations per GPU");
}

// The offloaded layers' activations of the device's chunks in flight (offload_activations).
Bytes host_activations(const JobLayout& l, int device, const std::vector<int>& held,
                       const std::vector<ChunkCost>& chunks) {
  double bytes = 0;
  for (int k : held) bytes += static_cast<double>(chunks[static_cast<std::size_t>(k)].offload.host);
  return bytes_from(bytes * static_cast<double>(chunks_in_flight(l, device)), "the activations on the host");
}
}  // namespace

double fp8_weight_copy_bytes(const JobLayout& l, GpuArchitecture arch) {
  if (!l.fp8) return 0;
  switch (l.fp8_recipe) {
    case Fp8Recipe::Blockwise: return 2 * block_scaled_bytes_per_element(kWeightBlock);
    case Fp8Recipe::Mx: return 2 * block_scaled_bytes_per_element(kMxBlock, 1, 1);
    case Fp8Recipe::Nvfp4: return 2 * kNvfp4Bytes;  // a row-wise and a column-wise copy (TE's quantizer)
    case Fp8Recipe::Tensorwise: break;
  }
  return fp8_needs_transpose(arch) ? 2 : 1;
}

std::vector<JobMemory> job_memory_by_rank(const JobModel& m, const JobLayout& l, const std::vector<ChunkCost>& chunks,
                                          const std::vector<Bytes>& activation_peaks) {
  const auto held = device_chunks(l);
  const bool simulated = !activation_peaks.empty();
  if (simulated && activation_peaks.size() != held.size())
    throw std::logic_error("job_memory: one activation peak per pipeline device");
  const double T = tokens_on_gpu(m, l);
  // Buffers every device has: ZeRO-3's gathered weights and gradients (zero3_buffer_bytes), and
  // for full recompute one layer's activations rebuilt at a time (what the layer keeps without
  // recompute). (The largest kind of layer, layer_kinds.)
  Bytes shared = 0;
  if (l.zero >= 3) shared += bytes_from(zero3_buffer_bytes(m, l), "ZeRO-3's gathered weights");
  if (l.recompute == JobRecompute::Full && l.recompute_layers != 0) {
    JobLayout kept = l;
    kept.recompute = JobRecompute::None;
    Bytes largest = 0;
    for (const LayerKind& k : layer_kinds(m)) largest = std::max(largest, layer_activation_bytes(k.model, kept));
    shared += largest;
  }
  if (l.recompute == JobRecompute::Op) {
    // torchtitan's op policy: a block's backward reruns what it did not save, beside what it did
    // (dense blocks only: check_op_recompute).
    JobLayout kept = l;
    kept.recompute = JobRecompute::None;
    shared += std::max<Bytes>(0, layer_activation_bytes(m, kept) - layer_activation_bytes(m, l));
  }
  const int last = l.pp * l.chunks_per_device() - 1;
  std::vector<JobMemory> ranks;
  ranks.reserve(held.size());
  for (std::size_t d = 0; d < held.size(); ++d) {
    JobMemory mem;
    mem.device = static_cast<int>(d);
    // CP ranks hold the same weights as DP ranks, and so do DualPipe's two copies of a stage: ZeRO shards
    // over all of them (an expert's weights over its fewer replicas). DualPipe's device holds two stages:
    // 2x parameters (DeepSeek-V3 report sec. 3.2.1, Table 2), sharded over twice the ranks from ZeRO's on.
    // Mixed-precision Adam: BF16 weights (2 B), gradients (grad_bytes), master + m + v (adam_state_bytes);
    // or FP32 weights that are the master (4 B), FP32 gradients and m + v.
    const HeldParameters params = held_parameters(held[d], chunks);
    const auto grads = state_bytes(params, l, kept_grad_bytes(l), l.gradients_sharded());
    // FP8 parameters (fp8_params): below ZeRO-3 the FP8 GEMMs' weights are their FP8 copies (below),
    // no BF16 beside; under it, the shards of the BF16 weights beside the optimizer's master are FP8
    // (1 B less a GEMM weight; the shards' mix of GEMM weights taken as the device's), FP32 shards
    // that are the master stay (cast as they are gathered).
    const double gemm_weights = l.fp8_params() ? held_gemm_weights(held[d], chunks) : 0;
    double weights = state_bytes(params, l, weight_bytes(l), l.zero >= 3);
    if (l.zero < 3) {
      weights -= weight_bytes(l) * gemm_weights;
    } else if (l.master_weights == MasterWeights::Optimizer && gemm_weights > 0) {
      weights -= state_bytes(params, l, 1, true) * gemm_weights / static_cast<double>(params.dense + params.expert);
    }
    mem.weights = bytes_from(weights, "the weights per GPU");
    mem.gradients = bytes_from(grads, "the gradients per GPU");
    mem.optimizer = bytes_from(l.optimizer_on_gpu() * state_bytes(params, l, adam_state_bytes(l), l.zero >= 1),
                               "the optimizer state per GPU");
    mem.host = bytes_from(l.optimizer_on_host() * state_bytes(params, l, adam_state_bytes(l) + 4, l.zero >= 1),
                          "the optimizer state on the host");
    mem.activations = simulated ? activation_peaks[d] : analytic_activations(l, static_cast<int>(d), held[d], chunks);
    mem.host_activations = host_activations(l, static_cast<int>(d), held[d], chunks);
    mem.buffers = shared;
    if (l.zero >= 3 && l.keep_gathered)
      mem.buffers += bytes_from(state_bytes(params, l, 2, false) - gemm_weights, "the weights kept gathered");
    // Autocast's BF16 copies of the FP32 weights: cached for the whole forward and saved for the
    // backward, every layer's at the forward's end (PyTorch's autocast weight cache). FP8 GEMMs
    // cast their FP32 weights to FP8 themselves, outside autocast's cast list (Transformer Engine's
    // modules, torchao's Float8Linear): no BF16 copy of those, their FP8 copies counted below.
    if (casts_weights_per_pass(l))
      mem.buffers += bytes_from(state_bytes(params, l, 2, false) - (l.fp8 ? 2 * held_gemm_weights(held[d], chunks) : 0),
                                "the weights' BF16 copies");
    mem.fp8_weight_copies = fp8_weight_copies(m, l, held[d], chunks);
    mem.fp8_parameters = l.fp8_params() && l.zero < 3;  // under ZeRO-3 the copies come and go with a gather
    (mem.fp8_parameters ? mem.weights : mem.buffers) += mem.fp8_weight_copies;
    // The FP32 logits of one micro-batch (and their gradient) where the LM head is.
    if (std::find(held[d].begin(), held[d].end(), last) != held[d].end())
      mem.buffers += bytes_from(2 * 4 * T * static_cast<double>(m.shape.vocab) / l.tp, "a micro-batch's logits");
    ranks.push_back(mem);
  }
  return ranks;
}

JobMemory job_memory(const JobModel& m, const JobLayout& l, const std::vector<ChunkCost>& chunks,
                     const std::vector<Bytes>& activation_peaks) {
  return most_loaded(job_memory_by_rank(m, l, chunks, activation_peaks));
}

JobMemory most_loaded(const std::vector<JobMemory>& ranks) {
  JobMemory most;
  for (std::size_t d = 0; d < ranks.size(); ++d)
    if (d == 0 || ranks[d].total() > most.total()) most = ranks[d];
  return most;
}

namespace {
// Adam's memory traffic per parameter: read and written, the master weights and the moments;
// read, an FP32 gradient; written, the BF16 weights where they are a copy beside the master.
double adam_traffic(const JobLayout& l) {
  return 2.0 * (4 + 2 * l.adam_moment_bytes) + 4 + (l.master_weights == MasterWeights::Optimizer ? 2 : 0);
}
double gpu_memory_rate(const ClusterSpec& c) {
  return static_cast<double>(c.accelerator.hbm_bandwidth) * c.accelerator.efficiency.memory;
}
// Adam over `elements` of the optimizer in the GPU's HBM.
double gpu_adam_seconds(const JobLayout& l, const ClusterSpec& c, double elements) {
  return elements * adam_traffic(l) / gpu_memory_rate(c);
}
}  // namespace

HostOptimizerStep host_optimizer_step(const JobLayout& l, const ClusterSpec& c, const HeldParameters& params_on_gpu) {
  if (c.node.host_memory_bandwidth <= 0 || c.node.pcie_bandwidth <= 0 || c.node.gpus <= 0)
    throw std::invalid_argument("host_optimizer_step: the node's host memory bandwidth and host link are not known");
  const double whole = state_bytes(params_on_gpu, l, 1, l.zero >= 1);  // elements
  const double shard = l.optimizer_on_host() * whole;                  // offloaded
  // Each GPU's link (ClusterSpec::host_link_rate); the host's memory shared by every GPU of the
  // node, all stepping at once.
  const double link = c.host_link_rate();
  const double host = static_cast<double>(c.node.host_memory_bandwidth) / c.node.gpus;
  HostOptimizerStep s;
  if (l.grad_bytes == 2) {
    const auto rate = [](double r) { return static_cast<std::int64_t>(std::max(1.0, r)); };
    const ConversionPlace p =
        conversion_times(bytes_from(2 * shard, "the gradient shard"), rate(link), rate(host), rate(gpu_memory_rate(c)));
    s.converted_on_gpu = p.on_gpu < p.on_cpu;
    s.gradients_down = to_s(std::min(p.on_cpu, p.on_gpu));
  } else {
    s.gradients_down = 4 * shard / link;
  }
  s.adam = shard * adam_traffic(l) / host;
  s.weights_up = 2 * shard / link;
  s.gpu = gpu_adam_seconds(l, c, l.optimizer_on_gpu() * whole);
  return s;
}

double optimizer_seconds(const JobLayout& l, const ClusterSpec& c, const HeldParameters& params_on_gpu) {
  if (l.offload_optimizer) return host_optimizer_step(l, c, params_on_gpu).total();
  const double shard = state_bytes(params_on_gpu, l, 1, l.zero >= 1);  // elements
  return gpu_adam_seconds(l, c, shard);
}

double smallest_offload_fraction(const JobModel& m, JobLayout l, const ClusterSpec& c) {
  l.offload_optimizer = true;
  l.offload_fraction = 1;
  const auto most = [&](const JobLayout& x) { return job_memory(m, x, chunk_costs(m, x, c)); };
  JobLayout kept = l;
  kept.offload_optimizer = false;
  const double room = static_cast<double>(c.accelerator.usable_memory) - static_cast<double>(most(l).total());
  const double optimizer = static_cast<double>(most(kept).optimizer);
  if (room < 0 || optimizer <= 0) return 1;
  return std::clamp(std::ceil(100 * (1 - room / optimizer)) / 100, 0.01, 1.0);
}

Bytes host_memory_per_node(const std::vector<JobMemory>& ranks, const ClusterSpec& c, std::int64_t gpus) {
  const std::int64_t on_node = std::min<std::int64_t>(std::max(c.node.gpus, 1), std::max<std::int64_t>(gpus, 1));
  Bytes most = 0;
  for (const JobMemory& r : ranks) most = std::max(most, r.host + r.host_activations);
  return bytes_from(static_cast<double>(most) * static_cast<double>(on_node),
                    "the host memory of a node's offloaded optimizers and activations");
}

double gathered_bytes_per_parameter(const JobLayout& l, const ChunkCost& chunk) {
  if (!l.fp8_params() || chunk.parameters <= 0) return 2;
  if (l.fp8_recipe == Fp8Recipe::Mx && l.zero < 3) return 2;  // BF16 through the gradient buffer
  return 2 - static_cast<double>(chunk.gemm_weights) / static_cast<double>(chunk.parameters);
}

HeldParameters held_parameters(const ChunkCost& chunk) {
  return {chunk.parameters - chunk.expert_parameters, chunk.expert_parameters};
}

HeldParameters held_parameters(const std::vector<int>& chunks_held, const std::vector<ChunkCost>& chunks) {
  HeldParameters p;
  for (int k : chunks_held) {
    const HeldParameters one = held_parameters(chunks[static_cast<std::size_t>(k)]);
    p.dense += one.dense;
    p.expert += one.expert;
  }
  // A device holding the first chunk and the last (DualPipe's device 0) holds the embedding once:
  // the last chunk's copy of it is the first chunk's own tensor there.
  const auto holds = [&](std::size_t k) {
    return std::find(chunks_held.begin(), chunks_held.end(), static_cast<int>(k)) != chunks_held.end();
  };
  if (!chunks.empty() && chunks.size() > 1 && holds(0) && holds(chunks.size() - 1))
    p.dense -= chunks.back().embedding_copy;
  return p;
}

double state_bytes(const HeldParameters& p, const JobLayout& l, double bytes_per_parameter, bool sharded) {
  const double dense = bytes_per_parameter * static_cast<double>(p.dense);
  const double expert = bytes_per_parameter * static_cast<double>(p.expert);
  return sharded ? dense / l.zero_shards() + expert / l.expert_zero_shards() : dense + expert;
}

namespace {
// What crosses the replicas after a collective in a shard group (HSDP): a reduce-scatter's
// shard, an all-reduce's whole buffer; a gather nothing (each replica gathers its own).
double across_replicas(Collective c, double bytes, int shards) {
  if (c == Collective::ReduceScatter) return bytes / shards;
  return c == Collective::AllReduce ? bytes : 0.0;
}
}  // namespace

Bytes replica_collective_bytes(Collective c, const HeldParameters& p, double bytes_per_parameter, const JobLayout& l,
                               std::string_view what) {
  const int r = l.dp_replicate;
  double sent = 0;
  for (const auto& [params, n] : {std::pair{p.dense, l.zero_shards()}, std::pair{p.expert, l.expert_zero_shards()}}) {
    const double bytes = static_cast<double>(params) * bytes_per_parameter;
    sent += ring_passes(c) * bytes * (n - 1) / n + 2 * across_replicas(c, bytes, n) * (r - 1) / r;
  }
  return bytes_from(sent, what);
}

double replica_collective_seconds(Collective c, const HeldParameters& p, double bytes_per_parameter, const JobLayout& l,
                                  const GroupPaths& paths) {
  const double dense = bytes_per_parameter * static_cast<double>(p.dense);
  const double expert = bytes_per_parameter * static_cast<double>(p.expert);
  const int n = l.zero_shards(), e = l.expert_zero_shards(), r = l.dp_replicate;
  return collective_seconds(c, n, dense, paths.dp) + collective_seconds(c, e, expert, paths.edp) +
         collective_seconds(Collective::AllReduce, r, across_replicas(c, dense, n), paths.dp_replica) +
         collective_seconds(Collective::AllReduce, r, across_replicas(c, expert, e), paths.dp_replica);
}

int most_chunk_layers(const JobModel& m, const JobLayout& l) {
  if (l.dp <= 0 || check_layout(m, l, 0)) return 0;
  const std::vector<int> counts = chunk_layer_counts(m.shape.layers, l);
  return counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
}

int fewest_offloaded_layers(const JobModel& m, JobLayout l, const ClusterSpec& c, std::int64_t cards) {
  l.offload_activations = 1;
  if (l.dp <= 0 || m.shape.layers < 2 || check_layout(m, l, cards)) return 1;
  const auto fits = [&](int n) {
    l.offload_activations = n;
    return job_memory(m, l, chunk_costs(m, l, c)).total() <= c.accelerator.usable_memory;
  };
  for (int n = 0; n < m.shape.layers - 1; ++n)
    if (fits(n)) return n;
  return m.shape.layers - 1;
}

int fewest_recomputed_layers(const JobModel& m, JobLayout l, const ClusterSpec& c, std::int64_t cards) {
  l.recompute = JobRecompute::Full;
  l.recompute_layers = -1;
  if (l.dp <= 0 || check_layout(m, l, cards)) return -1;
  const auto fits = [&](int n) {
    l.recompute_layers = n;
    return job_memory(m, l, chunk_costs(m, l, c)).total() <= c.accelerator.usable_memory;
  };
  // From one layer on, each layer more recomputed keeps less; none recomputed holds no rebuilt
  // layer's buffer either, so 0 is asked apart (it may fit where 1 does not).
  if (fits(0)) return 0;
  const int most = most_chunk_layers(m, l);
  if (most <= 1 || !fits(most - 1)) return -1;
  int lo = 1, hi = most - 1;  // hi fits
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (fits(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

}  // namespace stepsim
