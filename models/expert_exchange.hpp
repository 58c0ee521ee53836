#pragma once
// An MoE layer's expert parallelism: how the router's tokens load the EP ranks (the busiest
// rank sets the step), where a token goes under DeepEP's per-node dispatch, and what one leg of
// the token exchange (the dispatch or the combine) costs on the fabric and the network.
#include <algorithm>
#include <cstdint>
#include <optional>

#include "models/comm_paths.hpp"
#include "models/job_spec.hpp"

namespace stepsim {

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

}  // namespace stepsim
