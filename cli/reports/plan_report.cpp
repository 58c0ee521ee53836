#include "cli/reports/plan_report.hpp"
#include "cli/reports/quantities.hpp"

#include <cmath>

#include <fmt/format.h>

#include "cli/reports/plan_tensor_report.hpp"
#include "cli/reports/table.hpp"
#include "models/checkpoint.hpp"
#include "models/compute.hpp"
#include "models/deadline.hpp"
#include "models/scaling.hpp"
#include "models/stragglers.hpp"

namespace stepsim::cli {

namespace {

// Rounded for stable, readable JSON.
// Rounded to `unit` (a power of ten) by scaling with its exact inverse, so that JSON prints the
// short decimal (679.255211, not 679.2552109999999).
double round_to(double x, double unit) {
  const double scale = std::round(1.0 / unit);
  return std::round(x * scale) / scale;
}

std::string fmt_gib(Bytes b) { return fmt::format("{:.1f}", gib(b)); }

// Memory figures in one unit per report: GiB for cards with gigabytes, exact bytes for small
// devices (the resource-bill chapter counts bytes).
struct Mem {
  bool exact = false;
  static Mem for_usable(Bytes usable) { return Mem{usable < static_cast<Bytes>(kGiB)}; }
  const char* unit() const { return exact ? "B" : "GiB"; }
  std::string num(Bytes b) const { return exact ? comma_grouped(b) : fmt_gib(b); }
  std::string operator()(Bytes b) const { return num(b) + " " + unit(); }
  // Breakdowns: exact bytes, or the largest binary unit that keeps a digit before the point.
  std::string part(Bytes b) const {
    if (exact) return comma_grouped(b) + " B";
    if (std::llabs(b) >= static_cast<Bytes>(kGiB) / 10) return fmt::format("{:.1f} GiB", gib(b));
    if (std::llabs(b) >= 1024 * 1024) return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1024.0 * 1024.0));
    return fmt::format("{} B", b);
  }
};
// Seconds with the book's precision: 78.3, 0.08, 0.50.
std::string fmt_s(Time t) {
  return std::llabs(t) >= 10 * kSecond ? fmt::format("{:.1f}", to_s(t)) : fmt::format("{:.2f}", to_s(t));
}
std::string fmt_days(Time t) { return fmt::format("{:.1f}", days(t)); }
std::string fmt_pct(double x) { return fmt::format("{:.2f}%", x * 100); }
std::string fmt_pct0(double x) { return fmt::format("{:.0f}%", x * 100); }
std::string fmt_duration_words(Time t) {
  const double s = to_s(t);
  if (s >= 2 * kDaySeconds) return fmt::format("{:.1f} days", s / kDaySeconds);
  if (s >= 2 * 3600) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.0f} s", s);
}

const char* verdict(const PlanResult& r) {
  if (!r.memory.fits()) return "does not fit";
  if (r.time && !r.time->meets()) return "misses";
  return r.time ? "meets" : "fits";
}

std::string case_line(const PlanResult& r, const Mem& m) {
  std::string line;
  if (!r.memory.fits())
    line = fmt::format("{}: does not fit in memory: {} planned per card, {} usable ({} over)", r.name,
                       m(r.memory.planned), m(r.memory.usable), m(r.memory.planned - r.memory.usable));
  if (r.time) {
    const TimePlan& t = *r.time;
    const std::string when = fmt::format("the {}-day deadline", fmt::format("{:g}", days(t.deadline)));
    std::string d = t.meets() ? fmt::format("meets {} with {} days to spare", when, fmt_days(t.deadline - t.completion))
                              : fmt::format("misses {} by {} days", when, fmt_days(t.completion - t.deadline));
    line += line.empty() ? fmt::format("{}: {} ({} days)", r.name, d, fmt_days(t.completion))
                         : fmt::format("; in time it {} ({} days)", d, fmt_days(t.completion));
  } else if (line.empty()) {
    line = fmt::format("{}: fits in memory: {} planned per card, {} usable", r.name, m(r.memory.planned),
                       m(r.memory.usable));
  }
  return line;
}

