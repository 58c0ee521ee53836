#include "cli/reports/data_parallel_report.hpp"
#include "cli/reports/quantities.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "cli/reports/table.hpp"
#include "schedules/lowering/data_parallel/data_parallel.hpp"
#include "sim/checked.hpp"

namespace stepsim::cli {

namespace {
double gb(Bytes b) { return static_cast<double>(b) / 1e9; }
std::string percent_of(Time part, Time whole) { return whole > 0 ? fmt::format("{:.1f}%", 100.0 * part / whole) : "-"; }

std::string mode(const DataParallelPlan& p) {
  if (!p.zero3) return "DDP";
  return p.keep_gathered ? "ZeRO-3 (weights kept from forward to backward)" : "ZeRO-3";
}

std::string ranks_line(const DataParallelResult& r, const DataParallelSpec& spec) {
  if (r.cards == 1) return "one card: no collectives";
  if (r.folded) return fmt::format("ranks: {} identical ranks folded into one representative (card 0)", r.cards);
  if (spec.stragglers.empty()) return fmt::format("ranks: all {} simulated (fold: false)", r.cards);
  std::string who;
  for (const auto& [card, scale] : spec.stragglers)
    who += fmt::format("{}card {} computes {:g}x", who.empty() ? "" : ", ", card, scale);
  return fmt::format("ranks: all {} simulated, they differ: {}", r.cards, who);
}

// One unit for a whole column set: seconds when anything reaches 10 s, else milliseconds.
struct SecondsOrMs {
  bool seconds;
  std::string operator()(Time t) const { return seconds_or_ms(t, seconds); }
};
}  // namespace

Json data_parallel_summary_json(const DataParallelRun& run, const DataParallelSpec& spec, const std::string& variant) {
  const DataParallelResult& r = run.result;
  const DataParallelPlan& p = run.plan;
  const OpGraph& g = run.program->graph;
  Json j;
  j["kind"] = "data_parallel";
  j["variant"] = variant;
  j["zero_stage"] = spec.zero_stage;
  j["cards"] = r.cards;
  j["cards_per_host"] = p.cards_per_host;
  j["microbatches"] = p.microbatches;
  if (p.zero3) {
    j["prefetch"] = p.prefetch;
    j["keep_gathered"] = p.keep_gathered;
  } else {
    j["buckets"] = p.buckets.size();
  }
  j["backward_order"] = std::string(backward_order_name(p.order));
  j["ranks_simulated"] = r.simulated_ranks;
  j["folded"] = r.folded;
  j["step_time_ms"] = round3(to_ms(r.step_time));
  j["compute_ms"] = round3(to_ms(r.compute_time));
  j["input_wait_ms"] = round3(to_ms(r.input_wait));
  j["exposed_comm_ms"] = round3(to_ms(r.exposed_comm));
  j["link_time_ms"] = round3(to_ms(r.link_time));
  j["link_time_s"] = round3(to_s(r.link_time));
  j["link"] = {{"kind", std::string(link_kind_name(r.link))},
               {"bandwidth_GBps", round3(static_cast<double>(r.link_bandwidth) / 1e9)}};
  j["collectives_per_card"] = r.collectives_per_card;
  j["bytes_per_card_GB"] = round3(gb(r.bytes_per_card));
  j["gather_bytes_per_pass_GB"] = round3(gb(r.gather_bytes_per_pass));
  j["reduce_bytes_per_pass_GB"] = round3(gb(r.reduce_bytes_per_pass));
  Json resources = Json::array();
  const std::vector<Time> busy = resource_busy(g, run.timeline);
  for (ResourceId res = 0; res < g.resource_count(); ++res) {
    if (g.resource(res).name == "collectives") continue;  // zero-duration joins
    resources.push_back({{"name", g.resource(res).name}, {"busy_ms", round3(to_ms(busy[res]))}});
  }
  j["resources"] = resources;
  Json ranks = Json::array();
  for (const auto& s : r.ranks)
    ranks.push_back({{"card", s.card},
                     {"compute_ms", round3(to_ms(s.compute_busy))},
                     {"link_ms", round3(to_ms(s.link_busy))},
                     {"exposed_comm_ms", round3(to_ms(s.exposed))},
                     {"end_ms", round3(to_ms(s.end))}});
  j["ranks"] = ranks;
  return j;
}

std::vector<std::string> data_parallel_run_lines(const DataParallelRun& run, const DataParallelSpec& spec) {
  const DataParallelResult& r = run.result;
  const DataParallelPlan& p = run.plan;
  const std::int64_t hosts = ceil_div(p.cards, p.cards_per_host);
  std::string what = fmt::format("{} over {} card{} ({} host{} of up to {}), {} micro-batch{}", mode(p), p.cards,
                                 p.cards == 1 ? "" : "s", hosts, hosts == 1 ? "" : "s", p.cards_per_host,
                                 p.microbatches, p.microbatches == 1 ? "" : "es");
  if (spec.units.empty() && spec.model)
    what += fmt::format(" of {} x {} tokens ({}, {:.0f}% of {})", spec.microbatch_size, spec.sequence_length,
                        spec.model->name, 100 * spec.efficiency, spec.accelerator.name);
  what += p.zero3 ? fmt::format(", prefetch {}", p.prefetch)
                  : fmt::format(", {} bucket{}", p.buckets.size(), p.buckets.size() == 1 ? "" : "s");
  what += fmt::format(", backward {}", backward_order_name(p.order));
  std::vector<std::string> lines = {what, ranks_line(r, spec)};
  if (r.collectives_per_card > 0)
    lines.push_back(
        fmt::format("collectives run on the {} at {:.3g} GB/s: {} per card per step, {:.3f} GB sent per card",
                    link_kind_name(r.link), static_cast<double>(r.link_bandwidth) / 1e9, r.collectives_per_card,
                    gb(r.bytes_per_card)));
  const SecondsOrMs tu{r.step_time >= 10 * kSecond};
  lines.push_back(fmt::format("step {} = input wait {} + compute {} + exposed communication {}", tu(r.step_time),
                              tu(r.input_wait), tu(r.compute_time), tu(r.exposed_comm)));
  lines.push_back(fmt::format("link time {} per card per step ({} of the step)", tu(r.link_time),
                              percent_of(r.link_time, r.step_time)));
  return lines;
}

Table data_parallel_resource_table(const DataParallelRun& run) {
  const DataParallelResult& r = run.result;
  const SecondsOrMs tu{r.step_time >= 10 * kSecond};
  const OpGraph& g = run.program->graph;
  const std::vector<Time> busy = resource_busy(g, run.timeline);
  Table t({{"resource", false}, {"busy"}, {"share of step"}});
  for (ResourceId res = 0; res < g.resource_count(); ++res) {
    if (g.resource(res).name == "collectives") continue;
    t.add_row({g.resource(res).name, tu(busy[res]), percent_of(busy[res], r.step_time)});
  }
  return t;
}

std::string data_parallel_run_text(const DataParallelRun& run, const DataParallelSpec& spec) {
  const DataParallelResult& r = run.result;
  std::string out;
  for (const auto& line : data_parallel_run_lines(run, spec)) out += line + "\n";
  out += "\n";
  const SecondsOrMs tu{r.step_time >= 10 * kSecond};
  // One row per resource; larger unfolded runs get the summary line only.
  if (r.ranks.size() <= 16) out += data_parallel_resource_table(run).render();
  if (r.ranks.size() > 1) {
    const auto [lo, hi] = std::minmax_element(r.ranks.begin(), r.ranks.end(),
                                              [](const auto& a, const auto& b) { return a.exposed < b.exposed; });
    out += fmt::format("\nexposed communication per card: {} (card {}) to {} (card {})\n", tu(lo->exposed), lo->card,
                       tu(hi->exposed), hi->card);
  }
  return out;
}

Table data_parallel_compare_table(const std::vector<std::pair<std::string, const DataParallelRun*>>& runs) {
  Time longest = 0;
  for (const auto& [name, run] : runs) longest = std::max(longest, run->result.step_time);
  const SecondsOrMs tu{longest >= 10 * kSecond};
  Table t({{"variant", false},
           {"mode", false},
           {"link", false},
           {"step"},
           {"compute"},
           {"link time"},
           {"exposed comm"},
           {"GB/card"},
           {"collectives"}});
  for (const auto& [name, run] : runs) {
    const DataParallelResult& r = run->result;
    const DataParallelPlan& p = run->plan;
    std::string m = p.zero3 ? fmt::format("ZeRO-3 p{}{}", p.prefetch, p.keep_gathered ? " keep" : "")
                            : fmt::format("DDP {} bucket{}", p.buckets.size(), p.buckets.size() == 1 ? "" : "s");
    if (p.order != BackwardOrder::Fused) m += fmt::format(" {}", backward_order_name(p.order));
    t.add_row({name, m,
               fmt::format("{} {:.3g} GB/s", link_kind_name(r.link), static_cast<double>(r.link_bandwidth) / 1e9),
               tu(r.step_time), tu(r.compute_time), tu(r.link_time), tu(r.exposed_comm),
               fmt::format("{:.3f}", gb(r.bytes_per_card)), std::to_string(r.collectives_per_card)});
  }
  return t;
}

std::string data_parallel_compare_text(const std::vector<std::pair<std::string, const DataParallelRun*>>& runs) {
  return data_parallel_compare_table(runs).render();
}

namespace {
// An op's slice name and category ("F layer3 mb1", "forward").
std::pair<std::string, std::string_view> dp_slice_name(const DataParallelRun& run, const DpOpInfo& x) {
  const std::string unit = x.unit >= 0 ? run.plan.units[x.unit].name : "";
  const auto per_unit = [&](std::string_view prefix, std::string_view cat) {
    return std::pair<std::string, std::string_view>(fmt::format("{} {} mb{}", prefix, unit, x.micro), cat);
  };
  switch (x.kind) {
    case DpOp::Input: return {"input wait", "input"};
    case DpOp::Forward: return per_unit("F", "forward");
    case DpOp::Backward: return per_unit("B", "backward");
    case DpOp::BackwardInput: return per_unit("dX", "backward");
    case DpOp::BackwardWeight: return per_unit("dW", "backward");
    case DpOp::Gather:
      return {fmt::format("AG {} {} mb{}", unit, x.for_backward ? "bwd" : "fwd", x.micro), "allgather"};
    case DpOp::ReduceScatter: return per_unit("RS", "reducescatter");
    case DpOp::AllReduce: return {fmt::format("AR bucket {}", run.program->bucket_of(x)), "allreduce"};
    case DpOp::Join: break;
  }
  return {};
}
}  // namespace

void data_parallel_trace(TraceWriter& tr, const DataParallelRun& run) {
  const DataParallelProgram& prog = *run.program;
  const OpGraph& g = prog.graph;
  const Timeline& tl = run.timeline;
  constexpr int kCompute = 1, kLink = 2, kInput = 3;
  std::map<ResourceId, std::pair<int, int>> track;  // resource -> (pid, tid)
  for (std::size_t i = 0; i < prog.cards.size(); ++i) {
    const int pid = static_cast<int>(i) + 1;
    const int card = prog.cards[i];
    tr.process(pid,
               run.result.folded ? fmt::format("card {} (stands for all {} identical ranks)", card, run.result.cards)
                                 : fmt::format("card {}", card),
               static_cast<int>(i));
    tr.thread(pid, kCompute, "compute", 0);
    track[prog.compute[i]] = {pid, kCompute};
    if (prog.lane[i] != kNoResource) {
      tr.thread(pid, kLink, fmt::format("{} collectives", link_kind_name(run.plan.link)), 1);
      track[prog.lane[i]] = {pid, kLink};
    }
    if (prog.input[i] != kNoResource) {
      tr.thread(pid, kInput, "input", 2);
      track[prog.input[i]] = {pid, kInput};
    }
  }
  const int nic_pid0 = static_cast<int>(prog.cards.size()) + 1;
  for (std::size_t h = 0; h < prog.hosts.size(); ++h) {
    if (prog.nic[h] == kNoResource) continue;
    const int pid = nic_pid0 + static_cast<int>(h);
    tr.process(pid, fmt::format("host {} NIC", prog.hosts[h]), pid);
    tr.thread(pid, kLink, "collectives", 0);
    track[prog.nic[h]] = {pid, kLink};
  }
  TraceArgs args;
  for (OpId op = 0; op < g.op_count(); ++op) {
    const auto it = track.find(g.op_resource(op));
    if (it == track.end()) continue;  // joins
    const auto [pid, tid] = it->second;
    const DpOpInfo& x = prog.info[op];
    if (x.kind == DpOp::Join) continue;
    const auto [name, cat] = dp_slice_name(run, x);
    const Time done = tl.done(g, op);
    const std::string opname = g.op_name(op);
    args.clear();
    args.text("op", opname)
        .integer("microbatch", x.micro)
        .slice_time("start_ms", tl.start[op])
        .slice_time("end_ms", done);
    tr.slice(pid, tid, name, cat, tl.start[op], done - tl.start[op], args);
  }
}

}  // namespace stepsim::cli
