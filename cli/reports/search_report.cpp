#include "cli/reports/search_report.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/input/search_input.hpp"
#include "cli/reports/html_report.hpp"
#include "cli/reports/job_step_report.hpp"
#include "cli/reports/quantities.hpp"
#include "cli/reports/table.hpp"
#include "models/units.hpp"

namespace stepsim::cli {

namespace {

std::string secs(Time t) {
  return t >= kSecond ? fmt::format("{:.3f} s", to_s(t)) : fmt::format("{:.1f} ms", to_ms(t));
}

// ZeRO's stage, HSDP's replicas of the sharded state and ZeRO-3's weights kept gathered from the
// forward to the backward, the optimizer on the host ("fsdp x16 kept host").
std::string zero_label(const JobLayout& l) {
  std::string out = l.zero >= 3 ? "fsdp" : std::to_string(l.zero);
  if (l.dp_replicate > 1) out += fmt::format(" x{}", l.dp_replicate);
  if (l.zero >= 3 && l.keep_gathered) out += " kept";
  if (l.offload_optimizer) out += " host";
  return out;
}

// Recompute, and how many layers of each chunk where only the first are ("full (6)").
// With activations on the host, their layers ("none (host 22)").
std::string recompute_cell(const JobLayout& l) {
  const std::string what =
      l.partial_recompute() ? fmt::format("full ({})", l.recompute_layers) : std::string(recompute_name(l.recompute));
  return l.offload_activations > 0 ? fmt::format("{} (host {})", what, l.offload_activations) : what;
}

bool timed(const SearchSpec& s) { return s.task.tokens > 0; }

std::string counts_line(const SearchCounts& n) {
  return fmt::format(
      "{} layout{} considered: {} pruned by divisibility, {} by schedule, {} by memory (analytic), {} by bound "
      "(compute alone slower than the best found); {} simulated{}",
      n.considered, n.considered == 1 ? "" : "s", n.divisibility, n.schedule, n.memory, n.bound, n.simulated,
      n.over_memory_simulated > 0 ? fmt::format(" ({} over memory at the simulated peak)", n.over_memory_simulated)
                                  : "");
}

std::string exposed_of(const Evaluated& e) {
  return exposed_cell(
      {{"TP", e.exposed_tp}, {"PP", e.exposed_pp}, {"DP", e.exposed_dp}, {"CP", e.exposed_cp}, {"EP", e.exposed_ep}});
}

Table top_table(const SearchSpec& spec, const std::vector<Evaluated>& rows) {
  std::vector<Table::Column> cols = {{"#"}, {"cards"}, {"tp"}, {"pp"}, {"v"}, {"dp"}};
  const bool cp = std::any_of(rows.begin(), rows.end(), [](const Evaluated& e) { return e.c.layout.cp > 1; });
  const bool ep = std::any_of(rows.begin(), rows.end(), [](const Evaluated& e) { return e.c.layout.ep > 1; });
  // The CP exchange and expert TP get a column when searched (a single value is in the header).
  const bool cp_comm = cp && spec.axes.cp_comm.size() != 1;
  const bool etp = spec.model.experts > 0 && spec.axes.expert_tp.size() != 1;
  // The pipeline's ends searched: the first and last chunk's layers.
  const bool ends = spec.axes.chunk_ends;
  if (ends) cols.push_back({"ends", false});
  if (cp) cols.push_back({"cp"});
  if (cp_comm) cols.push_back({"cp comm", false});
  if (ep) cols.push_back({"ep"});
  if (etp) cols.push_back({"etp"});
  for (auto c : std::vector<Table::Column>{{"zero"},
                                           {"schedule", false},
                                           {"mbs"},
                                           {"recompute", false},
                                           {"sp", false},
                                           {"step"},
                                           {"MFU"},
                                           {"memory GiB"},
                                           {"bubble"},
                                           {"exposed comm", false}})
    cols.push_back(c);
  if (spec.rank == SearchRank::Cost) cols.push_back({"card-h/step"});
  if (timed(spec)) cols.push_back({"days"});
  Table t(cols);
  int k = 0;
  for (const auto& e : rows) {
    const JobLayout& l = e.c.layout;
    std::vector<std::string> row = {std::to_string(++k),  std::to_string(e.c.cards), std::to_string(l.tp),
                                    std::to_string(l.pp), std::to_string(l.vpp),     std::to_string(l.dp)};
    if (ends) {
      const std::vector<int> n = chunk_layer_counts(spec.model.shape.layers, l);
      row.push_back(n.size() < 2 ? "-" : fmt::format("{}/{}", n.front(), n.back()));
    }
    if (cp) row.push_back(std::to_string(l.cp));
    if (cp_comm) row.push_back(l.cp > 1 ? cp_comm_name(l.cp_comm) : "-");
    if (ep) row.push_back(std::to_string(l.ep));
    if (etp) row.push_back(std::to_string(l.etp()));
    row.push_back(zero_label(l));
    row.push_back(l.pp > 1 ? l.schedule : "-");
    row.push_back(std::to_string(l.micro_batch));
    row.push_back(recompute_cell(l));
    row.push_back(l.sequence_parallel ? "yes" : "no");
    row.push_back(secs(e.step));
    row.push_back(percent(e.mfu, 1));
    row.push_back(fmt::format("{:.1f}", gib(e.memory.total())));
    row.push_back(percent(e.bubble, 1));
    row.push_back(exposed_of(e));
    if (spec.rank == SearchRank::Cost) row.push_back(fmt::format("{:.2f}", e.cost() / 3600.0));
    if (timed(spec)) row.push_back(fmt::format("{:.1f}", days(e.completion)));
    t.add_row(std::move(row));
  }
  return t;
}

Table cards_table(const SearchSpec& spec, const SearchResult& r) {
  std::vector<Table::Column> cols = {{"cards"}, {"best layout", false}, {"step"}};
  const bool dl = timed(spec) && spec.task.deadline > 0;
  if (timed(spec)) cols.push_back({"days"});
  if (dl) {
    cols.push_back({"budget/step"});
    cols.push_back({"deadline", false});
  }
  cols.push_back({"front", false});
  Table t(cols);
  const std::set<std::int64_t> front(r.front.begin(), r.front.end());
  for (const auto& p : r.per_cards) {
    std::vector<std::string> row = {std::to_string(p.cards)};
    if (p.best) {
      std::string lbl = layout_label(p.best->c, spec.model.shape.layers);
      lbl = lbl.substr(lbl.find(": ") + 2);
      row.push_back(lbl);
      row.push_back(secs(p.best->step));
      if (timed(spec)) row.push_back(fmt::format("{:.1f}", days(p.best->completion)));
    } else {
      row.push_back("(none fits)");
      row.push_back("-");
      if (timed(spec)) row.push_back("-");
    }
    if (dl) {
      row.push_back(secs(p.budget));
      row.push_back(p.best ? (p.meets ? "meets" : "misses") : "-");
    }
    row.push_back(front.count(p.cards) ? "yes" : "");
    t.add_row(std::move(row));
  }
  return t;
}

std::string rank_words(SearchRank r) {
  switch (r) {
    case SearchRank::Step: return "step time";
    case SearchRank::Cost: return "cost (cards x step time)";
    case SearchRank::Days: return "days to finish (checkpoint and failure overhead included)";
  }
  return "?";
}

// The checkpoint interval the days assume: the task's, or Young's optimum, which depends on the
// card count (the failures' rate), from the fewest cards listed to the most.
std::string checkpoint_words(const SearchSpec& spec, const SearchResult& r) {
  if (spec.task.interval) return fmt::format(", a checkpoint every {}", format_duration(*spec.task.interval));
  if (r.per_cards.empty()) return "";
  const Time first = task_checkpoint_interval(spec, r.per_cards.front().cards);
  const Time last = task_checkpoint_interval(spec, r.per_cards.back().cards);
  if (first <= 0) return "";
  if (first == last) return fmt::format(", a checkpoint every {} (Young's optimum)", format_duration(first));
  return fmt::format(", a checkpoint every {} on {} cards to {} on {} (Young's optimum)", format_duration(first),
                     r.per_cards.front().cards, format_duration(last), r.per_cards.back().cards);
}

// The values of a searched axis, "a, b, c".
template <class T>
std::string listed(const std::vector<T>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

// Where the master weights are and what the GEMMs compute in, where not the default.
std::string precision_lines(const JobLayout& l) {
  std::string out;
  if (l.master_weights == MasterWeights::Model)
    out += "FP32 weights as the master, cast to BF16 to compute (no BF16 copy kept beside them)\n";
  // MFU is then against the FP8 (FP4) peak: the reader refuses a recipe without one.
  if (l.fp8)
    out += fmt::format("{}; MFU against the {} peak\n", low_precision_gemm_words(l),
                       l.fp8_recipe == Fp8Recipe::Nvfp4 ? "FP4" : "FP8");
  return out;
}

std::string header(const SearchReportInfo& info, const SearchSpec& spec, const SearchResult& r) {
  const std::string batches =
      spec.axes.global_batch.size() < 2 ? std::to_string(spec.base.global_batch) : listed(spec.axes.global_batch);
  std::string out = fmt::format("{}\n{} on {} x {}; global batch {}\n", info.name, model_words(spec.model),
                                listed(spec.axes.cards), spec.cluster.accelerator.name, batches);
  out += uncalibrated_line(spec.cluster);
  out += cluster_line(spec.cluster);
  if (spec.around)
    out += fmt::format("around the job step's layout: {} searched{}, the other keys as it has them\n",
                       fmt::join(spec.axes.opened, ", "), spec.axes.dp_listed ? "" : ", dp what the cards leave");
  // Fixed settings every layout shares that the table does not show.
  if (spec.model.experts > 0 && !spec.model.even_routing())
    out += fmt::format(
        "expert routing: {}{}\n", expert_routing_words(spec.model, spec.base),
        spec.model.capacity_factor ? fmt::format(", capacity factor {:g}", *spec.model.capacity_factor) : "");
  if (spec.base.recompute_modules != kRecomputeCoreAttn)
    out += fmt::format("selective recompute: {}\n",
                       spec.base.recompute_modules ? recompute_module_list(spec.base.recompute_modules) : "no modules");
  if (spec.base.overlap_tp) out += "TP communication overlapped with the GEMMs where sequence parallel\n";
  if (const std::string kernel = attention_kernel_words(spec.base); !kernel.empty())
    out += fmt::format("attention by {}\n", kernel);
  if (spec.base.dp_bandwidth > 0)
    out += fmt::format("data-parallel collectives at most {:.3g} GB/s per GPU\n", spec.base.dp_bandwidth / 1e9);
  if (spec.base.zero3_fetch == Zero3Fetch::Module)
    out += "zero 3: weights gathered module by module, a recomputed layer's again before its backward\n";
  const SearchAxes& a = spec.axes;
  // ZeRO-3's weights: kept gathered from forward to backward, or, where a top layout gathers
  // them again, how to try keeping them.
  const bool regathers_at_top = std::any_of(
      r.top.begin(), r.top.end(), [](const Evaluated& e) { return e.c.layout.zero >= 3 && !e.c.layout.keep_gathered; });
  if (a.keep_gathered == std::vector<int>{1})
    out += "zero 3: each layer's gathered weights kept from its forward to its backward\n";
  else if (regathers_at_top && a.keep_gathered == std::vector<int>{0})
    out +=
        "zero 3: each layer's weights gathered again for its backward (keep_gathered: auto also tries keeping them)\n";
  // ZeRO 2 over several micro-batches: how the top layouts at zero 2 accumulate their gradients.
  const bool zero2_at_top = std::any_of(r.top.begin(), r.top.end(), [](const Evaluated& e) {
    return e.c.layout.zero == 2 && e.c.layout.microbatches() > 1;
  });
  if (zero2_at_top)
    out +=
        spec.base.zero2_accumulate == Zero2Accumulate::Whole
            ? "zero 2: gradients accumulated whole over the micro-batches, reduce-scattered once\n"
            : "zero 2: each micro-batch's gradients reduce-scattered (zero2_accumulate: whole accumulates them whole, "
              "reduced once)\n";
  out += precision_lines(spec.base);
  if (a.expert_tp.size() == 1 && a.expert_tp.front() > 0)
    out += fmt::format("routed experts at expert TP {} (below tp: EP folded over TP)\n", a.expert_tp.front());
  // Unfolded, an EP group at TP t spans ranks t apart, across nodes from t = 2 on a node of 8
  // with ep 8: say how to search the other way.
  const bool tp_searched = a.tp.empty() || std::any_of(a.tp.begin(), a.tp.end(), [](int t) { return t > 1; });
  if (spec.model.experts > 0 && a.expert_tp == std::vector<int>{0} && tp_searched)
    out += "routed experts split as attention is at every tp (expert_tp: auto also searches them folded)\n";
  // ZeRO over more than a node: say whether its state is replicated (HSDP) or how to try it.
  const bool zero_searched = a.zero.empty() || std::any_of(a.zero.begin(), a.zero.end(), [](int z) { return z > 0; });
  const bool past_a_node =
      std::any_of(a.cards.begin(), a.cards.end(), [&](std::int64_t n) { return n > spec.cluster.node.gpus; });
  if (zero_searched && past_a_node && a.dp_replicate == std::vector<int>{1})
    out += "ZeRO's state sharded over all data-parallel ranks (dp_replicate: auto also tries a shard group per node)\n";
  else if (a.dp_replicate.size() == 1 && a.dp_replicate.front() > 1)
    out += fmt::format("ZeRO's state in {} replicas (HSDP)\n", a.dp_replicate.front());
  // Full recompute: of the fewest layers that fit, or, where a top layout recomputes every layer,
  // how to try fewer.
  const bool full_at_top = std::any_of(r.top.begin(), r.top.end(), [](const Evaluated& e) {
    return e.c.layout.recompute == JobRecompute::Full && e.c.layout.recompute_layers < 0;
  });
  if (a.recompute_layers.empty())
    out += "full recompute of the fewest layers of each chunk that fit (recompute_layers: auto)\n";
  else if (full_at_top && a.recompute_layers == std::vector<int>{-1})
    out += "full recompute of every layer (recompute_layers: auto also tries the fewest layers that fit)\n";
  if (a.cp_comm.size() == 1 && a.cp_comm.front() != CpComm::P2p)
    out += fmt::format("context parallelism by {}\n", cp_comm_name(a.cp_comm.front()));
  if (timed(spec))
    out += fmt::format("task: {} tokens, deadline {:.1f} days ({:.1f} reserved){}\n", spec.task.tokens,
                       days(spec.task.deadline), days(spec.task.reserved), checkpoint_words(spec, r));
  return out;
}

// The design desk's answer: the fewest cards that meet the deadline, with their layout.
std::string fewest_line(const SearchSpec& spec, const SearchResult& r) {
  if (!timed(spec) || spec.task.deadline <= 0) return "";
  for (const auto& p : r.per_cards)
    if (p.best && p.meets)
      return fmt::format("fewest cards that meet the deadline: {} ({}), {:.1f} days\n", p.cards,
                         layout_label(p.best->c, spec.model.shape.layers), days(p.best->completion));
  return "no card count searched meets the deadline\n";
}

// Where the step searched around stands: its time and memory, and how many layouts that fit rank
// before it (every layout whose compute alone is faster than it was simulated).
std::string around_lines(const SearchSpec& spec, const SearchResult& r) {
  const Evaluated& a = *r.around;
  const Bytes usable = spec.cluster.accelerator.usable_memory;
  std::string out = fmt::format(
      "the job step's own layout, {}:\n  {:.3f} s a step, MFU {:.1f}%, {:.1f} of {:.1f} GiB per GPU",
      layout_label(a.c, spec.model.shape.layers), to_s(a.step), 100 * a.mfu, gib(a.memory.total()), gib(usable));
  // With a task (the job beside the step): its days to train, against the deadline.
  if (timed(spec))
    out += fmt::format(", {:.1f} days{}", days(a.completion),
                       spec.task.deadline > 0 ? fmt::format(" ({} the {:g}-day deadline)",
                                                            a.completion <= spec.task.deadline ? "meets" : "misses",
                                                            days(spec.task.deadline))
                                              : "");
  if (a.memory.total() > usable)
    return out + fmt::format(": does not fit{}\n", r.top.empty() ? "" : "; the layouts above do");
  if (r.ranked_before_around == 0) return out + "; no layout that fits ranks before it\n";
  const Evaluated& best = r.top.front();
  const std::string how = best.step < a.step ? fmt::format("{:.1f}% faster ({:.3f} s)",
                                                           100 * (1 - to_s(best.step) / to_s(a.step)), to_s(best.step))
                                             : fmt::format("as fast in {:.1f} GiB per GPU", gib(best.memory.total()));
  return out + fmt::format("\n  {} {} that {} rank before it (faster, or as fast in less memory); #1 is {}\n",
                           r.ranked_before_around, r.ranked_before_around == 1 ? "layout" : "layouts",
                           r.ranked_before_around == 1 ? "fits" : "fit", how);
}

}  // namespace

std::string search_text(const SearchReportInfo& info, const SearchSpec& spec, const SearchResult& r) {
  std::string out = header(info, spec, r);
  out += counts_line(r.counts) + "\n\n";
  if (!r.top.empty()) {
    out += fmt::format("top {} by {}\n", r.top.size(), rank_words(spec.rank));
    out += top_table(spec, r.top).render();
    if (!out.empty() && out.back() != '\n') out += '\n';
  }
  if (r.around) out += "\n" + around_lines(spec, r);
  if (r.per_cards.size() > 1 || (timed(spec) && spec.task.deadline > 0)) {
    // With a task and several global batches the best is the soonest to finish, not the fastest step.
    const bool soonest = timed(spec) && spec.axes.global_batch.size() > 1;
    out += fmt::format("\nthe {} layout per card count{}\n", soonest ? "soonest-finishing" : "fastest",
                       timed(spec) ? " against the deadline (front: fewer cards or sooner)" : "");
    out += cards_table(spec, r).render();
    if (out.back() != '\n') out += '\n';
    std::size_t width = 0;  // the card counts right-aligned, as in the table above
    for (const auto& p : r.per_cards) width = std::max(width, std::to_string(p.cards).size());
    for (const auto& p : r.per_cards)
      if (!p.why.empty()) out += fmt::format("  {:>{}} cards {}\n", p.cards, width, p.why);
    out += fewest_line(spec, r);
  }
  if (r.miss) {
    if (out.size() < 2 || out.compare(out.size() - 2, 2, "\n\n") != 0) out += "\n";
    out += fmt::format("nearest miss: {}\nwhat would have to change:\n", r.miss->what);
    for (const auto& c : r.miss->changes) out += fmt::format("  - {}\n", c);
  }
  return out;
}

namespace {

nlohmann::ordered_json entry_json(const Evaluated& e) {
  const JobLayout& l = e.c.layout;
  nlohmann::ordered_json j;
  j["index"] = e.c.index;
  j["cards"] = e.c.cards;
  j["tp"] = l.tp;
  j["pp"] = l.pp;
  j["virtual_stages"] = l.vpp;
  // present when set: the first or last chunk's layers (absent: an equal share)
  if (l.first_chunk_layers >= 0) j["first_chunk_layers"] = l.first_chunk_layers;
  if (l.last_chunk_layers >= 0) j["last_chunk_layers"] = l.last_chunk_layers;
  j["dp"] = l.dp;
  j["cp"] = l.cp;
  if (l.cp_comm != CpComm::P2p) j["cp_comm"] = cp_comm_name(l.cp_comm);  // present when not the ring
  j["ep"] = l.ep;
  if (l.folded()) j["expert_tp"] = l.expert_tp;  // present when below tp
  j["zero"] = l.zero;
  if (l.dp_replicate > 1) j["dp_replicate"] = l.dp_replicate;     // present with HSDP's replicas
  if (l.zero >= 3 && l.keep_gathered) j["keep_gathered"] = true;  // present when kept
  if (l.offload_optimizer) j["offload_optimizer"] = true;         // present when on the host
  j["schedule"] = l.schedule;
  j["micro_batch"] = l.micro_batch;
  j["global_batch"] = l.global_batch;
  j["recompute"] = recompute_name(l.recompute);
  if (l.partial_recompute()) j["recompute_layers"] = l.recompute_layers;  // present when not every layer
  if (l.offload_activations > 0) j["offload_activations"] = l.offload_activations;  // present when on the host
  j["sequence_parallel"] = l.sequence_parallel;
  j["step_ns"] = e.step;
  j["step_s"] = to_s(e.step);
  j["bound_ns"] = e.bound;
  j["mfu"] = e.mfu;
  j["bubble"] = e.bubble;
  j["memory_bytes"] = {{"weights", e.memory.weights},     {"gradients", e.memory.gradients},
                       {"optimizer", e.memory.optimizer}, {"activations", e.memory.activations},
                       {"buffers", e.memory.buffers},     {"total", e.memory.total()}};
  j["analytic_memory_bytes"] = e.analytic_memory;
  j["exposed_ns"] = {
      {"tp", e.exposed_tp}, {"pp", e.exposed_pp}, {"dp", e.exposed_dp}, {"cp", e.exposed_cp}, {"ep", e.exposed_ep}};
  j["limit"] = e.limit;
  j["limit_share"] = e.limit_share;
  j["completion_ns"] = e.completion;
  j["days"] = days(e.completion);
  j["overhead"] = e.overhead;
  return j;
}

}  // namespace

Evaluated evaluated_from_json(const nlohmann::json& j) {
  Evaluated e;
  JobLayout& l = e.c.layout;
  e.c.index = j.at("index").get<std::int64_t>();
  e.c.cards = j.at("cards").get<std::int64_t>();
  l.tp = j.at("tp").get<int>();
  l.pp = j.at("pp").get<int>();
  l.vpp = j.at("virtual_stages").get<int>();
  if (j.contains("first_chunk_layers")) l.first_chunk_layers = j.at("first_chunk_layers").get<int>();
  if (j.contains("last_chunk_layers")) l.last_chunk_layers = j.at("last_chunk_layers").get<int>();
  l.dp = j.at("dp").get<int>();
  l.cp = j.at("cp").get<int>();
  if (j.contains("cp_comm")) {
    const auto name = j.at("cp_comm").get<std::string>();
    const auto comm = cp_comm_from_name(name);
    if (!comm) throw std::invalid_argument(fmt::format("unknown cp_comm '{}' (p2p, all_gather or a2a)", name));
    l.cp_comm = *comm;
  }
  l.ep = j.at("ep").get<int>();
  if (j.contains("expert_tp")) l.expert_tp = j.at("expert_tp").get<int>();
  l.zero = j.at("zero").get<int>();
  if (j.contains("dp_replicate")) l.dp_replicate = j.at("dp_replicate").get<int>();
  if (j.contains("keep_gathered")) l.keep_gathered = j.at("keep_gathered").get<bool>();
  if (j.contains("offload_optimizer")) l.offload_optimizer = j.at("offload_optimizer").get<bool>();
  l.schedule = j.at("schedule").get<std::string>();
  l.micro_batch = j.at("micro_batch").get<int>();
  l.global_batch = j.at("global_batch").get<std::int64_t>();
  l.recompute = recompute_from_name(j.at("recompute").get<std::string>()).value_or(JobRecompute::None);
  if (j.contains("recompute_layers")) l.recompute_layers = j.at("recompute_layers").get<int>();
  if (j.contains("offload_activations")) l.offload_activations = j.at("offload_activations").get<int>();
  l.sequence_parallel = j.at("sequence_parallel").get<bool>();
  e.step = j.at("step_ns").get<Time>();
  e.bound = j.at("bound_ns").get<Time>();
  e.mfu = j.at("mfu").get<double>();
  e.bubble = j.at("bubble").get<double>();
  const auto& m = j.at("memory_bytes");
  e.memory.weights = m.at("weights").get<Bytes>();
  e.memory.gradients = m.at("gradients").get<Bytes>();
  e.memory.optimizer = m.at("optimizer").get<Bytes>();
  e.memory.activations = m.at("activations").get<Bytes>();
  e.memory.buffers = m.at("buffers").get<Bytes>();
  e.analytic_memory = j.at("analytic_memory_bytes").get<Bytes>();
  const auto& x = j.at("exposed_ns");
  e.exposed_tp = x.at("tp").get<Time>();
  e.exposed_pp = x.at("pp").get<Time>();
  e.exposed_dp = x.at("dp").get<Time>();
  e.exposed_cp = x.at("cp").get<Time>();
  e.exposed_ep = x.at("ep").get<Time>();
  e.limit = j.at("limit").get<std::string>();
  e.limit_share = j.at("limit_share").get<double>();
  e.completion = j.at("completion_ns").get<Time>();
  e.overhead = j.at("overhead").get<double>();
  return e;
}

SearchCounts counts_from_json(const nlohmann::json& j) {
  SearchCounts n;
  n.considered = j.at("considered").get<std::int64_t>();
  n.divisibility = j.at("pruned_divisibility").get<std::int64_t>();
  n.schedule = j.at("pruned_schedule").get<std::int64_t>();
  n.memory = j.at("pruned_memory").get<std::int64_t>();
  n.bound = j.at("pruned_bound").get<std::int64_t>();
  n.simulated = j.at("simulated").get<std::int64_t>();
  n.over_memory_simulated = j.at("over_memory_simulated").get<std::int64_t>();
  return n;
}

nlohmann::ordered_json search_json(const SearchReportInfo& info, const SearchSpec& spec, const SearchResult& r) {
  nlohmann::ordered_json j;
  j["name"] = info.name;
  j["file"] = info.file;
  j["shard"] = info.shard;
  j["rank"] = search_rank_name(spec.rank);
  j["top_n"] = spec.top;
  const SearchCounts& n = r.counts;
  j["counts"] = {{"considered", n.considered},
                 {"pruned_divisibility", n.divisibility},
                 {"pruned_schedule", n.schedule},
                 {"pruned_memory", n.memory},
                 {"pruned_bound", n.bound},
                 {"simulated", n.simulated},
                 {"over_memory_simulated", n.over_memory_simulated}};
  j["top"] = nlohmann::ordered_json::array();
  for (const auto& e : r.top) j["top"].push_back(entry_json(e));
  j["per_cards"] = nlohmann::ordered_json::array();
  for (const auto& p : r.per_cards) {
    nlohmann::ordered_json x;
    x["cards"] = p.cards;
    x["best_index"] = p.best ? nlohmann::ordered_json(p.best->c.index) : nlohmann::ordered_json(nullptr);
    x["step_s"] = p.best ? to_s(p.best->step) : 0.0;
    x["days"] = p.best ? days(p.best->completion) : 0.0;
    x["budget_s"] = to_s(p.budget);
    if (timed(spec)) x["checkpoint_every_s"] = to_s(task_checkpoint_interval(spec, p.cards));
    x["meets"] = p.meets;
    x["why"] = p.why;
    j["per_cards"].push_back(x);
  }
  j["front_cards"] = r.front;
  j["none_why"] = nlohmann::ordered_json::object();
  for (const auto& [cards, why] : r.none_why) j["none_why"][std::to_string(cards)] = why;
  if (r.miss) j["nearest_miss"] = {{"what", r.miss->what}, {"changes", r.miss->changes}};
  if (r.around) {
    j["around"] = entry_json(*r.around);
    j["around"]["fits"] = r.around->memory.total() <= spec.cluster.accelerator.usable_memory;
    j["around"]["ranked_before"] = r.ranked_before_around;
  }
  j["simulated"] = nlohmann::ordered_json::array();
  for (const auto& e : r.simulated) j["simulated"].push_back(entry_json(e));
  return j;
}

std::string search_csv(const SearchSpec& spec, const SearchResult& r) {
  std::string out =
      "index,cards,tp,pp,virtual_stages,dp,cp,cp_comm,ep,expert_tp,zero,dp_replicate,keep_gathered,offload_optimizer,"
      "schedule,micro_batch,global_batch,recompute,recompute_layers,offload_activations,"
      "sequence_parallel,step_s,mfu,memory_gib,bubble,exposed_tp_s,exposed_pp_s,exposed_dp_s,exposed_cp_s,exposed_ep_s,"
      "limit,days,front\n";
  const std::set<std::int64_t> front(r.front.begin(), r.front.end());
  std::set<std::int64_t> front_idx;
  for (const auto& p : r.per_cards)
    if (p.best && front.count(p.cards)) front_idx.insert(p.best->c.index);
  for (const auto& e : r.simulated) {
    const JobLayout& l = e.c.layout;
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},"                 // index .. sequence_parallel
        "{:.6f},{:.4f},{:.3f},{:.4f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{},{:.3f},{}\n",  // step_s .. front
        e.c.index, e.c.cards, l.tp, l.pp, l.vpp, l.dp, l.cp, cp_comm_name(l.cp_comm), l.ep, l.etp(), l.zero,
        l.dp_replicate, l.zero >= 3 && l.keep_gathered ? 1 : 0, l.offload_optimizer ? 1 : 0, l.schedule, l.micro_batch,
        l.global_batch, recompute_name(l.recompute), l.partial_recompute() ? std::to_string(l.recompute_layers) : "",
        l.offload_activations, l.sequence_parallel ? 1 : 0, to_s(e.step), e.mfu, gib(e.memory.total()), e.bubble,
        to_s(e.exposed_tp), to_s(e.exposed_pp), to_s(e.exposed_dp), to_s(e.exposed_cp), to_s(e.exposed_ep), e.limit,
        days(e.completion), front_idx.count(e.c.index) ? 1 : 0);
  }
  (void)spec;
  return out;
}