std::string memory_lever_text(const PlanResult& r, const MemoryLevers& lv, const PlanSpec& spec, const Mem& m) {
  std::vector<std::string> ways;
  if (lv.cards) {
    std::string w = fmt::format("{} cards ({})", *lv.cards, m(lv.planned_at_cards));
    if (spec.timed() && lv.whole_host_cards && *lv.whole_host_cards != *lv.cards) {
      const int hosts = *lv.whole_host_cards / spec.cards_per_host;
      w += fmt::format(", or {} = {} whole {}-card host{} ({})", *lv.whole_host_cards, hosts, spec.cards_per_host,
                       hosts == 1 ? "" : "s", m(lv.planned_at_whole_hosts));
    }
    ways.push_back("more cards: " + w);
  }
  if (r.given_workspace)
    ways.push_back(fmt::format("{} less activations and buffers (recompute, smaller micro-batches)", m(lv.over)));
  for (const auto& o : lv.options)
    ways.push_back(fmt::format("{}: {}{}", o.change, m(o.planned), o.fits ? "" : " (still over)"));
  std::string s = fmt::format("{} is {} over; levers: ", r.name, m(lv.over));
  if (ways.empty()) return s + "none of cards, ZeRO stage or recompute is enough";
  for (std::size_t i = 0; i < ways.size(); ++i) s += (i ? "; " : "") + ways[i];
  return s;
}

std::string deadline_lever_text(const PlanResult& r, const DeadlineLevers& lv, const PlanSpec& spec) {
  std::vector<std::string> ways;
  if (!std::isfinite(lv.efficiency_needed))
    ways.push_back("no efficiency is enough (the waits alone exceed the step budget)");
  else if (lv.efficiency_needed > 1.0)
    ways.push_back(fmt::format("no efficiency is enough (it would take {})", fmt_pct0(lv.efficiency_needed)));
  else
    ways.push_back(fmt::format("efficiency {} -> {}", fmt_pct0(r.efficiency), fmt_pct0(lv.efficiency_needed)));
  if (lv.cards) {
    std::string w = fmt::format("{} cards ({} days)", *lv.cards, fmt_days(lv.completion_at_cards));
    if (lv.whole_host_cards && *lv.whole_host_cards != *lv.cards) {
      const int hosts = *lv.whole_host_cards / spec.cards_per_host;
      w += fmt::format(", or {} = {} whole host{} ({} days)", *lv.whole_host_cards, hosts, hosts == 1 ? "" : "s",
                       fmt_days(lv.completion_at_whole_hosts));
    }
    ways.push_back(w);
  }
  if (!lv.cards) ways.push_back(fmt::format("no card count up to {} both fits and meets it", spec.max_cards()));
  std::string s = fmt::format("{} misses; levers: ", r.name);
  for (std::size_t i = 0; i < ways.size(); ++i) s += (i ? "; or " : "") + ways[i];
  return s;
}

// A table with one column per plan case: `row(label, cell)` adds a row whose cells are
// cell(result) for each case.
class CaseTable {
 public:
  CaseTable(std::string title, const PlanEvaluation& ev) : ev_(ev), table_(columns(std::move(title), ev)) {}
  template <class Cell>
  void row(std::string label, Cell cell) {
    std::vector<std::string> cells{std::move(label)};
    for (const auto& r : ev_.results) cells.push_back(cell(r));
    table_.add_row(std::move(cells));
  }
  Table table() && { return std::move(table_); }

 private:
  static std::vector<Table::Column> columns(std::string title, const PlanEvaluation& ev) {
    std::vector<Table::Column> cols{{std::move(title), false}};
    for (const auto& r : ev.results) cols.push_back({r.name, true});
    return cols;
  }
  const PlanEvaluation& ev_;
  Table table_;
};

bool same_zero_stage(const PlanSpec& spec, const PlanEvaluation& ev) {
  for (const auto& r : ev.results)
    if (r.zero_stage != spec.zero_stage) return false;
  return true;
}

