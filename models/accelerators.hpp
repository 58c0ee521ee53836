#pragma once
// Accelerators, nodes and networks for jobs described by model + cluster + layout (docs/job.md).
// Richer than models/hardware.hpp's Accelerator (which the planner uses): adds FP8 peak, HBM
// bandwidth, the node's fabric, the network tiers and the efficiency parameters a calibration fits.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace stepsim {

// How FP8 GEMMs scale their operands (Transformer Engine's recipes). Tensorwise: one factor per
// tensor (delayed or current scaling, TE's default), cuBLAS's FP8 GEMM. Blockwise: one per 128 x 128
// block of a weight and per 1 x 128 of an activation (DeepSeek-V3 report sec. 3.3.1-3.3.2), whose
// kernels rescale partial sums as they accumulate: on Hopper a slower GEMM (docs/calibration.md, "The FP8
// GEMMs' shares"). Mx (MXFP8): one power-of-two (E8M0) factor per 32 consecutive values, scaled
// inside Blackwell's tensor cores (Transformer Engine's MXFP8BlockScaling, compute capability 10.0
// on; OCP Microscaling Formats specification v1.0). Nvfp4: 4-bit E2M1 values with an E4M3 factor
// per 16 and an FP32 one per tensor, the forward, input-gradient and weight-gradient GEMMs of
// every layer at Blackwell's FP4 rate (Transformer Engine's NVFP4BlockScaling, a recipe its
// autocast takes as it takes the FP8 ones; Megatron-Core's --fp4-recipe nvfp4; NVIDIA,
// "Pretraining Large Language Models with NVFP4", 2025).
enum class Fp8Recipe : std::uint8_t { Tensorwise, Blockwise, Mx, Nvfp4 };

// The GPU's generation, for what its FP8 tensor cores take. Ada and Hopper run FP8 GEMMs in the
// "TN" layout only (cuBLASLt's FP8 requirement), so a weight used both ways keeps a transposed
// FP8 copy too; Blackwell runs any layout (Transformer Engine's is_non_tn_fp8_gemm_supported:
// compute capability 10.0 on) and scales MXFP8 blocks in hardware. Ampere has no FP8.
enum class GpuArchitecture : std::uint8_t { Ampere, Ada, Hopper, Blackwell };

// The achieved fractions of peak the cost model applies (models/layer_costs.hpp). Defaults are
// uncalibrated guesses; `stepsim calibrate` fits them to measured runs (models/calibration.hpp).
// The least efficiency a scenario, a hardware file or --efficiency may give: under 1 % of peak is
// no accelerator, and 1e-300 put every step past the simulated time limit.
inline constexpr double kMinEfficiency = 0.01;

struct Efficiency {
  double gemm = 0.70;       // dense GEMMs: FLOPs / (peak x gemm)
  // Attention core: a fused kernel's long-sequence rate at head dimension 128
  // (models/attention_kernels.hpp scales it to a layer's head dimension and tiles), or unfused
  // attention's batched QK^T / AV GEMMs.
  double attention = 0.55;
  double memory = 0.80;     // memory-bound kernels: bytes / (HBM bandwidth x memory)
  double fabric = 0.80;     // intra-node collectives (NVLink/NVSwitch or PCIe): bus bandwidth share
  double network = 0.80;    // inter-node collectives over the NICs: bus bandwidth share
  // Compute lost to a collective running at the same time (its kernels take SMs and HBM
  // bandwidth): a GEMM overlapped by a collective for time x is delayed by contention * x.
  double contention = 0.20;
  // An MoE layer's routed experts, run as Transformer Engine's grouped GEMM: this share of the
  // dense GEMMs' efficiency (1: as dense). Fitted only on MoE rows (docs/calibration.md, "The routed experts' share").
  double experts = 1.0;
  // GEMMs run in FP8 (layout fp8): this share of their BF16 efficiency at the FP8 peak (1: twice
  // the BF16 rate), `fp8` with tensorwise scaling, `fp8_blockwise` with blockwise, `fp8_mx` with
  // MXFP8. Each fitted only on FP8 rows of its recipe (docs/calibration.md, "The FP8 GEMMs' shares").
  double fp8 = 1.0;
  double fp8_blockwise = 1.0;
  double fp8_mx = 1.0;  // MXFP8 (Blackwell), fitted only on its rows as the other two
  // NVFP4 GEMMs (recipe nvfp4): this share of the BF16 efficiency at the FP4 peak, fitted only on
  // NVFP4 rows.
  double fp4 = 1.0;
  // Seconds of host time each pass of an MoE layer's block exposes (forward, its recompute,
  // backward) for each expert the GPU holds: after the dispatcher's device-to-host
  // synchronization (its token counts, the grouped GEMM's splits) the GPU waits while the host
  // issues each local expert's GEMMs and casts. Published runs give 0.1-0.25 ms a pass per
  // local expert whether a GPU holds 4 or 32 (docs/precision.md, "Qwen3 MoE on GB200, GB300 and
  // H100"). 0: hidden (CUDA graphs, a sync-free MoE). Fitted only on MoE rows of whole steps.
  double moe_host_per_expert = 0;
  double fp8_share(Fp8Recipe r) const {
    return r == Fp8Recipe::Blockwise ? fp8_blockwise : r == Fp8Recipe::Mx ? fp8_mx : r == Fp8Recipe::Nvfp4 ? fp4 : fp8;
  }
  bool operator==(const Efficiency&) const = default;
};

