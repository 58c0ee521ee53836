#include "schedules/lowering/data_parallel/data_parallel.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/checked.hpp"

namespace stepsim {

namespace {

Time scaled(Time t, double scale) {
  if (scale == 1.0) return t;
  return time_from_ns(static_cast<double>(t) * scale, "a scaled duration");
}

}  // namespace

DpComputeOrder data_parallel_order(const DataParallelPlan& plan) {
  DpComputeOrder order;
  const int units = static_cast<int>(plan.units.size());
  for (int m = 0; m < plan.microbatches; ++m) {
    for (int u = 0; u < units; ++u) order.positions.push_back({m, u, false});
    for (int u = units - 1; u >= 0; --u) order.positions.push_back({m, u, true});
  }
  int seq = 0;
  for (const auto& p : order.positions) {
    if (!p.backward) {
      order.ops.push_back({seq, -1, seq});
      seq += 1;
      continue;
    }
    if (plan.order == BackwardOrder::Fused) {
      order.ops.push_back({seq, seq, seq});
      seq += 1;
      continue;
    }
    const int grad = plan.order == BackwardOrder::WeightFirst ? seq : seq + 1;
    order.ops.push_back({seq, grad, seq + 1});
    seq += 2;
  }
  order.ops_per_card = seq;
  return order;
}

namespace {

// ZeRO-3: per position, the gather it waits for (unless kept from the forward) and, for a
// backward, the ReduceScatter of its gradient.
void zero3_collectives(const DataParallelPlan& plan, const DpComputeOrder& order, std::vector<DpCollective>& colls) {
  for (int k = 0; k < static_cast<int>(order.positions.size()); ++k) {
    const DpPosition& p = order.positions[k];
    const auto& u = plan.units[p.unit];
    const bool needs_gather = !p.backward || !plan.keep_gathered;
    if (needs_gather && u.has_gather) {
      const int before = k - plan.prefetch - 1;
      // A backward's gathers run back to back before it: one op of their summed time and bytes.
      const Time regather = p.backward ? u.regather : 0;
      const Bytes regather_bytes = p.backward ? u.regather_bytes : 0;
      colls.push_back({DpOp::Gather, u.gather + regather, u.gather_bytes + regather_bytes,
                       before >= 0 ? order.ops[before].last : -1, 1, k, p.micro, p.unit, -1, p.backward});
    }
    if (p.backward && u.has_reduce)
      colls.push_back(
          {DpOp::ReduceScatter, u.reduce, u.reduce_bytes, order.ops[k].grad, 0, -1, p.micro, p.unit, -1, true});
  }
}

// DDP: a bucket's AllReduce after its last unit's gradient in the last micro-batch.
void ddp_collectives(const DataParallelPlan& plan, const DpComputeOrder& order, std::vector<DpCollective>& colls) {
  std::vector<int> last_backward(plan.units.size(), -1);  // position, by unit
  for (int k = 0; k < static_cast<int>(order.positions.size()); ++k)
    if (order.positions[k].backward && order.positions[k].micro == plan.microbatches - 1)
      last_backward[order.positions[k].unit] = k;
  for (int b = 0; b < static_cast<int>(plan.buckets.size()); ++b) {
    const auto& bucket = plan.buckets[b];
    const int last_unit = bucket.units.back();
    colls.push_back({DpOp::AllReduce, bucket.duration, bucket.wire_bytes, order.ops[last_backward[last_unit]].grad, 0,
                     -1, plan.microbatches - 1, last_unit, b, true});
  }
}

}  // namespace

std::vector<DpCollective> data_parallel_collectives(const DataParallelPlan& plan, const DpComputeOrder& order) {
  std::vector<DpCollective> colls;
  if (plan.zero3)
    zero3_collectives(plan, order, colls);
  else
    ddp_collectives(plan, order, colls);
  std::stable_sort(colls.begin(), colls.end(), [](const DpCollective& a, const DpCollective& b) {
    return a.issue_after != b.issue_after ? a.issue_after < b.issue_after : a.rank < b.rank;
  });
  return colls;
}

std::vector<std::string> check_collectives(const DpComputeOrder& order, const std::vector<DpCollective>& colls) {
  std::vector<std::string> problems;
  const int positions = static_cast<int>(order.positions.size());
  for (std::size_t i = 0; i < colls.size(); ++i) {
    const DpCollective& c = colls[i];
    if (i > 0 && std::pair(colls[i - 1].issue_after, colls[i - 1].rank) > std::pair(c.issue_after, c.rank))
      problems.push_back(fmt::format("collective {}: issued out of order", i));
    if (c.issue_after < -1 || c.issue_after >= order.ops_per_card)
      problems.push_back(fmt::format("collective {}: issue point {} is not in the compute sequence", i, c.issue_after));
    if (c.consumer < -1 || c.consumer >= positions)
      problems.push_back(fmt::format("collective {}: consumer {} is not a position", i, c.consumer));
    else if (c.consumer >= 0 && c.issue_after >= order.ops[c.consumer].first)
      problems.push_back(fmt::format("collective {}: issued after its consumer starts", i));
    if (c.duration < 0 || c.wire_bytes < 0) problems.push_back(fmt::format("collective {}: negative size", i));
  }
  return problems;
}

namespace {

// Op emission: resources per simulated card, each card's compute sequence, then the collectives
// in issue order. Op ids follow that order (the engine breaks ties by op id).
class DpEmitter {
 public:
  DpEmitter(const DataParallelPlan& plan, const DpComputeOrder& order, const std::vector<DpCollective>& colls,
            DataParallelProgram& prog)
      : plan_(plan),
        order_(order),
        colls_(colls),
        prog_(prog),
        g_(prog.graph),
        on_nic_(plan.link == LinkKind::HostNic) {}