std::string search_scatter_svg(const SearchSpec& spec, const SearchResult& r) {
  const bool by_days = timed(spec);
  auto yval = [&](const Evaluated& e) { return by_days ? days(e.completion) : to_s(e.step); };
  const int W = 760, H = 420, L = 70, R = 20, T = 20, B = 50;
  double xmin = 1e300, xmax = 0, ymax = 0;
  for (const auto& e : r.simulated) {
    xmin = std::min(xmin, static_cast<double>(e.c.cards));
    xmax = std::max(xmax, static_cast<double>(e.c.cards));
    ymax = std::max(ymax, yval(e));
  }
  const double deadline = by_days && spec.task.deadline > 0 ? days(spec.task.deadline) : 0;
  ymax = std::max(ymax, deadline) * 1.08;
  if (r.simulated.empty()) {
    xmin = 1;
    xmax = 2;
    ymax = 1;
  }
  const double lx0 = std::log2(xmin) - 0.3, lx1 = std::log2(std::max(xmax, xmin)) + 0.3;
  auto px = [&](double cards) { return L + (std::log2(cards) - lx0) / (lx1 - lx0) * (W - L - R); };
  auto py = [&](double y) { return H - B - y / ymax * (H - T - B); };
  std::string s = fmt::format(
      "<svg class=\"scatter\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\">\n",
      W, H, W, H);
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#444\"/>\n", L, H - B, W - R, H - B);
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#444\"/>\n", L, T, L, H - B);
  // Card ticks: every card count searched (at most 12 labels).
  const auto& cards = spec.axes.cards;
  const std::size_t every = std::max<std::size_t>(1, (cards.size() + 11) / 12);
  for (std::size_t i = 0; i < cards.size(); i += every)
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n",
                     px(static_cast<double>(cards[i])), H - B + 16, cards[i]);
  s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">cards</text>\n", (L + W - R) / 2,
                   H - 10);
  for (int k = 0; k <= 4; ++k) {
    const double y = ymax * k / 4;
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{:.1f}</text>\n", L - 6,
                     py(y) + 4, y);
  }
  s += fmt::format(
      "<text x=\"14\" y=\"{}\" font-size=\"12\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">{}</text>\n",
      (T + H - B) / 2, (T + H - B) / 2, by_days ? "days to finish" : "step time (s)");
  if (deadline > 0)
    s += fmt::format(
        "<line class=\"deadline\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#c00\" stroke-dasharray=\"6 "
        "4\">"
        "<title>deadline {:.1f} days</title></line>\n",
        L, py(deadline), W - R, py(deadline), deadline);
  const std::set<std::int64_t> front(r.front.begin(), r.front.end());
  std::set<std::int64_t> front_idx;
  for (const auto& p : r.per_cards)
    if (p.best && front.count(p.cards)) front_idx.insert(p.best->c.index);
  // Dots, small jitter-free: layouts at one card count sit on one vertical line.
  for (const auto& e : r.simulated) {
    if (front_idx.count(e.c.index)) continue;
    s += fmt::format(
        "<circle class=\"dot\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#6a8caf\" fill-opacity=\"0.45\"><title>{}: "
        "step {:.2f} s{}</title></circle>\n",
        px(static_cast<double>(e.c.cards)), py(yval(e)), html_escape(layout_label(e.c, spec.model.shape.layers)),
        to_s(e.step), by_days ? fmt::format(", {:.1f} days", days(e.completion)) : "");
  }
  std::string path;
  for (const auto& p : r.per_cards)
    if (p.best && front.count(p.cards))
      path +=
          fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", px(static_cast<double>(p.cards)), py(yval(*p.best)));
  if (!path.empty())
    s += fmt::format("<polyline class=\"front\" points=\"{}\" fill=\"none\" stroke=\"#d2691e\" stroke-width=\"2\"/>\n",
                     path);
  for (const auto& p : r.per_cards)
    if (p.best && front.count(p.cards))
      s += fmt::format(
          "<circle class=\"front-dot\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5.5\" fill=\"#d2691e\" "
          "stroke=\"#000\"><title>front: {}: step {:.2f} s{}</title></circle>\n",
          px(static_cast<double>(p.cards)), py(yval(*p.best)),
          html_escape(layout_label(p.best->c, spec.model.shape.layers)), to_s(p.best->step),
          by_days ? fmt::format(", {:.1f} days", days(p.best->completion)) : "");
  s += "</svg>";
  return s;
}