Table design_table(const PlanSpec& spec, const PlanEvaluation& ev, const Mem& m) {
  CaseTable t("design item", ev);
  const auto row = [&t](std::string label, auto cell) { t.row(std::move(label), cell); };
  const bool timed = spec.timed();
  const bool one_stage = same_zero_stage(spec, ev);
  const std::string seqs =
      fmt::format("{} sequence{}", spec.microbatch_sequences, spec.microbatch_sequences == 1 ? "" : "s");
  if (timed) {
    row(fmt::format("{}-card hosts", spec.cards_per_host),
        [](const PlanResult& r) { return fmt::format("{}", r.hosts); });
    if (one_stage)
      row(fmt::format("ZeRO-{} over all cards, micro-batches of {} per card", spec.zero_stage, seqs),
          [](const PlanResult& r) {
            return fmt::format("{}{}", r.microbatches_per_card, r.uneven ? " (uneven)" : "");
          });
    else
      row(fmt::format("micro-batches of {} per card (ZeRO stage)", seqs), [](const PlanResult& r) {
        return fmt::format("{}{} (ZeRO-{})", r.microbatches_per_card, r.uneven ? " uneven" : "", r.zero_stage);
      });
  } else {
    row("cards, ZeRO stage, recompute", [](const PlanResult& r) {
      return fmt::format("{}, ZeRO-{}, {}", r.cards, r.zero_stage, r.given_workspace ? "given" : r.recompute.label());
    });
  }
  row(spec.margin > 0
          ? fmt::format("memory per card with {} margin, planned / usable ({})", fmt_pct0(spec.margin), m.unit())
          : fmt::format("memory per card, planned / usable ({})", m.unit()),
      [m](const PlanResult& r) { return fmt::format("{} / {}", m.num(r.memory.planned), m.num(r.memory.usable)); });
  if (timed) {
    row("compute per step per card (s)", [](const PlanResult& r) { return fmt_s(r.time->compute); });
    row(spec.zero_stage == 3 ? "ZeRO-3 link time per step (s)" : "link time per step (s)",
        [](const PlanResult& r) { return r.time->comm.link > 0 ? fmt_s(r.time->comm.link) : "-"; });
    row("communication wait per step (s)", [](const PlanResult& r) { return fmt_s(r.time->comm.exposed); });
    row("input wait per step (s)", [](const PlanResult& r) { return fmt_s(r.time->input_wait); });
    if (spec.straggler_sigma > 0)
      row(fmt::format("straggler wait, sigma {} of compute (s)", fmt_pct0(spec.straggler_sigma)),
          [](const PlanResult& r) { return fmt_s(r.time->straggler); });
    row("step time (s)", [](const PlanResult& r) { return fmt_s(r.time->step); });
    row("checkpoint save, redo and restore overhead",
        [](const PlanResult& r) { return fmt_pct(r.time->overhead.total()); });
    row("base training time (days)", [](const PlanResult& r) { return fmt_days(r.time->base_training); });
    row(fmt::format("with checkpoint overhead and {} reserved days (days)", fmt::format("{:g}", days(spec.reserved))),
        [](const PlanResult& r) { return fmt::format("{} ({})", fmt_days(r.time->completion), verdict(r)); });
  } else {
    row("verdict", [](const PlanResult& r) { return std::string(verdict(r)); });
  }
  return std::move(t).table();
}

Table room_table(const PlanEvaluation& ev) {
  CaseTable t("room and checkpoints", ev);
  const auto row = [&t](std::string label, auto cell) { t.row(std::move(label), cell); };
  row("steps", [](const PlanResult& r) { return fmt::format("{}", r.time->steps); });
  row("per-step budget without / with overhead (s)",
      [](const PlanResult& r) { return fmt::format("{} / {}", fmt_s(r.time->plain_budget), fmt_s(r.time->budget)); });
  row("slack per step (s)", [](const PlanResult& r) { return fmt_s(r.time->budget - r.time->step); });
  row("communication wait may grow to (s)", [](const PlanResult& r) {
    return r.time->comm_may_grow_to >= 0 ? fmt_s(r.time->comm_may_grow_to) : std::string("none: over budget");
  });
  row("efficiency now / needed for the budget", [](const PlanResult& r) {
    return fmt::format("{} / {}", fmt_pct0(r.efficiency), fmt_pct0(r.time->efficiency_needed));
  });
  row("checkpoint save c (s) / restore r (s)", [](const PlanResult& r) {
    return fmt::format("{} / {}", fmt_s(r.time->checkpoint.save), fmt_s(r.time->checkpoint.restore));
  });
  row("job MTBF M", [](const PlanResult& r) { return fmt_duration_words(r.time->job_mtbf); });
  row("interval tau / optimum sqrt(2cM) (s)", [](const PlanResult& r) {
    return fmt::format("{:.0f} / {:.0f}", to_s(r.time->interval), to_s(r.time->optimal_interval));
  });
  row("checkpoint bytes / average write rate", [](const PlanResult& r) {
    return fmt::format("{:.1f} GB / {:.1f} MB/s", static_cast<double>(r.time->checkpoint_bytes) / 1e9,
                       r.time->checkpoint_write_rate / 1e6);
  });
  row("overhead: save c/tau + redo (tau/2+r)/M", [](const PlanResult& r) {
    return fmt::format("{} + {}", fmt_pct(r.time->overhead.save), fmt_pct(r.time->overhead.redo));
  });
  return std::move(t).table();
}

