#include "models/accelerators.hpp"

#include <algorithm>

namespace stepsim {

namespace {
constexpr Bytes GiB = 1024LL * 1024 * 1024;
constexpr std::int64_t GBps = 1'000'000'000;
constexpr Bytes TB = 1'000'000'000'000;  // system memory as datasheets print it (decimal)
// Two 4th-generation Xeon Scalable sockets (Sapphire Rapids), each 8 channels of DDR5-4800.
constexpr std::int64_t kSapphireRapidsPair = 614'400'000'000;

ClusterSpec make(AcceleratorSpec a, NodeSpec n, NetworkSpec net, GpuArchitecture arch, double peak_fp4 = 0) {
  a.architecture = arch;
  a.peak_fp4 = peak_fp4;
  return {std::move(a), n, std::move(net)};
}
constexpr auto Ampere = GpuArchitecture::Ampere, Ada = GpuArchitecture::Ada, Hopper = GpuArchitecture::Hopper,
               Blackwell = GpuArchitecture::Blackwell;

const std::vector<ClusterSpec>& presets() {
  // Memory: the datasheet's "80 GB" and the like, which are GiB (nvidia-smi reports 81,920 MiB on
  // an A100 80 GB). Usable memory: what is left after the CUDA context, NCCL buffers and allocator
  // fragmentation; the same allowances as models/hardware.cpp (A100 76 GiB, H100 74.5 GiB, 4090
  // 22 GiB), and about 7 % off the others. A scenario that sets `memory` alone keeps the preset's
  // share of it usable.
  static const std::vector<ClusterSpec> all = {
      // NVIDIA A100 Tensor Core GPU datasheet (2021): 312 TFLOP/s dense BF16, no FP8, 80 GB
      // HBM2e at 2,039 GB/s (SXM), NVLink 3 600 GB/s total = 300 GB/s each direction.
      // DGX A100: 8 GPUs on NVSwitch, eight 200 Gbit/s HDR InfiniBand (one per GPU).
      // NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): 108 SMs.
      // Host (DGX A100 640 GB datasheet): two AMD EPYC 7742, 2 TB; each 8 channels of DDR4-3200,
      // 204.8 GB/s (AMD's specification).
      make({"a100-sxm-80gb", 312e12, 0, 2'039 * GBps / 1, 80 * GiB, 76 * GiB, {}, {108, 256, 128}},
           {8, 300 * GBps, 32 * GBps, true, 3 * kMicrosecond, 2 * TB, 409'600'000'000},
           {8, 25 * GBps, 5 * kMicrosecond, {}}, Ampere),
      // NVIDIA H100 Tensor Core GPU datasheet (SXM5): 989.4 TFLOP/s dense BF16, 1,978.9 dense
      // FP8, 80 GB HBM3 at 3.35 TB/s, NVLink 4 900 GB/s total = 450 each direction. DGX H100:
      // eight 400 Gbit/s ConnectX-7 (one per GPU). NVIDIA H100 Tensor Core GPU Architecture
      // whitepaper (2022): 132 SMs on the SXM5 part. Host (DGX H100 datasheet): two Xeon Platinum
      // 8480C, 2 TB; each 8 channels of DDR5-4800, 307.2 GB/s.
      make({"h100-sxm", 989.4e12, 1978.9e12, 3'350 * GBps, 80 * GiB, 74 * GiB + GiB / 2, {}, {132, 256, 128}},
           {8, 450 * GBps, 64 * GBps, true, 3 * kMicrosecond, 2 * TB, kSapphireRapidsPair},
           {8, 50 * GBps, 5 * kMicrosecond, {}}, Hopper),
      // H800 SXM5: the H100 die with NVLink cut to 400 GB/s total = 200 each direction (NVIDIA
      // H800 product brief; DeepSeek-V3 report sec. 3.1), 8 x 400 Gbit/s InfiniBand per node;
      // the H100 SXM5's 132 SMs. Host: the DGX H100's (the DGX H800 is its export version).
      make({"h800", 989.4e12, 1978.9e12, 3'350 * GBps, 80 * GiB, 74 * GiB + GiB / 2, {}, {132, 256, 128}},
           {8, 200 * GBps, 64 * GBps, true, 3 * kMicrosecond, 2 * TB, kSapphireRapidsPair},
           {8, 50 * GBps, 5 * kMicrosecond, {}}, Hopper),
      // NVIDIA H200 datasheet: H100 compute (132 SMs), 141 GB HBM3e at 4.8 TB/s, NVLink 900 GB/s
      // total. Host (DGX H200 datasheet): two Xeon Platinum 8480C, 2 TB.
      make({"h200", 989.4e12, 1978.9e12, 4'800 * GBps, 141 * GiB, 131 * GiB, {}, {132, 256, 128}},
           {8, 450 * GBps, 64 * GBps, true, 3 * kMicrosecond, 2 * TB, kSapphireRapidsPair},
           {8, 50 * GBps, 5 * kMicrosecond, {}}, Hopper),
      // NVIDIA DGX B200 datasheet: 72 PFLOP/s FP8 training for 8 GPUs = 4.5 dense FP8 per GPU,
      // 2.25 PFLOP/s dense BF16, 180 GB HBM3e per GPU (1,440 GB per 8), 8 TB/s, NVLink 5 1.8 TB/s
      // total = 900 GB/s each direction; 8 x 400 Gbit/s ConnectX-7. 148 SMs (the count CUDA's
      // device properties report for B200; NVIDIA's datasheet does not print it). FP4: 144
      // PFLOP/s for 8 GPUs with sparsity (the same datasheet) = 9 dense per GPU. Host (the same
      // datasheet): two Xeon Platinum 8570, 2 TB (4 TB as an option); each 8 channels of DDR5-5600,
      // 358.4 GB/s.
      make({"b200", 2250e12, 4500e12, 8'000 * GBps, 180 * GiB, 167 * GiB, {}, {148, 256, 128}},
           {8, 900 * GBps, 64 * GBps, true, 3 * kMicrosecond, 2 * TB, 716'800'000'000},
           {8, 50 * GBps, 5 * kMicrosecond, {}}, Blackwell, 9000e12),
      // NVIDIA GB200 NVL72 (product page and datasheet): per rack of 72 Blackwell GPUs 720 PFLOP/s
      // FP8 and 360 BF16 with sparsity = 5 and 2.5 PFLOP/s dense per GPU (above the B200's: its
      // higher power), 13.4 TB of HBM3e at 576 TB/s = 186 GB and 8 TB/s per GPU, NVLink 5 130 TB/s
      // = 1.8 TB/s per GPU (900 GB/s each direction) across all 72: the node is the NVLink domain.
      // One 400 Gbit/s ConnectX-7 per GPU (MLPerf's GB200 NVL72 system descriptions: four in each
      // 4-GPU tray). The B200 die's 148 SMs. FP4: 1,440 PFLOP/s a rack with sparsity = 10 dense per
      // GPU. Host: the rack's 36 Grace CPUs, up to 17 TB of LPDDR5X at up to 18.4 TB/s (the same
      // datasheet); each Grace reaches its two GPUs over NVLink-C2C, 900 GB/s both ways (the GB200
      // superchip's): 225 GB/s per GPU each direction, the host link.
      make({"gb200", 2500e12, 5000e12, 8'000 * GBps, 186 * GiB, 172 * GiB, {}, {148, 256, 128}},
           {72, 900 * GBps, 225 * GBps, true, 3 * kMicrosecond, 17 * TB, 18'400 * GBps},
           {72, 50 * GBps, 5 * kMicrosecond, {}}, Blackwell, 10000e12),
      // NVIDIA GB300 NVL72 (Blackwell Ultra; NVIDIA technical blog "Inside NVIDIA Blackwell Ultra",
      // 2025, and the rack's figures per GPU): FP8 and BF16 as the GB200's, 5 and 2.5 PFLOP/s dense
      // and 15 dense NVFP4 (Blackwell Ultra's 1.5x Blackwell's; it also doubles the attention's
      // exponentials, which stepsim does not time), 288 GB of HBM3e at 8 TB/s, NVLink 5 at 1.8 TB/s per GPU across all
      // 72, and one 800 Gbit/s ConnectX-8 SuperNIC per GPU. 160 SMs (the same blog: the full GPU, as
      // its 15 PFLOP/s of NVFP4 count them). Host: the GB200's Grace CPUs and C2C links, taken as
      // they are (not checked against a GB300 datasheet).
      make({"gb300", 2500e12, 5000e12, 8'000 * GBps, 288 * GiB, 268 * GiB, {}, {160, 256, 128}},
           {72, 900 * GBps, 225 * GBps, true, 3 * kMicrosecond, 17 * TB, 18'400 * GBps},
           {72, 100 * GBps, 5 * kMicrosecond, {}}, Blackwell, 15000e12),
      // NVIDIA Ada Lovelace architecture whitepaper (RTX 4090): 165.2 TFLOP/s dense BF16 (FP16
      // accumulate), 330.3 dense FP8, 24 GB GDDR6X at 1,008 GB/s; no NVLink, no peer-to-peer
      // (PCIe 4.0 x16, 32 GB/s each direction; exchanges go through host memory). Hosts of 8
      // cards with eight 200 Gbit/s NICs, as in the book's design desk (reference section 2).
      // The same whitepaper: 128 SMs on the RTX 4090 (of AD102's 144). Host: the book's (section
      // 10.2.3), one 4th-generation Xeon with 8 channels of DDR5-4800, 307.2 GB/s; its size is not
      // given: 512 GiB, a 64 GB module in each channel, is assumed (hardware.node.host_memory).
      make({"rtx4090", 165.2e12, 330.3e12, 1'008 * GBps, 24 * GiB, 22 * GiB, {}, {128, 256, 128}},
           {8, 0, 32 * GBps, false, 10 * kMicrosecond, 512 * GiB, 307'200'000'000},
           {8, 25 * GBps, 5 * kMicrosecond, {}}, Ada),
  };
  return all;
}
}  // namespace

bool fp8_needs_transpose(GpuArchitecture a) { return a == GpuArchitecture::Ada || a == GpuArchitecture::Hopper; }

const ClusterSpec* find_cluster_preset(std::string_view name) {
  for (const auto& c : presets())
    if (c.accelerator.name == name) return &c;
  return nullptr;
}

std::vector<std::string> cluster_preset_names() {
  std::vector<std::string> out;
  for (const auto& c : presets()) out.push_back(c.accelerator.name);
  return out;
}

PathBandwidth group_path(const ClusterSpec& c, std::int64_t nodes_spanned, std::int64_t members_per_node) {
  PathBandwidth p;
  const Efficiency& e = c.accelerator.efficiency;
  // Inside a node: NVLink/NVSwitch per GPU; PCIe-only cards without P2P bounce through host
  // memory, each byte crossing PCIe twice (half the rate).
  const double fabric =
      (c.node.fabric_bandwidth > 0 ? static_cast<double>(c.node.fabric_bandwidth)
                                   : static_cast<double>(c.node.pcie_bandwidth) / (c.node.p2p ? 1.0 : 2.0)) *
      e.fabric;
  if (nodes_spanned <= 1) {
    p.bytes_per_second = p.ring_bytes_per_second = fabric;
    p.step_latency = c.node.fabric_latency;
    return p;
  }
  // Across nodes: a member's share of the node's NICs (NCCL's rings run one per NIC).
  const double share = static_cast<double>(c.network.nic_bandwidth) * c.network.nics / std::max(1, c.node.gpus);
  double over = 1.0;
  for (const auto& t : c.network.tiers) {
    over = t.oversubscription;
    if (t.nodes == 0 || nodes_spanned <= t.nodes) break;
  }
  // Only tiers the group crosses count: inside the first tier's size the first ratio applies.
  p.bytes_per_second = share / std::max(1.0, over) * e.network;
  // A ring with k members on a node: its cross-node traffic leaves through the k members' NICs.
  // Its hops inside the node carry (k-1)/k of a member's traffic on NVLink; on a PCIe-only node
  // all of it crosses the member's own PCIe lane (to a peer, through host memory, or to a NIC).
  // Whichever is slower sets the rate.
  const double k = static_cast<double>(std::max<std::int64_t>(1, members_per_node));
  const double lane = c.node.fabric_bandwidth > 0 ? fabric * k / (k - 1) : c.node.pcie_bandwidth * e.fabric;
  p.ring_bytes_per_second = k > 1 ? std::min(k * p.bytes_per_second, lane) : p.bytes_per_second;
  p.step_latency = c.network.latency;
  p.inter_node = true;
  return p;
}

}  // namespace stepsim
