#pragma once
// Where a layout's groups communicate and what their collectives cost there: each group's path
// (inside a node on the fabric, or across nodes on the NICs with the tiers it crosses) and the
// alpha-beta cost of a ring collective, or NCCL's tree for an all-reduce across nodes, on it.
#include "models/accelerators.hpp"
#include "models/collectives.hpp"
#include "models/job_spec.hpp"

namespace stepsim {

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
// (stride tp*cp; one replica's ranks under HSDP) and PP (stride tp*cp*dp) groups, ranks ordered
// tp, cp, dp, pp (Megatron).
struct GroupPaths {
  PathBandwidth tp, cp, ep, dp, pp;
  PathBandwidth dp_replica;  // HSDP: the same shard's dp_replicate replicas (stride: one replica's ranks)
  PathBandwidth edp;       // the expert data-parallel group: ranks ep data-parallel ranks apart
  PathBandwidth ep_intra;  // between the EP members on one node (the fabric)
  PathBandwidth etp;       // the routed experts' TP group (= tp unless folded)
  int ep_per_node = 1;     // EP members on one node
};
GroupPaths group_paths(const ClusterSpec& c, const JobLayout& l);

}  // namespace stepsim
