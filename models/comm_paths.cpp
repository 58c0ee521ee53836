#include "models/comm_paths.hpp"

#include <algorithm>
#include <cmath>

namespace stepsim {

double ring_seconds(Collective c, int n, double bytes, const PathBandwidth& path) {
  if (n <= 1 || bytes <= 0) return 0;
  const double frac = static_cast<double>(n - 1) / n;
  const double passes = ring_passes(c);
  const double steps = passes * (n - 1);
  const double volume = passes * frac * bytes;
  const double rate = c == Collective::AllToAll ? path.bytes_per_second : path.ring_bytes_per_second;
  return steps * to_s(path.step_latency) + volume / rate;
}

double collective_seconds(Collective c, int n, double bytes, const PathBandwidth& path) {
  const double ring = ring_seconds(c, n, bytes, path);
  if (c != Collective::AllReduce || !path.inter_node || n <= 2 || bytes <= 0) return ring;
  const double tree = 2 * std::ceil(std::log2(n)) * to_s(path.step_latency) + 2 * bytes / path.ring_bytes_per_second;
  return std::min(ring, tree);
}

GroupPaths group_paths(const ClusterSpec& c, const JobLayout& l) {
  const std::int64_t g = std::max(1, c.node.gpus);
  // A group of n members at stride `stride` spans ceil(stride * n / g) nodes when stride < g,
  // else n nodes (every member on its own node); it has min(n, g / stride) members on a node.
  auto span = [g](std::int64_t stride, std::int64_t n) -> std::int64_t {
    if (n <= 1) return 1;
    if (stride >= g) return n;
    return (stride * n + g - 1) / g;
  };
  auto path = [&](std::int64_t stride, std::int64_t n) {
    return group_path(c, span(stride, n), stride >= g ? 1 : std::min(n, g / stride));
  };
  GroupPaths p;
  p.tp = path(1, l.tp);
  p.cp = path(l.tp, l.cp);
  // Folded, the expert grid orders expert TP innermost, then EP (Megatron-Core's expert rank
  // generator); else EP runs over data-parallel ranks, past TP and CP.
  const std::int64_t ep_stride = l.folded() ? l.etp() : static_cast<std::int64_t>(l.tp) * l.cp;
  p.etp = path(1, l.etp());
  p.ep = path(ep_stride, l.ep);
  p.ep_intra = group_path(c, 1);
  p.ep_per_node = ep_stride >= g ? 1 : static_cast<int>(std::min<std::int64_t>(l.ep, g / ep_stride));
  // The data-parallel collectives run among the dp x cp ranks holding the same weights (every
  // ring collective of models/job_memory.cpp's replica_collective_seconds); with HSDP among the
  // dp / dp_replicate x cp of one replica, and the replicas' all-reduce at the stride of one.
  const int shard_dp = l.dp / std::max(1, l.dp_replicate);
  p.dp = path(l.tp, static_cast<std::int64_t>(shard_dp) * l.cp);
  p.dp_replica = path(static_cast<std::int64_t>(l.tp) * l.cp * shard_dp, l.dp_replicate);
  // The expert data-parallel group: the data-parallel ranks ep apart (an expert-parallel group
  // is ep neighbouring ones, as p.ep), dp / ep of them (of one replica's); with ep >= dp it stays
  // inside one data-parallel rank's CP ranks.
  p.edp = l.folded() ? path(ep_stride * l.ep, l.expert_replicas() / l.stage_copies())
                     : path(static_cast<std::int64_t>(l.tp) * l.cp * l.ep, std::max(1, shard_dp / l.ep));
  // A framework slower than the network caps its data-parallel collectives.
  if (l.dp_bandwidth > 0) {
    const double cap = static_cast<double>(l.dp_bandwidth);
    for (PathBandwidth* q : {&p.dp, &p.edp, &p.dp_replica})
      q->ring_bytes_per_second = std::min(q->ring_bytes_per_second, cap);
  }
  // Point to point between neighbouring stages: one hop, inside the node when the stride fits.
  p.pp = group_path(c, static_cast<std::int64_t>(l.tp) * l.cp * l.dp >= g ? 2 : 1);
  return p;
}

}  // namespace stepsim