  void resources() {
    if (plan_.fold)
      prog_.cards = {0};
    else
      for (int c = 0; c < plan_.cards; ++c) prog_.cards.push_back(c);
    n_ = static_cast<int>(prog_.cards.size());
    for (int i = 0; i < n_; ++i) {
      const int card = prog_.cards[i];
      prog_.compute.push_back(g_.add_resource(fmt::format("card {} compute", card)));
      prog_.lane.push_back(on_nic_ || colls_.empty()
                               ? kNoResource
                               : g_.add_resource(fmt::format("card {} {}", card, link_kind_name(plan_.link))));
      prog_.input.push_back(plan_.input_wait > 0 ? g_.add_resource(fmt::format("card {} input", card)) : kNoResource);
      const int host = card / plan_.cards_per_host;
      if (prog_.hosts.empty() || prog_.hosts.back() != host) {
        prog_.hosts.push_back(host);
        prog_.nic.push_back(on_nic_ && !colls_.empty() ? g_.add_resource(fmt::format("host {} NIC", host))
                                                       : kNoResource);
      }
      prog_.card_host.push_back(static_cast<int>(prog_.hosts.size()) - 1);
    }
    sync_ = (n_ > 1 && !colls_.empty()) ? g_.add_resource("collectives") : kNoResource;
  }

  // The op and dependency counts are known once the resources are: reserve them, so that the
  // graph's arrays (and the op info) are allocated once instead of doubling and copying (an
  // unfolded 16,384-card step holds tens of millions of ops).
  void reserve() {
    const std::size_t n = static_cast<std::size_t>(n_), inputs = plan_.input_wait > 0 ? n : 0;
    const std::size_t members = on_nic_ ? prog_.hosts.size() : n, join = sync_ != kNoResource ? 1 : 0;
    std::size_t ops = n * static_cast<std::size_t>(order_.ops_per_card) + inputs, deps = inputs;
    for (const auto& c : colls_) {
      ops += members + join;
      deps += join ? n + members + 1 : n;  // issue -> join, the previous collective -> join -> op
      if (c.consumer >= 0) deps += n;
    }
    g_.reserve(ops, deps);
    prog_.info.reserve(ops);
  }

