#include "cli/reports/moe_report.hpp"
#include "cli/reports/quantities.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cli/reports/table.hpp"

namespace stepsim::cli {

namespace {

using Json = nlohmann::ordered_json;

std::string ms(Time t) { return fmt::format("{:.3f}", to_ms(t)); }

std::string routing_text(const MoeLayerRun& run) {
  const MoeRoutingSpec& r = run.spec.routing;
  switch (r.kind) {
    case MoeRoutingSpec::Kind::Balanced: return "balanced";
    case MoeRoutingSpec::Kind::Hot: return fmt::format("{:g}% hot at {:g}x", 100.0 * r.hot_fraction, r.hot_load);
    case MoeRoutingSpec::Kind::Explicit: {
      std::string s;
      for (std::size_t e = 0; e < r.loads.size() && e < 4; ++e) {
        if (e > 0) s += '/';
        s += std::to_string(r.loads[e]);
      }
      return r.loads.size() > 4 ? s + "/..." : s;
    }
  }
  return "";
}

std::string capacity_text(const ExpertLoads& l, const MoeLayerSpec& spec) {
  if (!l.capacity) return "dropless";
  return fmt::format("{} rows (c = {:g})", comma_grouped(*l.capacity), *spec.shape.capacity_factor);
}

// A row count that may be a mean: grouped when whole, one decimal otherwise.
std::string rows_text(double v) {
  const double whole = std::round(v);
  return whole == v ? comma_grouped(static_cast<std::int64_t>(whole)) : fmt::format("{:.1f}", v);
}

std::int64_t max_of(const std::vector<std::int64_t>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

std::string signed_pct(Time value, Time base) {
  if (base <= 0) return "-";
  const double p = 100.0 * (static_cast<double>(value) - static_cast<double>(base)) / static_cast<double>(base);
  return std::abs(p) < 0.05 ? "0.0%" : fmt::format("{:+.1f}%", p);
}

}  // namespace

Json moe_summary_json(const MoeLayerRun& run, const std::string& variant) {
  const MoeLayerSpec& s = run.spec;
  const ExpertLoads& l = run.loads;
  const MoeLayerStats& st = run.stats;
  Json j;
  j["kind"] = "moe";
  j["variant"] = variant;
  j["experts"] = s.shape.experts;
  j["top_k"] = s.shape.top_k;
  j["tokens"] = s.shape.tokens;
  j["cards"] = s.cards;
  j["placement"] = std::string(placement_name(s.placement));
  j["routing"] = routing_text(run);
  j["dispatches"] = l.dispatches;
  j["mean_rows_per_expert"] = round3(l.mean);
  j["busiest_expert_rows"] = max_of(l.routed);
  if (l.capacity)
    j["capacity_rows"] = *l.capacity;
  else
    j["capacity_rows"] = nullptr;
  j["dropped_rows"] = l.dropped;
  j["padded_rows"] = l.padded;
  j["row_time_ns"] = s.row_time;
  j["busiest_card"] = st.busiest_card;
  j["busiest_card_rows"] = st.cards[st.busiest_card].rows;
  j["mean_card_rows"] = round3(st.mean_card_rows);
  j["imbalance"] = round3(st.imbalance);
  j["dispatch_ms"] = round3(to_ms(st.dispatch));
  j["expert_compute_ms"] = round3(to_ms(st.expert_compute));
  j["combine_ms"] = round3(to_ms(st.combine));
  j["layer_ms"] = round3(to_ms(st.layer));
  Json cards = Json::array();
  for (std::size_t c = 0; c < st.cards.size(); ++c) {
    const MoeCardStats& cs = st.cards[c];
    cards.push_back({{"card", c},
                     {"rows", cs.rows},
                     {"compute_ms", round3(to_ms(cs.compute))},
                     {"waiting_ms", round3(to_ms(cs.waiting))},
                     {"rows_sent", cs.traffic.rows_sent},
                     {"rows_received", cs.traffic.rows_received}});
  }
  j["per_card"] = cards;
  return j;
}

std::string moe_run_text(const MoeLayerRun& run) {
  const MoeLayerSpec& s = run.spec;
  const ExpertLoads& l = run.loads;
  const MoeLayerStats& st = run.stats;
  std::string out;
  out += fmt::format("{} experts, top-{}, {} tokens: {} dispatches, {} rows per expert on average\n", s.shape.experts,
                     s.shape.top_k, comma_grouped(s.shape.tokens), comma_grouped(l.dispatches), rows_text(l.mean));
  out +=
      fmt::format("routing: {}; busiest expert {} rows, quietest {}\n", routing_text(run),
                  comma_grouped(max_of(l.routed)), comma_grouped(*std::min_element(l.routed.begin(), l.routed.end())));
  out += fmt::format("capacity: {}", capacity_text(l, s));
  if (l.capacity) out += fmt::format("; {} rows dropped, {} padded", comma_grouped(l.dropped), comma_grouped(l.padded));
  out += fmt::format("\nplacement: {}, {} experts on each of {} cards; one row takes {} ns",
                     placement_name(s.placement), s.shape.experts / s.cards, s.cards, s.row_time);
  if (s.link_bandwidth > 0)
    out += fmt::format("; all-to-all at {:g} GB/s per card, {} B per row", static_cast<double>(s.link_bandwidth) / 1e9,
                       comma_grouped(s.row_bytes));
  out += "\n\n";
  Table t({{"card"}, {"rows"}, {"compute ms"}, {"waits for the busiest ms"}, {"rows sent"}, {"rows received"}});
  for (std::size_t c = 0; c < st.cards.size(); ++c) {
    const MoeCardStats& cs = st.cards[c];
    t.add_row({std::to_string(c), comma_grouped(cs.rows), ms(cs.compute), ms(cs.waiting),
               comma_grouped(cs.traffic.rows_sent), comma_grouped(cs.traffic.rows_received)});
  }
  out += t.render();
  out += fmt::format("\nbusiest card {}: {} rows, {:.2f} x the mean card ({} rows)\n", st.busiest_card,
                     comma_grouped(st.cards[st.busiest_card].rows), st.imbalance, rows_text(st.mean_card_rows));
  out += fmt::format("dispatch {} ms, expert compute {} ms, combine {} ms: layer done at {} ms\n", ms(st.dispatch),
                     ms(st.expert_compute), ms(st.combine), ms(st.layer));
  return out;
}

std::string moe_compare_text(const std::vector<std::pair<std::string, const MoeLayerRun*>>& runs) {
  Table t({{"variant", false},
           {"routing", false},
           {"placement", false},
           {"capacity", false},
           {"dropped"},
           {"busiest expert"},
           {"busiest card rows"},
           {"imbalance"},
           {"expert compute ms"},
           {"vs first"},
           {"layer ms"},
           {"vs first"}});
  const MoeLayerRun* first = runs.empty() ? nullptr : runs.front().second;
  for (const auto& [name, run] : runs) {
    const MoeLayerStats& st = run->stats;
    t.add_row({name, routing_text(*run), std::string(placement_name(run->spec.placement)),
               capacity_text(run->loads, run->spec), comma_grouped(run->loads.dropped),
               comma_grouped(max_of(run->loads.routed)), comma_grouped(st.cards[st.busiest_card].rows),
               fmt::format("{:.2f}", st.imbalance), ms(st.expert_compute),
               signed_pct(st.expert_compute, first->stats.expert_compute), ms(st.layer),
               signed_pct(st.layer, first->stats.layer)});
  }
  return t.render();
}

void moe_trace(TraceWriter& tr, const MoeLayerRun& run) {
  const MoeLayerProgram& p = *run.program;
  const OpGraph& g = p.graph;
  const Timeline& tl = run.timeline;
  TraceArgs args;
  const int n = run.spec.cards;
  for (int c = 0; c < n; ++c) {
    tr.process(c + 1, fmt::format("card {}", c), c);
    tr.thread(c + 1, 1, "experts", 0);
    tr.thread(c + 1, 2, "all-to-all", 1);
    for (OpId op : p.expert_ops[c]) {
      const int e = p.op_expert[op];
      args.clear();
      args.integer("expert", e).integer("routed", run.loads.routed[e]).integer("computed", run.loads.computed[e]);
      tr.slice(c + 1, 1, fmt::format("expert {}", e), "expert", tl.start[op], g.op_duration(op), args);
    }
    const auto& tf = p.traffic[c];
    args.clear();
    args.integer("rows_sent", tf.rows_sent).integer("rows_received", tf.rows_received);
    tr.slice(c + 1, 2, "dispatch", "all-to-all", tl.start[p.dispatch[c]], g.op_duration(p.dispatch[c]), args);
    tr.slice(c + 1, 2, "combine", "all-to-all", tl.start[p.combine[c]], g.op_duration(p.combine[c]), args);
  }
  tr.process(n + 1, "all-to-all", n);
  tr.thread(n + 1, 1, "barriers", 0);
  tr.slice(n + 1, 1, "dispatched", "barrier", tl.start[p.dispatched], 0, {});
  tr.slice(n + 1, 1, "combine ready", "barrier", tl.start[p.combine_ready], 0, {});
}

}  // namespace stepsim::cli