// Each efficiency by its name, in the order --efficiency takes them (the six dense ones, then the
// others as they came), and what it is: a fraction of a peak (at least kMinEfficiency, at most 1;
// the shares default to 1), a share of time lost (contention: 0 allowed) or a time in seconds (the
// MoE host time: 0 by default). Reports list the fractions and shares in this order and the time
// last. One table for the scenario keys, --efficiency, the calibration's line and hardware file.
enum class EfficiencyKind : std::uint8_t { Fraction, TimeShare, Seconds };
struct EfficiencyField {
  const char* name;
  double Efficiency::*field;
  EfficiencyKind kind = EfficiencyKind::Fraction;
};
inline constexpr EfficiencyField kEfficiencyFields[] = {
    {"gemm", &Efficiency::gemm},
    {"attention", &Efficiency::attention},
    {"memory", &Efficiency::memory},
    {"fabric", &Efficiency::fabric},
    {"network", &Efficiency::network},
    {"contention", &Efficiency::contention, EfficiencyKind::TimeShare},
    {"experts", &Efficiency::experts},
    {"fp8", &Efficiency::fp8},
    {"moe_host_per_expert", &Efficiency::moe_host_per_expert, EfficiencyKind::Seconds},
    {"fp8_blockwise", &Efficiency::fp8_blockwise},
    {"fp8_mx", &Efficiency::fp8_mx},
    {"fp4", &Efficiency::fp4}};
inline constexpr std::size_t kDenseEfficiencies = 6;  // the first six: gemm to contention
// Every efficiency in the order reports and the scenario's keys list them: the fractions and
// shares in the table's order, the time last.
inline std::vector<EfficiencyField> efficiency_fields_in_report_order() {
  std::vector<EfficiencyField> out;
  for (const bool seconds : {false, true})
    for (const EfficiencyField& f : kEfficiencyFields)
      if ((f.kind == EfficiencyKind::Seconds) == seconds) out.push_back(f);
  return out;
}
// What a report shows of `e`, in that order: the six dense efficiencies, then each share not at
// its default (1), then the MoE host time where it is not 0.
inline std::vector<EfficiencyField> shown_efficiencies(const Efficiency& e) {
  const Efficiency defaults;
  std::vector<EfficiencyField> shown;
  const std::vector<EfficiencyField> all = efficiency_fields_in_report_order();  // the dense six first
  for (std::size_t i = 0; i < all.size(); ++i)
    if (i < kDenseEfficiencies || e.*all[i].field != defaults.*all[i].field) shown.push_back(all[i]);
  return shown;
}

// How the GPU runs a GEMM, for tile and wave quantization (models/layer_costs.hpp,
// gemm_wave_efficiency): its SMs (streaming multiprocessors), each computing one tile_m x tile_n
// tile of the output at a time. sms 0: not modelled (every GEMM at peak x efficiency.gemm).
// The 256 x 128 tile is cuBLAS's and CUTLASS's usual large BF16 tile on A100 and H100, the one
// NVIDIA's "Matrix Multiplication Background User's Guide" (section "Wave quantization") uses.
struct GemmTiling {
  int sms = 0;
  int tile_m = 256;  // along the GEMM's M (the tokens, in the forward)
  int tile_n = 128;
  bool operator==(const GemmTiling&) const = default;
};