Table memory_table(const PlanSpec& spec, const PlanEvaluation& ev, const Mem& mem) {
  CaseTable t("memory per card at the peak", ev);
  const auto row = [&t](std::string label, auto cell) { t.row(std::move(label), cell); };
  const bool one_stage = same_zero_stage(spec, ev);
  row(one_stage ? fmt::format("weights / gradients / master + moments (ZeRO-{})", spec.zero_stage)
                : std::string("weights / gradients / master + moments"),
      [mem](const PlanResult& r) {
        return fmt::format("{} / {} / {}", mem.part(r.memory.resident.weights), mem.part(r.memory.resident.gradients),
                           mem.part(r.memory.resident.optimizer));
      });
  if (!spec.workspace) {
    row("saved activations (recompute policy)", [mem](const PlanResult& r) {
      return fmt::format("{} ({})", mem.part(r.memory.saved_activations), r.recompute.label());
    });
    row("at the peak: resident + activations + buffers", [mem](const PlanResult& r) {
      return fmt::format("{} + {} + {}", mem.part(r.memory.peak.resident), mem.part(r.memory.peak.activations),
                         mem.part(r.memory.peak.buffers));
    });
  } else {
    row("at the peak: resident + activations and buffers (given)", [mem](const PlanResult& r) {
      return fmt::format("{} + {}", mem.part(r.memory.peak.resident),
                         mem.part(r.memory.peak.activations + r.memory.peak.buffers));
    });
  }
  row("peak reached at", [](const PlanResult& r) {
    const auto& ops = r.memory.sequence.ops();
    return r.memory.peak.at_op < ops.size() ? ops[r.memory.peak.at_op] : std::string("-");
  });
  row(spec.margin > 0 ? fmt::format("planned (peak + {} margin) / usable", fmt_pct0(spec.margin))
                      : std::string("planned / usable"),
      [mem](const PlanResult& r) {
        return fmt::format("{} / {}", mem.part(r.memory.planned), mem.part(r.memory.usable));
      });
  row("spare", [mem](const PlanResult& r) { return mem.part(r.memory.usable - r.memory.planned); });
  return std::move(t).table();
}

CaptionedTable checkpoint_comparison(const PlanSpec& spec, const CheckpointComparison& cc) {
  std::vector<Table::Column> cols{{"cards", true}};
  for (Time i : cc.intervals) cols.push_back({fmt::format("every {:g} s", to_s(i)), true});
  cols.push_back({"optimum sqrt(2cM)", true});
  Table t(cols);
  const CheckpointCost cost{
      transfer_time(spec.checkpoint_bytes.value_or(recoverable_state_bytes(spec.model.parameters, spec.format)),
                    spec.storage_bandwidth),
      spec.restore};
  for (int cards : cc.cards) {
    const Interruptions job{spec.card_mtbf, cards, spec.rollback_every};
    std::vector<std::string> cells{fmt::format("{}", cards)};
    for (Time i : cc.intervals) cells.push_back(fmt_pct(checkpoint_overhead(cost, i, job).total()));
    const Time best = optimal_checkpoint_interval(cost, job);
    cells.push_back(fmt::format("{:.0f} s: {}", to_s(best), fmt_pct(checkpoint_overhead(cost, best, job).total())));
    t.add_row(std::move(cells));
  }
  return {fmt::format("checkpoint overhead L(tau) = c/tau + (tau/2 + r)/M, c = {} s, r = {} s, M = card MTBF / cards",
                      fmt_s(cost.save), fmt_s(cost.restore)),
          std::move(t), ""};
}

// Weak and strong scaling from the first timed case.
std::vector<CaptionedTable> scaling_tables(const PlanSpec& spec, const ScalingQuestions& q, const PlanResult& base) {
  std::vector<CaptionedTable> out;
  if (!q.cards.empty() && base.time && q.batch_noise) {
    const TimePlan& t = *base.time;
    const double batch = static_cast<double>(spec.tokens_per_step());
    const Time waits = t.step - t.compute - t.straggler;
    Table tab({{"cards", true},
               {"weak: batch (M tokens)", true},
               {"weak: steps", true},
               {"weak: days", true},
               {"strong: step (s)", true},
               {"strong: days", true}});
    std::vector<int> cards{base.cards};
    cards.insert(cards.end(), q.cards.begin(), q.cards.end());
    bool split = false;
    for (int c : cards) {
      const WeakScaling w = weak_scaling(static_cast<double>(t.steps), batch, base.cards, t.step, c, *q.batch_noise);
      const Time strong = strong_scaling_step(t.compute, waits, base.cards, c);
      split = split || c > spec.max_cards();
      tab.add_row({fmt::format("{}{}", c, c > spec.max_cards() ? "*" : ""), fmt::format("{:.1f}", w.batch_tokens / 1e6),
                   fmt::format("{:.0f}", w.steps), fmt_days(w.training), fmt_s(strong),
                   fmt_days(base_training_time(t.steps, strong))});
    }
    out.push_back(
        {fmt::format(
             "scaling from {} (base training time, no checkpoints or reserve): critical batch S = S_min (1 + "
             "B_noise/B), B_noise = {} tokens;\nweak scaling keeps {} micro-batches per card (the batch grows, at "
             "most {:.2f}x fewer steps); strong scaling keeps the batch ({} s of waits stay)",
             base.name, comma_grouped(static_cast<std::int64_t>(*q.batch_noise)), base.microbatches_per_card,
             max_batch_speedup(batch, *q.batch_noise), fmt_s(waits)),
         std::move(tab),
         split ? fmt::format("* strong scaling past {} cards would split a micro-batch across cards; the step shrinks "
                             "as if it could",
                             spec.max_cards())
               : ""});
  }
  if (!q.stragglers.empty()) {
    Table tab({{"cards N", true}, {"E[max] - mu (sigma)", true}});
    for (int n : q.stragglers)
      tab.add_row({fmt::format("{}", n), fmt::format("{:.2f}", expected_max_standard_normal(n))});
    out.push_back({"stragglers: each step waits for the slowest of N cards, E[max of N normals] = mu + e_N sigma",
                   std::move(tab), ""});
  }
  return out;
}

