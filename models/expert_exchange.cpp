#include "models/expert_exchange.hpp"

#include <algorithm>
#include <vector>

#include "models/moe_routing.hpp"

namespace stepsim {

ExpertRankLoad expert_rank_load(const JobModel& m, const JobLayout& l) {
  ExpertRankLoad out;
  if (m.experts <= 0 || m.even_routing()) return out;
  // The shares do not depend on the count past its rounding: at most 2^30 tokens are routed, so
  // that ep x T x top_k stays far inside int64 for any layout stepsim takes.
  constexpr std::int64_t kMostTokens = std::int64_t{1} << 30;
  const std::int64_t ep = std::max(1, l.ep);
  std::int64_t per_rank = std::int64_t{l.micro_batch} * m.seq / std::max(1, l.cp);
  if (l.folded()) per_rank = std::max<std::int64_t>(1, per_rank * l.etp() / l.tp);  // an expert TP group's share
  const std::int64_t tokens = per_rank >= kMostTokens / ep ? kMostTokens : per_rank * ep;
  const ExpertLoads loads = route_experts({m.experts, m.top_k, tokens, m.capacity_factor}, m.routing);
  const std::vector<std::int64_t> rows = card_rows(loads, static_cast<int>(ep), l.expert_placement);
  std::int64_t computed = 0;
  for (const std::int64_t r : rows) computed += r;
  const double routed = static_cast<double>(loads.dispatches);
  out.busiest = static_cast<double>(*std::max_element(rows.begin(), rows.end())) * static_cast<double>(ep) / routed;
  out.computed = static_cast<double>(computed) / routed;
  out.dropped = static_cast<double>(loads.dropped) / routed;
  out.capacity = loads.capacity;
  out.tokens = tokens;
  return out;
}

TokenReceipt per_node_receipt(const JobModel& m, int n, int local) {
  TokenReceipt r;
  n = std::max(1, n);
  local = std::clamp(local, 1, n);
  r.local = local;
  r.ranks_in_group = n;
  const int nodes = (n + local - 1) / local;
  const double per_gpu = static_cast<double>(m.experts) / n, on_node = per_gpu * local;
  if (m.device_limit > 0 && m.device_limit < n) {
    // Device-limited: the token's experts on `device_limit` ranks drawn evenly, each holding at
    // least one of them (the router picks the ranks by their experts' scores, then the top_k
    // among their experts): a GPU receives it with device_limit / n, a node unless none of its
    // GPUs is drawn, C(n - local, M) / C(n, M).
    r.chosen_nodes = nodes;
    r.gpu = static_cast<double>(m.device_limit) / n;
    double none = 1;
    for (int i = 0; i < m.device_limit; ++i) none *= std::max(0.0, static_cast<double>(n - local - i) / (n - i));
    r.node = 1 - none;
    return r;
  }
  // Otherwise the top_k are drawn from the experts of the chosen nodes (node-limited: node_limit
  // of them; else all), and a node or a GPU receives the token unless all top_k fall elsewhere
  // (drawn without replacement).
  r.chosen_nodes = m.node_limit > 0 ? std::min(m.node_limit, nodes) : nodes;
  const double pool = r.chosen_nodes * on_node;
  const auto receives = [&](double held) {  // P(some of the top_k is among `held` of the pool)
    double miss = 1;
    for (int i = 0; i < m.top_k; ++i) {
      const double left = pool - i;
      if (left <= held) return 1.0;  // only these experts are left to draw
      miss *= (left - held) / left;
    }
    return 1 - miss;
  };
  r.node = receives(on_node);
  r.gpu = receives(per_gpu);
  return r;
}

double ep_leg_seconds(const JobModel& m, const JobLayout& l, const GroupPaths& paths, double tokens,
                      double element_bytes) {
  const int n = l.ep;
  if (n <= 1 || tokens <= 0 || m.experts <= 0) return 0;
  const double row = static_cast<double>(m.shape.hidden) * element_bytes, k = m.top_k;
  const int local = std::max(1, paths.ep_per_node), nodes = (n + local - 1) / local;
  double intra = 0, inter = 0;  // bytes a member sends inside its node, and out of it
  if (l.ep_dispatch == EpDispatch::AllToAll) {
    // Each copy to its expert's member, 1/n of them per member (its own 1/n stays).
    intra = tokens * k * row * (local - 1) / n;
    inter = tokens * k * row * (n - local) / n;
  } else {
    // DeepEP's normal kernels (DeepSeek-V3 report sec. 3.2.2): a token crosses the network once
    // per remote node that holds one of its experts, to the GPU of its own local index there,
    // which forwards it over NVLink once to each other GPU of that node holding one of its
    // experts (DeepEP sends a token once per rank, `is_token_in_rank`, and the rank expands it
    // to its experts; its own node's GPUs get theirs from the sender the same way). The chosen
    // nodes are drawn evenly among the EP nodes, so a remote one with (nodes - 1) / nodes.
    const TokenReceipt r = per_node_receipt(m, n, local);
    inter = tokens * r.chosen_nodes * (nodes - 1.0) / nodes * r.node * row;
    intra = tokens * r.chosen_nodes * (local - 1) * r.gpu * row;
  }
  double seconds = intra / paths.ep_intra.bytes_per_second;
  if (inter > 0) seconds = std::max(seconds, inter / paths.ep.bytes_per_second);
  return (n - 1) * to_s(paths.ep.step_latency) + seconds;
}

}  // namespace stepsim