struct AcceleratorSpec {
  std::string name;
  double peak_bf16 = 0;            // dense BF16 tensor FLOP/s
  double peak_fp8 = 0;             // dense FP8 tensor FLOP/s (0: no FP8)
  std::int64_t hbm_bandwidth = 0;  // bytes/s
  Bytes memory = 0;
  Bytes usable_memory = 0;  // what training may use (CUDA context, NCCL buffers, fragmentation off)
  Efficiency efficiency;
  GemmTiling tiling;
  GpuArchitecture architecture = GpuArchitecture::Hopper;
  double peak_fp4 = 0;  // dense FP4 tensor FLOP/s (0: no FP4; Blackwell's NVFP4)
  // The peak a recipe's low-precision GEMMs run at: FP4 for nvfp4, else FP8 (0: none).
  double low_precision_peak(Fp8Recipe r) const { return r == Fp8Recipe::Nvfp4 ? peak_fp4 : peak_fp8; }
  bool operator==(const AcceleratorSpec&) const = default;
};

struct NodeSpec {
  int gpus = 8;
  std::int64_t fabric_bandwidth = 0;             // NVLink/NVSwitch bytes/s per GPU, each direction; 0: PCIe only
  // Per GPU, each direction (PCIe 4.0 x16): its peer link in a PCIe-only node, and every GPU's link
  // to its host (NVLink-C2C on Grace nodes), which an offloaded optimizer's copies cross.
  std::int64_t pcie_bandwidth = 32'000'000'000;
  bool p2p = true;  // PCIe-only nodes: peer-to-peer allowed (else through host memory, half rate)
  Time fabric_latency = 3 * kMicrosecond;  // per ring step inside a node
  // The host's memory, all sockets of the node: its size, and its bandwidth (channels x transfer
  // rate x 8 B: a peak, which a STREAM measurement of the host replaces). 0: not known.
  Bytes host_memory = 0;
  std::int64_t host_memory_bandwidth = 0;
  bool operator==(const NodeSpec&) const = default;
};

// A network tier: up to `nodes` nodes are joined at this level with `oversubscription`:1 (1 =
// full bisection). A group whose nodes do not fit in a tier's size crosses the next one.
struct NetworkTier {
  std::string name;
  std::int64_t nodes = 0;  // 0: unlimited (the top)
  double oversubscription = 1.0;
  bool operator==(const NetworkTier&) const = default;
};

struct NetworkSpec {
  int nics = 8;                                 // per node
  std::int64_t nic_bandwidth = 25'000'000'000;  // bytes/s per NIC, each direction
  Time latency = 5 * kMicrosecond;              // per ring step between nodes
  std::vector<NetworkTier> tiers;               // inner to outer; empty: one non-blocking tier
  bool operator==(const NetworkSpec&) const = default;
};

struct ClusterSpec {
  AcceleratorSpec accelerator;
  NodeSpec node;
  NetworkSpec network;
  // Each GPU's link to its host, each way, bytes/s: the node's host link at the share the fabric
  // efficiency gives its peer links (what offloaded optimizers and activations cross).
  double host_link_rate() const { return static_cast<double>(node.pcie_bandwidth) * accelerator.efficiency.fabric; }
  bool operator==(const ClusterSpec&) const = default;
};

// Presets by name: a100-sxm-80gb, h100-sxm, h800, h200, b200, gb200, rtx4090 (each value's
// source in accelerators.cpp). Each comes with its usual node (8 GPUs on NVSwitch, the GB200's
// 72 of an NVL72 rack, or PCIe for the 4090) and network (one NIC per GPU, 200/400 Gbit/s).
const ClusterSpec* find_cluster_preset(std::string_view name);
std::vector<std::string> cluster_preset_names();

// Whether FP8 GEMMs need a weight's transposed FP8 copy beside it (Ada, Hopper: TN-only GEMMs).
bool fp8_needs_transpose(GpuArchitecture a);

// Bytes/s per GPU a group's traffic can run at, and the per-step latency: inside one node the
// fabric, across nodes the NICs, divided by the oversubscription of the highest tier the group
// crosses. A member's own link (point to point, all-to-all) is its share of the node's NICs. A
// ring or tree collective is faster when the group has several members on a node: NCCL stripes
// its rings over those members' NICs, so the node's cross-node traffic, one member's (n-1)/n S
// per pass, leaves through all of them (an 8-GPU DGX A100 node: 192 GB/s all-reduce bus
// bandwidth on eight 200 Gbit/s NICs, NVIDIA/nccl issue 812), while its intra-node hops carry
// (k-1)/k of it on the fabric. An all-to-all cannot aggregate NICs (NVIDIA/nccl-tests issue 267).
struct PathBandwidth {
  double bytes_per_second = 0;       // a member's own link, with the efficiency applied
  double ring_bytes_per_second = 0;  // a ring or tree collective's rate per member
  Time step_latency = 0;
  bool inter_node = false;
};
PathBandwidth group_path(const ClusterSpec& c, std::int64_t nodes_spanned, std::int64_t members_per_node = 1);

}  // namespace stepsim