CaptionedTable scale_out_table(const ScaleOut& so) {
  const double flops = training_flops_6nd(so.parameters, so.tokens);
  std::vector<Table::Column> cols{
      {"accelerator", false}, {"MFU", true}, {fmt::format("days on {} cards", so.cards), true}};
  if (so.within) cols.push_back({fmt::format("cards for {:g} days", days(*so.within)), true});
  Table t(cols);
  for (const auto& name : so.accelerators) {
    const Accelerator& a = *find_accelerator(name);
    for (double mfu : so.mfu) {
      std::vector<std::string> cells{
          name, fmt_pct0(mfu), fmt::format("{:.0f}", days(time_for_flops(flops, so.cards, a.peak_bf16_flops, mfu)))};
      if (so.within) cells.push_back(fmt::format("{}", cards_for_flops(flops, *so.within, a.peak_bf16_flops, mfu)));
      t.add_row(std::move(cells));
    }
  }
  return {fmt::format("scale-out: F = 6ND = 6 x {:.3g} x {:.3g} = {:.3g} FLOPs", so.parameters, so.tokens, flops),
          std::move(t), ""};
}

}  // namespace

PlanEvaluation evaluate_cases(const PlanSpec& spec, const StepCommSource& comm) {
  PlanEvaluation ev;
  for (const auto& c : spec.cases) {
    PlanResult r = evaluate_plan(spec, c, comm);
    const PlanSpec cs = with_case(spec, c);
    ev.memory_levers.push_back(r.memory.fits() ? std::nullopt
                                               : std::optional<MemoryLevers>(memory_levers(cs, c.cards)));
    ev.deadline_levers.push_back(
        r.time && !r.time->meets() ? std::optional<DeadlineLevers>(deadline_levers(spec, c, comm)) : std::nullopt);
    ev.results.push_back(std::move(r));
  }
  return ev;
}

PlanReportParts plan_report_parts(const PlanScenario& ps, const PlanEvaluation* ev) {
  PlanReportParts parts;
  if (ps.spec && ev) {
    const PlanSpec& spec = *ps.spec;
    if (spec.timed()) {
      parts.about.push_back(fmt::format(
          "{} ({} parameters) on {} ({:g} TFLOP/s BF16); {} tokens in {} steps of {} x {} tokens", spec.model.name,
          comma_grouped(spec.model.parameters), spec.accelerator.name, spec.accelerator.peak_bf16_flops / 1e12,
          comma_grouped(spec.tokens), comma_grouped(ev->results.front().time->steps), spec.sequences_per_step,
          comma_grouped(spec.sequence)));
      parts.about.push_back(fmt::format("communication: {}", ev->results.front().time->comm.source));
    } else {
      parts.about.push_back(fmt::format("{} ({} parameters); memory only (no task)", spec.model.name,
                                        comma_grouped(spec.model.parameters)));
    }
    const Mem mem = Mem::for_usable(spec.usable);
    parts.design.emplace(CaptionedTable{"", design_table(spec, *ev, mem), ""});
    for (const auto& r : ev->results) parts.verdicts.push_back(case_line(r, mem));
    for (std::size_t i = 0; i < ev->results.size(); ++i) {
      if (ev->memory_levers[i])
        parts.levers.push_back(memory_lever_text(ev->results[i], *ev->memory_levers[i], spec, mem));
      if (ev->deadline_levers[i])
        parts.levers.push_back(deadline_lever_text(ev->results[i], *ev->deadline_levers[i], spec));
    }
    parts.details.push_back({"", memory_table(spec, *ev, mem), ""});
    if (spec.timed()) parts.details.push_back({"", room_table(*ev), ""});
    if (!ps.checkpoints.cards.empty() && !ps.checkpoints.intervals.empty() && spec.timed())
      parts.details.push_back(checkpoint_comparison(spec, ps.checkpoints));
    for (auto& t : scaling_tables(spec, ps.scaling, ev->results.back())) parts.details.push_back(std::move(t));
  }
  if (ps.scale_out) parts.scale_out.emplace(scale_out_table(*ps.scale_out));
  if (ps.reshard) parts.tensors.push_back(reshard_table(*ps.reshard));
  if (ps.kv_cache) parts.tensors.push_back(kv_cache_table(*ps.kv_cache));
  return parts;
}