  void compute() {
    seq_ops_.assign(n_, std::vector<OpId>(order_.ops_per_card));
    input_op_.assign(n_, kNoOp);
    for (int i = 0; i < n_; ++i) {
      const int card = prog_.cards[i];
      if (prog_.input[i] != kNoResource) {
        input_op_[i] = g_.add_op(prog_.input[i], plan_.input_wait);
        add_info(input_op_[i], {DpOp::Input, false, false, card, -1, -1});
      }
      card_compute(i);
      prog_.last_compute.push_back(order_.ops_per_card > 0 ? seq_ops_[i].back() : kNoOp);
    }
  }

  void collectives() {
    last_on_.assign(g_.resource_count(), kNoOp);
    for (const auto& c : colls_) collective(c);
    prog_.info.resize(g_.op_count());
  }

 private:
  void add_info(OpId op, DpOpInfo info) {
    if (prog_.info.size() <= op) prog_.info.resize(op + 1);
    prog_.info[op] = info;
  }

  void card_compute(int i) {
    const int card = prog_.cards[i];
    const double scale = plan_.compute_scale.empty() ? 1.0 : plan_.compute_scale[card];
    int s = 0;
    for (const auto& p : order_.positions) {
      const auto& u = plan_.units[p.unit];
      const auto emit = [&](DpOp kind, Time d) {
        const OpId op = g_.add_op(prog_.compute[i], scaled(d, scale));
        add_info(op, {kind, p.backward, false, card, p.micro, p.unit});
        if (s == 0 && input_op_[i] != kNoOp) g_.add_dep(input_op_[i], op);
        seq_ops_[i][s++] = op;
      };
      if (!p.backward)
        emit(DpOp::Forward, u.forward);
      else if (plan_.order == BackwardOrder::Fused)
        emit(DpOp::Backward, time_add(u.backward_input, u.backward_weight, "a fused backward (input + weight)"));
      else if (plan_.order == BackwardOrder::InputFirst) {
        emit(DpOp::BackwardInput, u.backward_input);
        emit(DpOp::BackwardWeight, u.backward_weight);
      } else {
        emit(DpOp::BackwardWeight, u.backward_weight);
        emit(DpOp::BackwardInput, u.backward_input);
      }
    }
  }

  OpId issue_op(int i, int after) const { return after >= 0 ? seq_ops_[i][after] : input_op_[i]; }

  // One op per member resource (each card's lane, or each host's NIC); with several simulated
  // ranks a zero-time join makes the members start together.
  void collective(const DpCollective& c) {
    std::vector<std::pair<ResourceId, OpId>> ops;  // member resource, its op
    if (on_nic_) {
      for (std::size_t h = 0; h < prog_.hosts.size(); ++h) {
        const OpId op = g_.add_op(prog_.nic[h], c.duration);
        add_info(op, {c.kind, c.for_backward, true, prog_.hosts[h], c.micro, c.unit});
        ops.push_back({prog_.nic[h], op});
      }
    } else {
      for (int i = 0; i < n_; ++i) {
        const OpId op = g_.add_op(prog_.lane[i], c.duration);
        add_info(op, {c.kind, c.for_backward, false, prog_.cards[i], c.micro, c.unit});
        ops.push_back({prog_.lane[i], op});
      }
    }
    const auto op_of_card = [&](int i) { return on_nic_ ? ops[prog_.card_host[i]].second : ops[i].second; };
    if (sync_ != kNoResource) {
      const OpId join = g_.add_op(sync_, 0);
      add_info(join, {DpOp::Join, c.for_backward, false, -1, c.micro, c.unit});
      for (int i = 0; i < n_; ++i)
        if (const OpId before = issue_op(i, c.issue_after); before != kNoOp) g_.add_dep(before, join);
      // The previous collective's ops all started at its join and last c.duration (member
      // resources carry nothing else), so they end together: waiting for one is waiting for all,
      // at n fewer dependencies per collective.
      if (const OpId previous = last_on_[ops.front().first]; previous != kNoOp) g_.add_dep(previous, join);
      for (const auto& [r, op] : ops) g_.add_dep(join, op);
    } else {
      for (int i = 0; i < n_; ++i)
        if (const OpId before = issue_op(i, c.issue_after); before != kNoOp) g_.add_dep(before, op_of_card(i));
    }
    for (const auto& [r, op] : ops) last_on_[r] = op;
    if (c.consumer >= 0)
      for (int i = 0; i < n_; ++i) g_.add_dep(op_of_card(i), seq_ops_[i][order_.ops[c.consumer].first]);
  }

