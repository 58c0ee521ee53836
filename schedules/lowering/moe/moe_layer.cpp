#include "schedules/lowering/moe/moe_layer.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace stepsim {

namespace {

constexpr std::int64_t kMaxExperts = 65'536;
constexpr int kMaxCards = 4'096;
constexpr std::int64_t kMaxTokens = 1'000'000'000'000;      // keeps tokens x top_k and row counts far from overflow
constexpr Time kMaxPhase = 100LL * 365 * 86'400 * kSecond;  // a century: any phase beyond is an input error

// Expert e's kept rows that come from card s: equal shares, the first kept mod cards one more.
std::int64_t share_from(std::int64_t kept, int cards, int s) { return kept / cards + (s < kept % cards ? 1 : 0); }

// One card's all-to-all bytes: 128-bit, as rows x row_bytes may pass 2^63 in a phase that fits a century.
__int128 wire_bytes(const MoeLayerSpec& spec, const MoeCardTraffic& tf) {
  return static_cast<__int128>(std::max(tf.rows_sent, tf.rows_received)) * spec.row_bytes;
}

void check(const MoeLayerSpec& spec) {
  if (spec.shape.experts > kMaxExperts) throw SpecError("experts", fmt::format("more than {} experts", kMaxExperts));
  if (spec.shape.tokens > kMaxTokens) throw SpecError("tokens", fmt::format("more than {} tokens", kMaxTokens));
  if (spec.cards < 1 || spec.cards > kMaxCards)
    throw SpecError("cards", fmt::format("must be between 1 and {}", kMaxCards));
  if (spec.shape.experts % spec.cards != 0)
    throw SpecError("cards",
                    fmt::format("{} experts do not spread evenly over {} cards", spec.shape.experts, spec.cards));
  if (spec.row_time <= 0) throw SpecError("row_time", "must be positive");
  if (spec.row_bytes < 0) throw SpecError("row_bytes", "must not be negative");
  if (spec.link_bandwidth < 0) throw SpecError("link", "must not be negative");
}

// Every card's compute and all-to-all must stay far inside a Time.
void check_durations(const MoeLayerSpec& spec, const ExpertLoads& loads, const MoeExpertOrder& order,
                     const std::vector<MoeCardTraffic>& traffic) {
  std::vector<__int128> card(spec.cards, 0);
  for (int e = 0; e < spec.shape.experts; ++e)
    card[order.card[e]] += static_cast<__int128>(loads.computed[e]) * spec.row_time;
  for (const __int128 t : card)
    if (t > kMaxPhase) throw SpecError("row_time", "a card's expert compute would take more than a century");
  if (spec.link_bandwidth <= 0) return;
  // Against the bytes a century moves (the rounded-up time past a century), not bytes x 1 s: rows
  // (up to 6.5e16) x row_bytes x 10^9 can pass 2^127.
  const __int128 most = static_cast<__int128>(kMaxPhase) * spec.link_bandwidth / kSecond;
  for (const auto& tf : traffic)
    if (wire_bytes(spec, tf) > most) throw SpecError("row_bytes", "an all-to-all would take more than a century");
}

}  // namespace

MoeExpertOrder moe_expert_order(const MoeLayerSpec& spec) {
  MoeExpertOrder order;
  order.per_card.assign(spec.cards, {});
  for (int e = 0; e < spec.shape.experts; ++e) {
    order.card.push_back(expert_card(e, spec.shape.experts, spec.cards, spec.placement));
    order.per_card[order.card.back()].push_back(e);
  }
  return order;
}

MoeCommPlan moe_comm_plan(const MoeLayerSpec& spec, const ExpertLoads& loads, const MoeExpertOrder& order) {
  const int n = spec.cards;
  MoeCommPlan plan;
  plan.traffic.assign(n, {});
  for (int e = 0; e < spec.shape.experts; ++e) {
    const int home = order.card[e];
    for (int s = 0; s < n; ++s) {
      if (s == home) continue;
      const std::int64_t rows = share_from(loads.kept[e], n, s);
      plan.traffic[s].rows_sent += rows;
      plan.traffic[home].rows_received += rows;
    }
  }
  check_durations(spec, loads, order, plan.traffic);
  for (const auto& tf : plan.traffic)
    plan.all_to_all.push_back(transfer_time(wire_bytes(spec, tf), spec.link_bandwidth));
  return plan;
}

std::vector<std::string> check_comm_plan(const MoeLayerSpec& spec, const ExpertLoads& loads,
                                         const MoeExpertOrder& order, const MoeCommPlan& plan) {
  const auto n = static_cast<std::size_t>(spec.cards);
  if (plan.traffic.size() != n || plan.all_to_all.size() != n || order.card.size() != loads.kept.size())
    return {"plan sizes do not match the layer"};
  std::vector<std::string> problems;
  std::int64_t sent = 0, received = 0, remote = 0;
  for (const auto& tf : plan.traffic) {
    sent += tf.rows_sent;
    received += tf.rows_received;
  }
  for (std::size_t e = 0; e < loads.kept.size(); ++e)
    remote += loads.kept[e] - share_from(loads.kept[e], spec.cards, order.card[e]);
  if (sent != received) problems.push_back(fmt::format("{} rows sent, {} received", sent, received));
  if (sent != remote)
    problems.push_back(fmt::format("{} rows sent, {} kept rows live off their expert's card", sent, remote));
  for (std::size_t c = 0; c < n; ++c)
    if (plan.all_to_all[c] < 0) problems.push_back(fmt::format("card {}: negative all-to-all time", c));
  return problems;
}

