#include "schedules/lowering/data_parallel/data_parallel.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace stepsim {

namespace {

// One unit computation of the step in compute order: a unit's forward or backward in a micro-batch.
struct Position {
  int micro;
  int unit;
  bool backward;
};

// Where in a card's compute sequence (index of the op in program order) a position's ops sit.
struct PositionOps {
  int first, grad, last;  // grad: the op whose end produces the unit's gradient (-1 forward)
};

// A collective as every rank issues it: the same list, in the same order, on every card.
struct CollectivePlan {
  DpOp kind;
  Time duration;
  Bytes wire_bytes;
  int issue_after;  // compute sequence index it is issued after; -1 = at the step start
  int rank;         // at one issue point: reductions (0) before gathers (1)
  int consumer;     // position whose first op waits for it; -1 = none
  int micro, unit, bucket;
  bool for_backward;
};

Time scaled(Time t, double scale) {
  if (scale == 1.0) return t;
  return static_cast<Time>(std::llround(static_cast<double>(t) * scale));
}

}  // namespace

std::shared_ptr<DataParallelProgram> lower_data_parallel(const DataParallelPlan& plan) {
  auto owned = std::make_shared<DataParallelProgram>();
  DataParallelProgram& prog = *owned;  // on the heap: the namer below points into it
  OpGraph& g = prog.graph;
  const int units = static_cast<int>(plan.units.size());
  const bool split = plan.order != BackwardOrder::Fused;

  // --- compute order, the same on every card
  std::vector<Position> positions;
  for (int m = 0; m < plan.microbatches; ++m) {
    for (int u = 0; u < units; ++u) positions.push_back({m, u, false});
    for (int u = units - 1; u >= 0; --u) positions.push_back({m, u, true});
  }
  std::vector<PositionOps> pos_ops;
  int seq = 0;
  for (const auto& p : positions) {
    if (!p.backward) { pos_ops.push_back({seq, -1, seq}); seq += 1; continue; }
    if (!split) { pos_ops.push_back({seq, seq, seq}); seq += 1; continue; }
    const int grad = plan.order == BackwardOrder::WeightFirst ? seq : seq + 1;
    pos_ops.push_back({seq, grad, seq + 1});
    seq += 2;
  }
  const int ops_per_card = seq;

  // --- collectives in issue order
  std::vector<CollectivePlan> colls;
  if (plan.zero3) {
    for (int k = 0; k < static_cast<int>(positions.size()); ++k) {
      const Position& p = positions[k];
      const auto& u = plan.units[p.unit];
      const bool needs_gather = !p.backward || !plan.keep_gathered;
      if (needs_gather && u.has_gather) {
        const int before = k - plan.prefetch - 1;
        colls.push_back({DpOp::Gather, u.gather, u.gather_bytes, before >= 0 ? pos_ops[before].last : -1, 1, k, p.micro,
                         p.unit, -1, p.backward});
      }
      if (p.backward && u.has_reduce)
        colls.push_back({DpOp::ReduceScatter, u.reduce, u.reduce_bytes, pos_ops[k].grad, 0, -1, p.micro, p.unit, -1, true});
    }
  } else {
    // Positions of the last micro-batch's backward, by unit.
    std::vector<int> last_backward(units, -1);
    for (int k = 0; k < static_cast<int>(positions.size()); ++k)
      if (positions[k].backward && positions[k].micro == plan.microbatches - 1) last_backward[positions[k].unit] = k;
    for (int b = 0; b < static_cast<int>(plan.buckets.size()); ++b) {
      const auto& bucket = plan.buckets[b];
      const int last_unit = bucket.units.back();
      colls.push_back({DpOp::AllReduce, bucket.duration, bucket.wire_bytes, pos_ops[last_backward[last_unit]].grad, 0, -1,
                       plan.microbatches - 1, last_unit, b, true});
    }
  }
  std::stable_sort(colls.begin(), colls.end(), [](const CollectivePlan& a, const CollectivePlan& b) {
    return a.issue_after != b.issue_after ? a.issue_after < b.issue_after : a.rank < b.rank;
  });
  prog.collectives = static_cast<int>(colls.size());
  for (const auto& c : colls) prog.bytes_per_card += c.wire_bytes;

  // --- simulated ranks and their resources
  if (plan.fold) prog.cards = {0};
  else
    for (int c = 0; c < plan.cards; ++c) prog.cards.push_back(c);
  const int n = static_cast<int>(prog.cards.size());
  const bool on_nic = plan.link == LinkKind::HostNic;
  const auto add_info = [&](OpId op, DpOpInfo info) {
    if (prog.info.size() <= op) prog.info.resize(op + 1);
    prog.info[op] = info;
  };
  for (int i = 0; i < n; ++i) {
    const int card = prog.cards[i];
    prog.compute.push_back(g.add_resource(fmt::format("card {} compute", card)));
    prog.lane.push_back(on_nic || colls.empty() ? kNoResource
                                                : g.add_resource(fmt::format("card {} {}", card, link_kind_name(plan.link))));
    prog.input.push_back(plan.input_wait > 0 ? g.add_resource(fmt::format("card {} input", card)) : kNoResource);
    const int host = card / plan.cards_per_host;
    if (prog.hosts.empty() || prog.hosts.back() != host) {
      prog.hosts.push_back(host);
      prog.nic.push_back(on_nic && !colls.empty() ? g.add_resource(fmt::format("host {} NIC", host)) : kNoResource);
    }
    prog.card_host.push_back(static_cast<int>(prog.hosts.size()) - 1);
  }
  const ResourceId sync = (n > 1 && !colls.empty()) ? g.add_resource("collectives") : kNoResource;

  // --- compute and input ops
  std::vector<std::vector<OpId>> seq_ops(n, std::vector<OpId>(ops_per_card));
  std::vector<OpId> input_op(n, kNoOp);
  for (int i = 0; i < n; ++i) {
    const int card = prog.cards[i];
    const double scale = plan.compute_scale.empty() ? 1.0 : plan.compute_scale[card];
    if (prog.input[i] != kNoResource) {
      input_op[i] = g.add_op(prog.input[i], plan.input_wait);
      add_info(input_op[i], {DpOp::Input, card, -1, -1, -1, -1, false});
    }
    int s = 0;
    for (const auto& p : positions) {
      const auto& u = plan.units[p.unit];
      const auto emit = [&](DpOp kind, Time d) {
        const OpId op = g.add_op(prog.compute[i], scaled(d, scale));
        add_info(op, {kind, card, -1, p.micro, p.unit, -1, p.backward});
        if (s == 0 && input_op[i] != kNoOp) g.add_dep(input_op[i], op);
        seq_ops[i][s++] = op;
      };
      if (!p.backward) emit(DpOp::Forward, u.forward);
      else if (!split) emit(DpOp::Backward, u.backward_input + u.backward_weight);
      else if (plan.order == BackwardOrder::InputFirst) {
        emit(DpOp::BackwardInput, u.backward_input);
        emit(DpOp::BackwardWeight, u.backward_weight);
      } else {
        emit(DpOp::BackwardWeight, u.backward_weight);
        emit(DpOp::BackwardInput, u.backward_input);
      }
    }
    prog.last_compute.push_back(ops_per_card > 0 ? seq_ops[i].back() : kNoOp);
  }

  // --- collective ops
  const auto issue_op = [&](int i, int after) { return after >= 0 ? seq_ops[i][after] : input_op[i]; };
  std::vector<OpId> last_on(g.resource_count(), kNoOp);
  std::vector<OpId> member_op;  // per member resource index (lane: card index, NIC: host index)
  for (const auto& c : colls) {
    const auto info_for = [&](int card, int host) {
      return DpOpInfo{c.kind, card, host, c.micro, c.unit, c.bucket, c.for_backward};
    };
    std::vector<std::pair<ResourceId, OpId>> ops;  // member resource, its op
    if (on_nic) {
      for (std::size_t h = 0; h < prog.hosts.size(); ++h) {
        const OpId op = g.add_op(prog.nic[h], c.duration);
        add_info(op, info_for(-1, prog.hosts[h]));
        ops.push_back({prog.nic[h], op});
      }
    } else {
      for (int i = 0; i < n; ++i) {
        const OpId op = g.add_op(prog.lane[i], c.duration);
        add_info(op, info_for(prog.cards[i], -1));
        ops.push_back({prog.lane[i], op});
      }
    }
    const auto op_of_card = [&](int i) { return on_nic ? ops[prog.card_host[i]].second : ops[i].second; };
    if (sync != kNoResource) {
      const OpId join = g.add_op(sync, 0);
      add_info(join, {DpOp::Join, -1, -1, c.micro, c.unit, c.bucket, c.for_backward});
      for (int i = 0; i < n; ++i)
        if (const OpId before = issue_op(i, c.issue_after); before != kNoOp) g.add_dep(before, join);
      for (const auto& [r, op] : ops) {
        if (last_on[r] != kNoOp) g.add_dep(last_on[r], join);
        g.add_dep(join, op);
      }
    } else {
      for (int i = 0; i < n; ++i)
        if (const OpId before = issue_op(i, c.issue_after); before != kNoOp) g.add_dep(before, op_of_card(i));
    }
    for (const auto& [r, op] : ops) last_on[r] = op;
    if (c.consumer >= 0)
      for (int i = 0; i < n; ++i) g.add_dep(op_of_card(i), seq_ops[i][pos_ops[c.consumer].first]);
  }
  prog.info.resize(g.op_count());

  std::vector<std::string> names;
  for (const auto& u : plan.units) names.push_back(u.name);
  g.set_namer([names = std::move(names), info = &prog.info](OpId op) {
    const DpOpInfo& x = (*info)[op];
    const std::string who = x.card >= 0 ? fmt::format("card {}", x.card) : fmt::format("host {}", x.host);
    const std::string unit = x.unit >= 0 ? names[x.unit] : "";
    switch (x.kind) {
      case DpOp::Input: return fmt::format("{} input wait", who);
      case DpOp::Forward: return fmt::format("{} F {} mb{}", who, unit, x.micro);
      case DpOp::Backward: return fmt::format("{} B {} mb{}", who, unit, x.micro);
      case DpOp::BackwardInput: return fmt::format("{} dX {} mb{}", who, unit, x.micro);
      case DpOp::BackwardWeight: return fmt::format("{} dW {} mb{}", who, unit, x.micro);
      case DpOp::Gather: return fmt::format("{} AG {} {} mb{}", who, unit, x.for_backward ? "bwd" : "fwd", x.micro);
      case DpOp::ReduceScatter: return fmt::format("{} RS {} mb{}", who, unit, x.micro);
      case DpOp::AllReduce: return fmt::format("{} AR bucket {}", who, x.bucket);
      case DpOp::Join: return fmt::format("join of collective on {} mb{}", unit, x.micro);
    }
    return std::string("?");
  });
  g.finalize();
  return owned;
}