std::string search_html(const SearchReportInfo& info, const SearchSpec& spec, const SearchResult& r) {
  HtmlReport h(fmt::format("stepsim search: {}", info.name));
  h.heading(1, fmt::format("Layout search: {}", info.name));
  if (!info.description.empty()) h.paragraph(info.description);
  std::string hd = header(info, spec, r);
  h.paragraph(hd.substr(hd.find('\n') + 1));
  h.paragraph(counts_line(r.counts));
  h.heading(2, "Every simulated layout", "scatter");
  h.figure(search_scatter_svg(spec, r), timed(spec)
                                            ? "Each dot a simulated layout that fits (days to finish vs cards); ringed "
                                              "and joined: the Pareto front; dashed: the deadline."
                                            : "Each dot a simulated layout that fits (step time vs cards); ringed and "
                                              "joined: the fastest per card count that beats every smaller count.");
  if (!r.top.empty()) {
    h.heading(2, fmt::format("Top {} by {}", r.top.size(), rank_words(spec.rank)), "top");
    h.table(top_table(spec, r.top));
  }
  if (r.around) {
    h.heading(2, "The job step's own layout", "around");
    h.paragraph(around_lines(spec, r));
  }
  h.heading(2, "Per card count", "cards");
  h.table(cards_table(spec, r));
  for (const auto& p : r.per_cards)
    if (!p.why.empty()) h.paragraph(fmt::format("{} cards {}", p.cards, p.why));
  if (const std::string f = fewest_line(spec, r); !f.empty()) h.paragraph(f);
  if (r.miss) {
    h.heading(2, "Nearest miss", "miss");
    h.paragraph(r.miss->what);
    for (const auto& c : r.miss->changes) h.paragraph("- " + c);
  }
  return h.finish();
}

}  // namespace stepsim::cli