std::string plan_text(const std::string& title, const PlanScenario& ps, const PlanEvaluation* ev) {
  const PlanReportParts parts = plan_report_parts(ps, ev);
  std::string out = title + "\n";
  if (parts.design) {
    for (const auto& line : parts.about) out += fmt::format("{}\n", line);
    out += fmt::format("\n{}\n", parts.design->render());
    for (const auto& line : parts.verdicts) out += fmt::format("{}\n", line);
    if (!parts.levers.empty()) out += "what would fix it:\n";
    for (const auto& line : parts.levers) out += fmt::format("  {}\n", line);
    for (const auto& t : parts.details) out += fmt::format("\n{}", t.render());
  }
  if (parts.scale_out) {
    if (ps.spec) out += '\n';
    out += parts.scale_out->render();
  }
  for (std::size_t i = 0; i < parts.tensors.size(); ++i) {
    if (ps.spec || ps.scale_out || i > 0) out += '\n';
    out += parts.tensors[i].render();
  }
  return out;
}

namespace {
Json result_json(const PlanResult& r, const std::optional<MemoryLevers>& ml, const std::optional<DeadlineLevers>& dl) {
  Json j;
  j["name"] = r.name;
  j["cards"] = r.cards;
  j["hosts"] = r.hosts;
  j["verdict"] = verdict(r);
  j["ok"] = r.ok();
  Json m;
  m["resident_bytes"] = {{"weights", r.memory.resident.weights},
                         {"gradients", r.memory.resident.gradients},
                         {"optimizer", r.memory.resident.optimizer}};
  m["saved_activations_bytes"] = r.memory.saved_activations;
  m["peak_bytes"] = r.memory.peak.peak;
  m["peak_by_kind_bytes"] = {{"resident", r.memory.peak.resident},
                             {"activations", r.memory.peak.activations},
                             {"buffers", r.memory.peak.buffers}};
  const auto& ops = r.memory.sequence.ops();
  m["peak_at"] = r.memory.peak.at_op < ops.size() ? ops[r.memory.peak.at_op] : "";
  m["planned_bytes"] = r.memory.planned;
  m["usable_bytes"] = r.memory.usable;
  m["planned_gib"] = round_to(gib(r.memory.planned), 0.001);
  m["fits"] = r.memory.fits();
  if (ml) {
    Json l;
    l["over_bytes"] = ml->over;
    if (ml->cards) l["cards"] = *ml->cards;
    if (ml->whole_host_cards) l["whole_host_cards"] = *ml->whole_host_cards;
    Json opts = Json::array();
    for (const auto& o : ml->options)
      opts.push_back({{"change", o.change}, {"planned_bytes", o.planned}, {"fits", o.fits}});
    l["options"] = opts;
    m["levers"] = l;
  }
  j["memory"] = m;
  if (r.time) {
    const TimePlan& t = *r.time;
    Json tj;
    tj["microbatches_per_card"] = r.microbatches_per_card;
    tj["uneven"] = r.uneven;
    tj["efficiency"] = r.efficiency;
    tj["steps"] = t.steps;
    tj["flops_per_token"] = t.flops_per_token;
    tj["flops_per_step"] = t.flops_per_step;
    tj["compute_s"] = round_to(to_s(t.compute), 1e-6);
    tj["link_s"] = round_to(to_s(t.comm.link), 1e-6);
    tj["exposed_comm_s"] = round_to(to_s(t.comm.exposed), 1e-6);
    tj["comm_source"] = t.comm.source;
    tj["input_wait_s"] = round_to(to_s(t.input_wait), 1e-6);
    tj["straggler_s"] = round_to(to_s(t.straggler), 1e-6);
    tj["step_s"] = round_to(to_s(t.step), 1e-6);
    tj["checkpoint"] = {{"bytes", t.checkpoint_bytes},
                        {"write_rate_Bps", round_to(t.checkpoint_write_rate, 1e-3)},
                        {"save_s", round_to(to_s(t.checkpoint.save), 1e-6)},
                        {"restore_s", round_to(to_s(t.checkpoint.restore), 1e-6)},
                        {"interval_s", round_to(to_s(t.interval), 1e-3)},
                        {"optimal_interval_s", round_to(to_s(t.optimal_interval), 1e-3)},
                        {"job_mtbf_s", round_to(to_s(t.job_mtbf), 1e-3)},
                        {"overhead", round_to(t.overhead.total(), 1e-9)}};
    tj["base_training_days"] = round_to(days(t.base_training), 1e-6);
    tj["completion_days"] = round_to(days(t.completion), 1e-6);
    tj["deadline_days"] = round_to(days(t.deadline), 1e-6);
    tj["meets"] = t.meets();
    tj["budget_s"] = round_to(to_s(t.budget), 1e-6);
    tj["plain_budget_s"] = round_to(to_s(t.plain_budget), 1e-6);
    tj["efficiency_needed"] = round_to(t.efficiency_needed, 1e-6);
    tj["comm_may_grow_to_s"] = round_to(to_s(t.comm_may_grow_to), 1e-6);
    if (dl) {
      Json l;
      l["efficiency_needed"] = round_to(dl->efficiency_needed, 1e-6);
      if (dl->cards) l["cards"] = *dl->cards;
      if (dl->whole_host_cards) l["whole_host_cards"] = *dl->whole_host_cards;
      tj["levers"] = l;
    }
    j["time"] = tj;
  }
  return j;
}
}  // namespace