  const DataParallelPlan& plan_;
  const DpComputeOrder& order_;
  const std::vector<DpCollective>& colls_;
  DataParallelProgram& prog_;
  OpGraph& g_;
  const bool on_nic_;
  int n_ = 0;
  ResourceId sync_ = kNoResource;
  std::vector<std::vector<OpId>> seq_ops_;  // per simulated card, per compute sequence index
  std::vector<OpId> input_op_;              // per simulated card
  std::vector<OpId> last_on_;               // per resource: its latest collective op
};

std::string dp_op_name(const DpOpInfo& x, int bucket, const std::vector<std::string>& names) {
  const std::string who = fmt::format("{} {}", x.on_host ? "host" : "card", x.where);
  const std::string unit = x.unit >= 0 ? names[x.unit] : "";
  switch (x.kind) {
    case DpOp::Input: return fmt::format("{} input wait", who);
    case DpOp::Forward: return fmt::format("{} F {} mb{}", who, unit, x.micro);
    case DpOp::Backward: return fmt::format("{} B {} mb{}", who, unit, x.micro);
    case DpOp::BackwardInput: return fmt::format("{} dX {} mb{}", who, unit, x.micro);
    case DpOp::BackwardWeight: return fmt::format("{} dW {} mb{}", who, unit, x.micro);
    case DpOp::Gather: return fmt::format("{} AG {} {} mb{}", who, unit, x.for_backward ? "bwd" : "fwd", x.micro);
    case DpOp::ReduceScatter: return fmt::format("{} RS {} mb{}", who, unit, x.micro);
    case DpOp::AllReduce: return fmt::format("{} AR bucket {}", who, bucket);
    case DpOp::Join: return fmt::format("join of collective on {} mb{}", unit, x.micro);
  }
  return std::string("?");
}

}  // namespace

std::shared_ptr<DataParallelProgram> emit_data_parallel(const DataParallelPlan& plan, const DpComputeOrder& order,
                                                        const std::vector<DpCollective>& colls) {
  auto owned = std::make_shared<DataParallelProgram>();
  DataParallelProgram& prog = *owned;  // on the heap: the namer below points into it
  prog.collectives = static_cast<int>(colls.size());
  prog.bucket_ending.assign(plan.units.size(), -1);
  for (std::size_t b = 0; b < plan.buckets.size(); ++b)
    if (!plan.buckets[b].units.empty())
      prog.bucket_ending[static_cast<std::size_t>(plan.buckets[b].units.back())] = static_cast<int>(b);
  for (const auto& c : colls) prog.bytes_per_card += c.wire_bytes;
  {
    DpEmitter emitter(plan, order, colls, prog);  // its per-card tables go before finalize() peaks
    emitter.resources();
    emitter.reserve();
    emitter.compute();
    emitter.collectives();
  }
  std::vector<std::string> names;
  for (const auto& u : plan.units) names.push_back(u.name);
  prog.graph.set_namer([names = std::move(names), p = &prog](OpId op) {
    return dp_op_name(p->info[op], p->bucket_of(p->info[op]), names);
  });
  prog.graph.finalize();
  return owned;
}

std::shared_ptr<DataParallelProgram> lower_data_parallel(const DataParallelPlan& plan) {
  const DpComputeOrder order = data_parallel_order(plan);
  return emit_data_parallel(plan, order, data_parallel_collectives(plan, order));
}

DataParallelResult measure_data_parallel(const DataParallelPlan& plan, const DataParallelProgram& prog,
                                         const Timeline& t) {
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