DataParallelResult measure_data_parallel(const DataParallelPlan& plan, const DataParallelProgram& prog, const Timeline& t) {
  const OpGraph& g = prog.graph;
  const std::vector<Time> busy = resource_busy(g, t);
  std::vector<Time> last_done(g.resource_count(), 0);
  for (OpId op = 0; op < g.op_count(); ++op)
    last_done[g.op_resource(op)] = std::max(last_done[g.op_resource(op)], t.done(g, op));

  DataParallelResult r;
  r.cards = plan.cards;
  r.simulated_ranks = static_cast<int>(prog.cards.size());
  r.folded = plan.fold && plan.cards > 1;
  r.step_time = t.makespan;
  r.input_wait = plan.input_wait;
  r.link = plan.link;
  r.link_bandwidth = plan.link_bandwidth;
  r.collectives_per_card = prog.collectives;
  r.bytes_per_card = prog.bytes_per_card;
  for (const auto& u : plan.units) {
    if (u.has_gather) r.gather_bytes_per_pass += u.gather_bytes;
    if (u.has_reduce) r.reduce_bytes_per_pass += u.reduce_bytes;
  }
  if (!plan.zero3)
    for (const auto& b : plan.buckets) r.reduce_bytes_per_pass += b.wire_bytes;
  for (std::size_t i = 0; i < prog.cards.size(); ++i) {
    DataParallelRankStats s;
    s.card = prog.cards[i];
    s.compute_busy = busy[prog.compute[i]];
    const ResourceId link = plan.link == LinkKind::HostNic ? prog.nic[prog.card_host[i]] : prog.lane[i];
    s.end = last_done[prog.compute[i]];
    if (link != kNoResource) {
      s.link_busy = busy[link];
      s.end = std::max(s.end, last_done[link]);
    }
    if (prog.input[i] != kNoResource) s.end = std::max(s.end, last_done[prog.input[i]]);
    s.exposed = s.end - plan.input_wait - s.compute_busy;
    r.compute_time = std::max(r.compute_time, s.compute_busy);
    r.link_time = std::max(r.link_time, s.link_busy);
    r.ranks.push_back(s);
  }
  r.exposed_comm = r.step_time - plan.input_wait - r.compute_time;
  return r;
}

}  // namespace stepsim