Json plan_json(const std::string& name, const PlanScenario& ps, const PlanEvaluation* ev) {
  Json j;
  j["scenario"] = name;
  if (ps.spec && ev) {
    Json cases = Json::array();
    for (std::size_t i = 0; i < ev->results.size(); ++i)
      cases.push_back(result_json(ev->results[i], ev->memory_levers[i], ev->deadline_levers[i]));
    j["cases"] = cases;
    const PlanSpec& spec = *ps.spec;
    if (!ps.checkpoints.cards.empty() && spec.timed()) {
      const CheckpointCost cost{
          transfer_time(spec.checkpoint_bytes.value_or(recoverable_state_bytes(spec.model.parameters, spec.format)),
                        spec.storage_bandwidth),
          spec.restore};
      Json rows = Json::array();
      for (int cards : ps.checkpoints.cards) {
        const Interruptions job{spec.card_mtbf, cards, spec.rollback_every};
        Json row{{"cards", cards},
                 {"optimal_interval_s", round_to(to_s(optimal_checkpoint_interval(cost, job)), 1e-3)}};
        Json o = Json::array();
        for (Time i : ps.checkpoints.intervals)
          o.push_back(
              {{"interval_s", to_s(i)}, {"overhead", round_to(checkpoint_overhead(cost, i, job).total(), 1e-9)}});
        row["overheads"] = o;
        rows.push_back(row);
      }
      j["checkpoint_comparison"] = rows;
    }
    const PlanResult& base = ev->results.back();
    if (!ps.scaling.cards.empty() && base.time && ps.scaling.batch_noise) {
      const TimePlan& t = *base.time;
      const double batch = static_cast<double>(spec.tokens_per_step());
      const Time waits = t.step - t.compute - t.straggler;
      Json rows = Json::array();
      for (int c : ps.scaling.cards) {
        const WeakScaling w =
            weak_scaling(static_cast<double>(t.steps), batch, base.cards, t.step, c, *ps.scaling.batch_noise);
        const Time strong = strong_scaling_step(t.compute, waits, base.cards, c);
        rows.push_back({{"cards", c},
                        {"weak_batch_tokens", w.batch_tokens},
                        {"weak_steps", round_to(w.steps, 0.01)},
                        {"weak_days", round_to(days(w.training), 1e-6)},
                        {"strong_step_s", round_to(to_s(strong), 1e-6)},
                        {"strong_days", round_to(days(base_training_time(t.steps, strong)), 1e-6)}});
      }
      j["scaling"] = {{"from", base.name},
                      {"batch_noise_tokens", *ps.scaling.batch_noise},
                      {"max_batch_speedup", round_to(max_batch_speedup(batch, *ps.scaling.batch_noise), 1e-6)},
                      {"points", rows}};
    }
  }
  if (!ps.scaling.stragglers.empty()) {
    Json s = Json::array();
    for (int n : ps.scaling.stragglers)
      s.push_back({{"cards", n}, {"sigmas", round_to(expected_max_standard_normal(n), 1e-6)}});
    j["stragglers"] = s;
  }
  if (ps.scale_out) {
    const ScaleOut& so = *ps.scale_out;
    const double flops = training_flops_6nd(so.parameters, so.tokens);
    Json rows = Json::array();
    for (const auto& accel : so.accelerators)
      for (double mfu : so.mfu) {
        const double peak = find_accelerator(accel)->peak_bf16_flops;
        Json row{{"accelerator", accel},
                 {"mfu", mfu},
                 {"days", round_to(days(time_for_flops(flops, so.cards, peak, mfu)), 1e-6)}};
        if (so.within) row["cards_within_deadline"] = cards_for_flops(flops, *so.within, peak, mfu);
        rows.push_back(row);
      }
    j["scale_out"] = {{"flops", flops}, {"cards", so.cards}, {"rows", rows}};
  }
  if (ps.reshard) j["reshard"] = reshard_json(*ps.reshard);
  if (ps.kv_cache) j["kv_cache"] = kv_cache_json(*ps.kv_cache);
  return j;
}