std::unique_ptr<MoeLayerProgram> emit_moe_layer(const MoeLayerSpec& spec, const ExpertLoads& loads,
                                                const MoeExpertOrder& order, const MoeCommPlan& plan) {
  const int n = spec.cards;
  auto prog = std::make_unique<MoeLayerProgram>();
  MoeLayerProgram& p = *prog;
  OpGraph& g = p.graph;
  p.traffic = plan.traffic;
  for (int c = 0; c < n; ++c) p.compute.push_back(g.add_resource(fmt::format("card {}", c)));
  for (int c = 0; c < n; ++c) p.link.push_back(g.add_resource(fmt::format("card {} link", c)));
  p.barrier = g.add_resource("all-to-all");

  const auto add = [&](ResourceId r, Time d, int expert) {
    const OpId op = g.add_op(r, d);
    p.op_expert.push_back(expert);
    return op;
  };
  for (int c = 0; c < n; ++c) p.dispatch.push_back(add(p.link[c], plan.all_to_all[c], -1));
  p.dispatched = add(p.barrier, 0, -1);
  for (OpId d : p.dispatch) g.add_dep(d, p.dispatched);

  // Expert ops in expert id order (op ids), each card's in its run order.
  p.expert_ops.assign(n, {});
  for (int e = 0; e < spec.shape.experts; ++e) {
    const int c = order.card[e];
    const OpId op = add(p.compute[c], loads.computed[e] * spec.row_time, e);
    if (p.expert_ops[c].empty()) g.add_dep(p.dispatched, op);
    p.expert_ops[c].push_back(op);
  }
  p.combine_ready = add(p.barrier, 0, -1);
  for (int c = 0; c < n; ++c) g.add_dep(p.expert_ops[c].back(), p.combine_ready);
  for (int c = 0; c < n; ++c) {
    p.combine.push_back(add(p.link[c], plan.all_to_all[c], -1));
    g.add_dep(p.combine_ready, p.combine.back());
  }

  const MoeLayerProgram* self = &p;
  g.set_namer([self](OpId op) {
    if (op == self->dispatched) return std::string("all-to-all: dispatched");
    if (op == self->combine_ready) return std::string("all-to-all: combine ready");
    if (self->op_expert[op] >= 0) return fmt::format("expert {}", self->op_expert[op]);
    for (std::size_t c = 0; c < self->dispatch.size(); ++c) {
      if (self->dispatch[c] == op) return fmt::format("dispatch card {}", c);
      if (self->combine[c] == op) return fmt::format("combine card {}", c);
    }
    return fmt::format("op {}", op);
  });
  g.finalize();
  return prog;
}

std::unique_ptr<MoeLayerProgram> build_moe_layer(const MoeLayerSpec& spec, const ExpertLoads& loads) {
  check(spec);
  const MoeExpertOrder order = moe_expert_order(spec);
  return emit_moe_layer(spec, loads, order, moe_comm_plan(spec, loads, order));
}

MoeLayerRun simulate_moe_layer(const MoeLayerSpec& spec) {
  MoeLayerRun run;
  run.spec = spec;
  check(spec);  // bounds first: routing allocates one entry per expert
  try {
    run.loads = route_experts(spec.shape, spec.routing);
  } catch (const MoeInputError& e) { throw SpecError(e.key(), e.what()); }
  run.program = build_moe_layer(spec, run.loads);
  const MoeLayerProgram& p = *run.program;
  run.timeline = stepsim::run(run.program->graph);
  const Timeline& tl = run.timeline;

  MoeLayerStats& s = run.stats;
  const int n = spec.cards;
  const std::vector<std::int64_t> rows = card_rows(run.loads, n, spec.placement);
  const std::vector<Time> busy = resource_busy(p.graph, tl);
  s.layer = tl.makespan;
  s.dispatch = tl.done(p.graph, p.dispatched);
  const Time ready = tl.done(p.graph, p.combine_ready);
  s.expert_compute = tl.start[p.combine_ready] - s.dispatch;
  s.combine = s.layer - ready;
  std::int64_t total = 0;
  for (int c = 0; c < n; ++c) {
    MoeCardStats cs;
    cs.rows = rows[c];
    cs.compute = busy[p.compute[c]];
    cs.waiting = tl.start[p.combine_ready] - tl.done(p.graph, p.expert_ops[c].back());
    cs.traffic = p.traffic[c];
    total += cs.rows;
    if (cs.rows > rows[s.busiest_card]) s.busiest_card = c;
    s.cards.push_back(cs);
  }
  s.mean_card_rows = static_cast<double>(total) / n;
  s.imbalance = s.mean_card_rows > 0 ? static_cast<double>(rows[s.busiest_card]) / s.mean_card_rows : 1.0;
  return run;
}

}  // namespace stepsim