std::string sweep_mark(const PlanResult& r) {
  if (!r.memory.fits()) return "no fit";
  if (!r.time) return "fits";
  return fmt::format("{} {}", fmt_days(r.time->completion), r.time->meets() ? "ok" : "late");
}

std::string plan_verdict(const PlanResult& r) { return verdict(r); }

std::string plan_memory_figure(Bytes b, Bytes usable) { return Mem::for_usable(usable).part(b); }

CaptionedTable sweep_table(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points,
                           const PlanSpec& spec) {
  if (axes.size() == 2) {
    // A matrix: the first axis down, the second across.
    std::vector<Table::Column> cols{{axes[0].key.name + " \\ " + axes[1].key.name, false}};
    for (const auto& v : axes[1].values) cols.push_back({v.label, true});
    Table t(cols);
    const std::size_t w = axes[1].values.size();
    for (std::size_t i = 0; i < axes[0].values.size(); ++i) {
      std::vector<std::string> cells{axes[0].values[i].label};
      for (std::size_t k = 0; k < w; ++k) cells.push_back(sweep_mark(points[i * w + k].result));
      t.add_row(std::move(cells));
    }
    return {spec.timed() ? "completion days (ok = meets the deadline, late = misses, no fit = over memory)"
                         : "memory (fits / no fit)",
            std::move(t), ""};
  }
  std::vector<Table::Column> cols;
  for (const auto& a : axes) cols.push_back({a.key.name, true});
  const Mem mem = Mem::for_usable(spec.usable);
  cols.push_back({fmt::format("memory ({})", mem.unit()), true});
  if (spec.timed()) {
    cols.push_back({"step (s)", true});
    cols.push_back({"days", true});
  }
  cols.push_back({"verdict", false});
  Table t(cols);
  for (const auto& p : points) {
    std::vector<std::string> cells;
    for (std::size_t a = 0; a < axes.size(); ++a) cells.push_back(axes[a].values[p.index[a]].label);
    cells.push_back(mem.num(p.result.memory.planned));
    if (p.result.time) {
      cells.push_back(fmt_s(p.result.time->step));
      cells.push_back(fmt_days(p.result.time->completion));
    }
    cells.push_back(verdict(p.result));
    t.add_row(std::move(cells));
  }
  return {"", std::move(t), ""};
}

std::string sweep_summary(const std::vector<SweepPoint>& points, const PlanSpec& spec) {
  std::size_t good = 0;
  for (const auto& p : points) good += p.result.ok() ? 1 : 0;
  return fmt::format("{} of {} combinations fit in memory{}", good, points.size(),
                     spec.timed() ? " and meet the deadline" : "");
}

std::string sweep_text(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points,
                       const PlanSpec& spec) {
  return sweep_table(axes, points, spec).render() + sweep_summary(points, spec) + "\n";
}

std::string sweep_csv(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points) {
  std::string out;
  for (const auto& a : axes) out += a.key.name + ",";
  out += "cards_used,memory_planned_bytes,usable_bytes,fits,step_s,completion_days,meets,ok\n";
  for (const auto& p : points) {
    for (std::size_t a = 0; a < axes.size(); ++a) out += axes[a].values[p.index[a]].label + ",";
    const PlanResult& r = p.result;
    out += fmt::format("{},{},{},{},", r.cards, r.memory.planned, r.memory.usable, r.memory.fits() ? "true" : "false");
    if (r.time)
      out += fmt::format("{:.6f},{:.6f},{}", to_s(r.time->step), days(r.time->completion),
                         r.time->meets() ? "true" : "false");
    else
      out += ",,";
    out += fmt::format(",{}\n", r.ok() ? "true" : "false");
  }
  return out;
}

Json sweep_json(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points) {
  Json list = Json::array();
  for (const auto& p : points) {
    Json j;
    Json at;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const SweepValue& v = axes[a].values[p.index[a]];
      if (axes[a].key.kind == SweepKind::Fraction)
        at[axes[a].key.name] = v.fraction;
      else if (axes[a].key.kind == SweepKind::Duration)
        at[axes[a].key.name + "_s"] = to_s(v.integer);
      else if (axes[a].key.kind == SweepKind::Size)
        at[axes[a].key.name + "_bytes"] = v.integer;
      else
        at[axes[a].key.name] = v.integer;
    }
    j["at"] = at;
    j["result"] = result_json(p.result, std::nullopt, std::nullopt);
    list.push_back(j);
  }
  return list;
}

}  // namespace stepsim::cli
