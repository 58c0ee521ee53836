#include "cli/reports/job_step_report.hpp"
#include "cli/reports/quantities.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/reports/plan_tensor_report.hpp"
#include "cli/reports/table.hpp"
#include "models/attention_kernels.hpp"
#include "models/layer_costs.hpp"

namespace stepsim::cli {

namespace {
std::string secs(Time t) {
  return t >= kSecond ? fmt::format("{:.3f} s", to_s(t)) : fmt::format("{:.2f} ms", to_ms(t));
}

// What the router leaves on the EP ranks, when it is not the mean everywhere.
std::string routing_line(const JobStepSpec& s) {
  const JobModel& m = s.model;
  const ExpertRankLoad load = expert_rank_load(m, s.layout);
  std::string out = "expert routing: " + expert_routing_words(m, s.layout) + fmt::format(" on ep {}", s.layout.ep);
  if (load.capacity)
    out += fmt::format("; capacity factor {:g}: {} rows per expert, {} of the routed rows dropped", *m.capacity_factor,
                       comma_grouped(*load.capacity), percent(load.dropped, 1));
  out += fmt::format("; the busiest EP rank computes {:.2f}x the mean rows\n", load.busiest);
  return out;
}
}  // namespace

std::string layout_line(const JobStepSpec& s) {
  const JobLayout& l = s.layout;
  std::string out = fmt::format("tp {} pp {}", l.tp, l.pp);
  if (l.vpp > 1) out += fmt::format(" (v {})", l.vpp);
  if (l.first_chunk_layers >= 0 || l.last_chunk_layers >= 0) {
    // The ends as set, the middle chunks' equal share.
    const std::vector<int> n = chunk_layer_counts(s.model.shape.layers, l);
    const int first = l.first_chunk_layers >= 0 ? 1 : 0;
    const int middle = static_cast<int>(n.size()) - first - (l.last_chunk_layers >= 0 ? 1 : 0);
    out += " (layers per chunk ";
    if (first) out += fmt::format("{}, ", n.front());
    out += fmt::format("{} x {}", middle, n[static_cast<std::size_t>(first)]);
    if (l.last_chunk_layers >= 0) out += fmt::format(", {}", n.back());
    out += ")";
  }
  out += fmt::format(" dp {}", l.dp);
  if (l.dp_replicate > 1)
    out += fmt::format(" (HSDP: {} replicas, each sharding over {})", l.dp_replicate, l.dp / l.dp_replicate);
  if (l.cp > 1) out += fmt::format(" cp {}", l.cp);
  if (l.cp > 1 && l.cp_comm != CpComm::P2p) out += fmt::format(" ({})", cp_comm_name(l.cp_comm));
  if (l.ep > 1) out += fmt::format(" ep {}", l.ep);
  std::vector<std::string> ep_notes;  // how the experts are laid out and reached, when not the default
  if (l.folded()) ep_notes.push_back(fmt::format("expert tp {}", l.etp()));
  if (l.ep > 1 && (l.ep_dispatch == EpDispatch::PerNode || l.fp8_dispatch)) {
    ep_notes.emplace_back(l.ep_dispatch == EpDispatch::PerNode ? "dispatch per node" : "all-to-all");
    if (l.fp8_dispatch) ep_notes.emplace_back("FP8 dispatch");
  }
  if (l.permute_fusion) ep_notes.emplace_back("fused permute");
  if (!ep_notes.empty()) out += fmt::format(" ({})", fmt::join(ep_notes, ", "));
  out += fmt::format(
      ", zero {}, {}, micro-batch {}, global batch {}, recompute {}{}{}", l.zero, l.schedule, l.micro_batch,
      l.global_batch, recompute_name(l.recompute),
      l.recompute == JobRecompute::Full ? recomputed_layers_note(l)
      : l.recompute == JobRecompute::Op ? std::string(" (torchtitan's: every second matmul rerun)")
      : l.recompute == JobRecompute::Selective && l.recompute_modules != kRecomputeCoreAttn
          ? fmt::format(" ({})", l.recompute_modules ? recompute_module_list(l.recompute_modules) : "no modules")
          : "",
      !l.sequence_parallel ? ""
      : l.tp_overlapped()  ? ", sequence parallel, TP communication overlapped"
                           : ", sequence parallel");
  if (l.overlap_ep_a2a) out += ", forward-backward pairs (EP all-to-all overlap)";
  if (l.fp8) out += ", " + low_precision_gemm_words(l);
  if (const std::string kernel = attention_kernel_words(l); !kernel.empty()) out += ", " + kernel;
  if (l.adam_moment_bytes != 4) out += fmt::format(", Adam moments in {}", l.adam_moment_bytes == 2 ? "BF16" : "FP8");
  if (l.master_weights == MasterWeights::Model) out += ", FP32 weights as the master (BF16 copies to compute)";
  // A framework slower than the network (layout dp_bandwidth), or gathering by module (zero3_fetch).
  if (l.dp_bandwidth > 0) out += fmt::format(", DP collectives at most {:.3g} GB/s", l.dp_bandwidth / 1e9);
  if (l.zero3_fetch == Zero3Fetch::Module && l.zero >= 3)
    out += l.recompute == JobRecompute::Full && !l.keep_gathered
               ? ", ZeRO-3 gathers by module (recomputed layers' weights again)"
               : ", ZeRO-3 gathers by module";
  if (l.keep_gathered && l.zero >= 3) out += ", ZeRO-3 weights kept gathered from forward to backward";
  if (l.offload_optimizer)
    out += ", " + offload_words(l) + (l.smallest_offload ? " (the smallest share that fits)" : "");
  if (l.offload_activations > 0)
    out += fmt::format(", activations of the first {} layers on the host{}", l.offload_activations,
                       l.fewest_offloaded ? " (the fewest that fit)" : "");
  else if (l.fewest_offloaded)
    out += ", no activations on the host (it fits without)";
  if (l.reduces_every_micro_batch()) out += ", gradients reduce-scattered every micro-batch";
  if (l.zero == 2 && l.zero2_accumulate == Zero2Accumulate::Whole && l.microbatches() > 1)
    out += ", gradients accumulated whole, reduce-scattered once";
  return out;
}

std::string expert_routing_words(const JobModel& m, const JobLayout& l) {
  const std::string how = m.routing.kind == MoeRoutingSpec::Kind::Hot
                              ? fmt::format("{:g}% of the {} experts hot at {:g}x the mean",
                                            100 * m.routing.hot_fraction, m.experts, m.routing.hot_load)
                              : fmt::format("balanced over {} experts", m.experts);
  return fmt::format("{}, placed {}", how, placement_name(l.expert_placement));
}

std::string uncalibrated_line(const ClusterSpec& c) {
  const ClusterSpec* preset = find_cluster_preset(c.accelerator.name);
  if (!preset || !(preset->accelerator.efficiency == c.accelerator.efficiency)) return "";
  return fmt::format(
      "efficiencies: the {} preset's, not calibrated (stepsim calibrate fits them to measured runs; docs/calibration.md)\n",
      c.accelerator.name);
}

std::string cluster_line(const ClusterSpec& c) {
  const ClusterSpec* preset = find_cluster_preset(c.accelerator.name);
  if (!preset || (preset->node == c.node && preset->network == c.network)) return "";
  const auto gbs = [](std::int64_t bytes_per_s) {
    return fmt::format("{:.4g} GB/s", static_cast<double>(bytes_per_s) / 1e9);
  };
  const NodeSpec& n = c.node;
  const NetworkSpec& w = c.network;
  std::string tiers;
  for (const NetworkTier& t : w.tiers)
    tiers += fmt::format("{}{} {}{}", tiers.empty() ? "; tiers " : ", ", t.name,
                         t.nodes > 0 ? fmt::format("{} nodes", t.nodes) : std::string("the rest"),
                         t.oversubscription != 1.0 ? fmt::format(" {:g}:1", t.oversubscription) : std::string());
  const NodeSpec& p = preset->node;
  const std::string host =
      n.host_memory != p.host_memory || n.host_memory_bandwidth != p.host_memory_bandwidth
          ? fmt::format("; host memory {:.4g} GiB a node at {}", gib(n.host_memory), gbs(n.host_memory_bandwidth))
          : "";
  return fmt::format("node and network, not the {} preset's: {} GPUs a node on {}; {} NIC{} of {} a node{}{}\n",
                     c.accelerator.name, n.gpus,
                     n.fabric_bandwidth > 0 ? fmt::format("NVLink {} per GPU", gbs(n.fabric_bandwidth))
                                            : fmt::format("PCIe {} per GPU", gbs(n.pcie_bandwidth)),
                     w.nics, w.nics == 1 ? "" : "s",
                     fmt::format("{:.4g} Gbit/s", static_cast<double>(w.nic_bandwidth) * 8 / 1e9), tiers, host);
}

namespace {
// The layers kept out of the FP8 GEMMs in words, `also` after them: "the first and last layers",
// "the first layer, the last 4 layers and the LM head" (empty: none, nor `also`).
std::string bf16_layers_words(const JobLayout& l, const std::string& also = "") {
  const int first = l.fp8 ? l.bf16_first_layers : 0, last = l.fp8 ? l.bf16_last_layers : 0;
  const auto end = [](const char* which, int n) {
    return n == 1 ? fmt::format("the {} layer", which) : fmt::format("the {} {} layers", which, n);
  };
  std::vector<std::string> parts;
  if (first == 1 && last == 1) {
    parts.emplace_back("the first and last layers");
  } else {
    if (first > 0) parts.push_back(end("first", first));
    if (last > 0) parts.push_back(end("last", last));
  }
  if (!also.empty()) parts.push_back(also);
  if (parts.size() < 2) return parts.empty() ? "" : parts.front();
  return fmt::format("{} and {}", fmt::join(parts.begin(), parts.end() - 1, ", "), parts.back());
}
}  // namespace

std::string low_precision_gemm_words(const JobLayout& l) {
  if (!l.fp8) return "";
  if (l.fp8_recipe == Fp8Recipe::Nvfp4)
    return fmt::format("NVFP4 GEMMs ({} in BF16)", bf16_layers_words(l, "the LM head"));
  std::vector<std::string> how = {
      fmt::format("{} scaling", l.fp8_recipe == Fp8Recipe::Mx ? "MXFP8" : fp8_recipe_name(l.fp8_recipe))};
  if (!l.fp8_activations) how.emplace_back("their inputs kept in BF16");
  // Under ZeRO-3 an FP32 master's shards are cast as they are gathered: no FP8 weights kept.
  if (l.fp8_params())
    how.emplace_back(l.zero >= 3 && l.master_weights == MasterWeights::Model ? "weights gathered in FP8"
                                                                             : "FP8 weights, gathered in FP8");
  if (const std::string bf16 = bf16_layers_words(l); !bf16.empty()) how.push_back(bf16 + " in BF16");
  return fmt::format("FP8 GEMMs ({})", fmt::join(how, "; "));
}

std::string attention_kernel_words(const JobLayout& l) {
  switch (l.attention) {
    case AttentionKernel::Flash2: return "FlashAttention-2";
    case AttentionKernel::Flash3: return "FlashAttention-3";
    case AttentionKernel::Flash:
    case AttentionKernel::Unfused: return "";
  }
  return "";
}

std::string model_words(const JobModel& m) {
  const int windowed = windowed_layers_in(m, 0, m.shape.layers);
  const std::string window =
      windowed == 0 ? ""
                    : fmt::format(", {} within a {}-token window",
                                  windowed == m.shape.layers ? "each" : fmt::format("{} of them", windowed),
                                  comma_grouped(m.sliding_window));
  const int linear = linear_layers_in(m, 0, m.shape.layers);
  const std::string delta =
      linear == 0
          ? ""
          : fmt::format(", {} Gated DeltaNet", linear == m.shape.layers ? "each" : fmt::format("{} of them", linear));
  std::vector<std::string> blocks;  // a hybrid pattern's layers by kind
  for (const auto& [symbol, what] : hybrid_pattern_blocks())
    if (const int n = pattern_layers_in(m, symbol, 0, m.shape.layers); n > 0) blocks.push_back(fmt::format("{} {}", n, what));
  const std::string pattern = !blocks.empty() ? fmt::format(": {}", fmt::join(blocks, ", "))
                              : m.every_layer_mamba()
                                  ? fmt::format(", each Mamba-2 and {}", m.experts > 0 ? "an MoE block" : "an MLP")
                                  : "";
  return fmt::format("{} ({} layers{}{}{}, h {}, seq {})", m.shape.name, m.shape.layers, pattern, window, delta,
                     m.shape.hidden, m.seq);
}

std::string job_step_heading(const std::string& name, const JobStepRun& run) {
  const JobStepResult& r = run.result;
  const JobStepSpec& s = run.spec;
  std::string out = fmt::format("{}\n{} on {} x {}: {}\n", name, model_words(s.model), r.gpus,
                                s.cluster.accelerator.name, layout_line(s));
  if (s.model.experts > 0 && !s.model.even_routing()) out += routing_line(s);
  out += uncalibrated_line(s.cluster);
  out += cluster_line(s.cluster);
  out += fmt::format("simulated {} device(s) of one pipeline, {} ops, {} micro-batches per pipeline\n",
                     r.simulated_devices, r.ops, r.microbatches);
  return out;
}

Table job_step_summary_table(const JobStepRun& run, bool with_exposed) {
  const JobStepResult& r = run.result;
  Table t({{"", false}, {"value"}});
  t.add_row({"step time", secs(r.step_time)});
  t.add_row({"tokens/s per GPU", fmt::format("{:.0f}", r.tokens_per_s_per_gpu)});
  t.add_row({"model TFLOP/s per GPU", fmt::format("{:.1f}", r.model_tflops_per_gpu)});
  t.add_row({"hardware TFLOP/s per GPU", fmt::format("{:.1f}", r.hardware_tflops_per_gpu)});
  t.add_row({"MFU", percent(r.mfu, 1)});
  t.add_row({"HFU", percent(r.hfu, 1)});
  t.add_row({"bubble (compute idle)", percent(r.bubble, 1)});
  // Where the stages are uneven (an LM head on the last), part of the bubble is the other ranks
  // waiting for the busiest: said from 1 % of the step.
  if (r.stage_imbalance >= 0.01)
    t.add_row({fmt::format("  uneven stages (rank {})", r.busiest_rank), percent(r.stage_imbalance, 1)});
  if (r.layer_host_s > 0) t.add_row({"host waits per MoE layer", fmt::format("{:.2f} ms", r.layer_host_s * 1e3)});
  for (const auto& k : r.kind_layers)  // a hybrid: each kind's layer, one micro-batch on one GPU
    t.add_row({k.what + " layer fwd / bwd", fmt::format("{:.2f} / {:.2f} ms", k.forward_s * 1e3, k.backward_s * 1e3)});
  if (!with_exposed) return t;
  for (const auto& [what, time] : job_step_exposed(r)) t.add_row({"exposed " + what, secs(time)});
  return t;
}

std::vector<std::pair<std::string, Time>> job_step_exposed(const JobStepResult& r) {
  return {{"TP", r.exposed_tp},
          {"PP", r.exposed_pp},
          {"DP/ZeRO", r.exposed_dp},
          {"CP", r.exposed_cp},
          {"EP", r.exposed_ep}};
}

Table job_step_exposed_table(const JobStepRun& run) {
  const JobStepResult& r = run.result;
  Table t({{"exposed communication", false}, {"time"}, {"share of the step"}});
  Time sum = 0;
  const double step = static_cast<double>(std::max<Time>(1, r.step_time));
  for (const auto& [what, time] : job_step_exposed(r)) {
    t.add_row({what, secs(time), percent(static_cast<double>(time) / step, 1)});
    sum += time;
  }
  t.add_row({"total", secs(sum), percent(static_cast<double>(sum) / step, 1)});
  return t;
}

Table job_step_memory_table(const JobStepRun& run) {
  const JobStepResult& r = run.result;
  Table m({{"", false}, {"GiB"}});
  // The FP8 GEMMs' weight copies, a part of the row above them (not added again): of the weights
  // where they are the weights (FP8 parameters), else of the buffers.
  const bool copies = r.memory.fp8_weight_copies > 0;
  const std::string fp8 = fmt::format("{:.2f}", gib(r.memory.fp8_weight_copies));
  m.add_row({"weights", fmt::format("{:.2f}", gib(r.memory.weights))});
  if (copies && r.memory.fp8_parameters) m.add_row({"  FP8 weights", fp8});
  m.add_row({"gradients", fmt::format("{:.2f}", gib(r.memory.gradients))});
  m.add_row({"optimizer state", fmt::format("{:.2f}", gib(r.memory.optimizer))});
  m.add_row({"activations (peak)", fmt::format("{:.2f}", gib(r.memory.activations))});
  m.add_row({"buffers", fmt::format("{:.2f}", gib(r.memory.buffers))});
  if (copies && !r.memory.fp8_parameters) m.add_row({"  FP8 weight copies", fp8});
  m.add_row({"total", fmt::format("{:.2f}", gib(r.memory.total()))});
  m.add_row(
      {"usable", fmt::format("{:.2f}{}", gib(r.capacity), r.memory.total() > r.capacity ? "  (does not fit)" : "")});
  return m;
}

Table job_step_rank_memory_table(const JobStepRun& run) {
  const auto& ranks = run.result.memory_by_rank;
  // The FP8 GEMMs' weight copies, where the layout has them: a column after the part they are of,
  // the weights (FP8 parameters) or the buffers.
  const bool fp8 = std::any_of(ranks.begin(), ranks.end(), [](const JobMemory& m) { return m.fp8_weight_copies > 0; });
  const bool of_weights = fp8 && ranks.front().fp8_parameters;
  std::vector<Table::Column> columns = {{"rank"}, {"weights"}};
  if (of_weights) columns.push_back({"of them FP8"});
  for (const char* c : {"gradients", "optimizer", "activations", "buffers"}) columns.push_back({c});
  if (fp8 && !of_weights) columns.push_back({"of them FP8"});
  columns.push_back({"total"});
  Table t(columns);
  const auto cell = [](Bytes b) { return fmt::format("{:.2f}", gib(b)); };
  for (const JobMemory& m : ranks) {
    std::vector<std::string> row = {std::to_string(m.device), cell(m.weights)};
    if (of_weights) row.push_back(cell(m.fp8_weight_copies));
    for (const Bytes b : {m.gradients, m.optimizer, m.activations, m.buffers}) row.push_back(cell(b));
    if (fp8 && !of_weights) row.push_back(cell(m.fp8_weight_copies));
    row.push_back(cell(m.total()));
    t.add_row(row);
  }
  return t;
}

namespace {
// GPU time per token trained: a step's seconds on all its GPUs over the tokens it trains.
double gpu_seconds_per_token(const JobStepSpec& s) {
  const double tokens = static_cast<double>(s.layout.global_batch) * static_cast<double>(s.model.seq);
  return static_cast<double>(s.layout.ranks()) / tokens;
}
}  // namespace

Table job_step_compare_table(const std::vector<std::pair<std::string, const JobStepRun*>>& runs) {
  // "vs first" compares step times where every row trains as many tokens a step on as many GPUs;
  // else (other card counts, global batches or sequence lengths) a step's time says nothing about
  // cost, and the column compares GPU time per token, saying so.
  bool same_work = true;
  for (const auto& row : runs) {
    const JobStepSpec& a = row.second->spec;
    const JobStepSpec& b = runs.front().second->spec;
    same_work = same_work && a.layout.ranks() == b.layout.ranks() && a.layout.global_batch == b.layout.global_batch &&
                a.model.seq == b.model.seq;
  }
  const auto cost = [same_work](const JobStepRun& run) {
    const double step = static_cast<double>(run.result.step_time);
    return same_work ? step : step * gpu_seconds_per_token(run.spec);
  };
  Table t({{"variant", false},
           {"step"},
           {same_work ? "vs first" : "GPU time per token vs first"},
           {"tokens/s per GPU"},
           {"MFU"},
           {"memory GiB"},
           {"fits", false},
           {"bubble"},
           {"exposed comm", false}});
  const double first = runs.empty() ? 0.0 : cost(*runs.front().second);
  for (const auto& [name, run] : runs) {
    const JobStepResult& r = run->result;
    const double change = first > 0 ? cost(*run) / first - 1 : 0.0;
    t.add_row({name, secs(r.step_time), fmt::format("{:+.1f}%", 100 * change),
               fmt::format("{:.0f}", r.tokens_per_s_per_gpu), percent(r.mfu, 1),
               fmt::format("{:.1f} / {:.1f}", gib(r.memory.total()), gib(r.capacity)),
               r.memory.total() <= r.capacity ? "yes" : "no", percent(r.bubble, 1), exposed_cell(job_step_exposed(r))});
  }
  return t;
}

Table job_step_limits_table(const std::vector<std::pair<std::string, const JobStepRun*>>& runs) {
  // The kinds in the order the rows first name them (each row's own order: largest share first).
  std::vector<std::string> kinds;
  for (const auto& row : runs)
    for (const CriticalShare& x : row.second->result.critical_by_kind)
      if (std::find(kinds.begin(), kinds.end(), x.what) == kinds.end()) kinds.push_back(x.what);
  std::vector<Table::Column> columns = {{"variant", false}};
  for (const auto& k : kinds) columns.push_back({k});
  Table t(columns);
  for (const auto& [name, run] : runs) {
    std::vector<std::string> cells = {name};
    for (const auto& k : kinds) {
      const auto& shares = run->result.critical_by_kind;
      const auto it = std::find_if(shares.begin(), shares.end(), [&](const CriticalShare& x) { return x.what == k; });
      cells.push_back(it == shares.end() ? "-" : percent(it->share, 1));
    }
    t.add_row(cells);
  }
  return t;
}

Table job_step_critical_table(const std::vector<CriticalShare>& shares) {
  Table c({{"", false}, {"time"}, {"share"}});
  for (const auto& x : shares) c.add_row({x.what, secs(x.time), percent(x.share, 1)});
  return c;
}

Table job_step_layer_table(const JobModel& m, const JobStepResult& r) {
  const PassSeconds& f = r.layer_forward;
  const PassSeconds& b = r.layer_backward;
  // A Mamba-2 or Gated DeltaNet layer's scan is timed where attention is: in a hybrid pattern's
  // mean layer or an all-linear model's (a Gated DeltaNet hybrid shows its softmax layer).
  const bool scans = (!m.hybrid_pattern.empty() && m.mamba.heads > 0) || m.every_layer_linear();
  std::vector<Table::Column> cols = {
      {"", false}, {"GEMMs"}, {scans ? "attention, scan" : "attention"}, {"memory-bound"}};
  // The host's waits and each collective only where the layer has some.
  const bool host = f.host + b.host > 0, tp = f.tp + b.tp > 0, cp = f.cp + b.cp > 0, ep = f.ep + b.ep > 0;
  if (host) cols.push_back({"host"});
  if (tp) cols.push_back({"TP"});
  if (cp) cols.push_back({"CP"});
  if (ep) cols.push_back({"EP"});
  cols.push_back({"total"});
  Table t(cols);
  const auto ms = [](double s) { return fmt::format("{:.2f}", s * 1e3); };
  for (const auto& [what, p] : {std::pair<const char*, const PassSeconds&>{"forward", f}, {"backward", b}}) {
    std::vector<std::string> row = {what, ms(p.gemm), ms(p.attention), ms(p.memory)};
    if (host) row.push_back(ms(p.host));
    if (tp) row.push_back(ms(p.tp));
    if (cp) row.push_back(ms(p.cp));
    if (ep) row.push_back(ms(p.ep));
    row.push_back(ms(p.compute() + p.comm()));
    t.add_row(std::move(row));
  }
  return t;
}

namespace {
std::string chunk_list(const std::vector<int>& chunks) {
  std::string out;
  for (int c : chunks) out += (out.empty() ? "" : ", ") + std::to_string(c);
  return out;
}
}  // namespace

CaptionedTable job_step_cp_table(const JobStepRun& run) {
  const std::int64_t s = run.spec.model.seq;
  const int cp = run.spec.layout.cp;
  const auto bal = cp_rank_shares(s, cp, true), con = cp_rank_shares(s, cp, false);
  const std::int64_t all = causal_attention_pairs(s);
  std::string intro = fmt::format(
      "context parallelism: a causal sequence of {} tokens has s(s+1)/2 = {} attention pairs; cp {}\n"
      "balanced: {} chunks of {} tokens, rank i takes chunk i and chunk {}-i; contiguous: rank i takes tokens "
      "[i s/cp, (i+1) s/cp)",
      comma_grouped(s), comma_grouped(all), cp, 2 * cp, comma_grouped(s / (2 * cp)), 2 * cp - 1);
  Table t({{"CP rank"}, {"balanced chunks", false}, {"pairs"}, {"share"}, {"contiguous pairs"}, {"share"}});
  std::int64_t most_b = 0, most_c = 0;
  for (int i = 0; i < cp; ++i) {
    const auto& b = bal[static_cast<std::size_t>(i)];
    const auto& c = con[static_cast<std::size_t>(i)];
    most_b = std::max(most_b, b.pairs);
    most_c = std::max(most_c, c.pairs);
    t.add_row({std::to_string(i), chunk_list(b.chunks), comma_grouped(b.pairs),
               percent(static_cast<double>(b.pairs) / static_cast<double>(all), 1), comma_grouped(c.pairs),
               percent(static_cast<double>(c.pairs) / static_cast<double>(all), 1)});
  }
  const double mean = static_cast<double>(all) / cp;
  std::string outro = fmt::format(
      "the step waits for the most loaded rank: balanced {} pairs ({:.2f}x the mean), contiguous {} ({:.2f}x); "
      "this layout: {}",
      comma_grouped(most_b), static_cast<double>(most_b) / mean, comma_grouped(most_c),
      static_cast<double>(most_c) / mean,
      run.spec.layout.cp_comm == CpComm::AllToAll
          ? "a2a, each rank 1/cp of the heads over the whole sequence (the mean)"
      : run.spec.layout.cp_balanced ? "balanced"
                                    : "contiguous");
  const JobModel& m = run.spec.model;
  if (const int windowed = windowed_layers_in(m, 0, m.shape.layers); windowed > 0 && m.sliding_window < s) {
    // The windowed layers' share, rank by rank: pairs within the window and the halo of keys
    // before a rank's chunks that other ranks hold.
    std::int64_t most_pairs = 0, most_halo = 0;
    for (const auto& r : cp_rank_shares(s, cp, run.spec.layout.cp_balanced, m.sliding_window)) {
      most_pairs = std::max(most_pairs, r.pairs);
      most_halo = std::max(most_halo, r.halo);
    }
    outro += fmt::format(
        "\n{} windowed layer{} ({}-token window): {} pairs a sequence; the most loaded rank ({}) {} pairs and a "
        "halo of {} keys held by other ranks",
        windowed, windowed == 1 ? "" : "s", comma_grouped(m.sliding_window),
        comma_grouped(causal_attention_pairs(s, m.sliding_window)),
        run.spec.layout.cp_balanced ? "balanced" : "contiguous", comma_grouped(most_pairs), comma_grouped(most_halo));
  }
  return {std::move(intro), std::move(t), std::move(outro)};
}

namespace {
ReshardQuestion reshard_question(const JobStepRun& run) {
  const auto& shape = run.spec.model.shape;
  ReshardQuestion q;
  q.tensor = "gate_proj";
  q.rows = run.spec.model.experts > 0 ? run.spec.model.expert_ffn : shape.intermediate;
  q.cols = shape.hidden;
  q.from = run.spec.layout.tp;
  q.to = run.spec.reshard_tp;
  return q;
}

nlohmann::ordered_json cp_json(const JobStepRun& run) {
  const std::int64_t s = run.spec.model.seq;
  const int cp = run.spec.layout.cp;
  nlohmann::ordered_json j;
  j["split"] = run.spec.layout.cp_balanced ? "balanced" : "contiguous";
  j["comm"] = cp_comm_name(run.spec.layout.cp_comm);
  j["causal_pairs"] = causal_attention_pairs(s);
  const auto list = [](const std::vector<CpRankShare>& v) {
    auto a = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < v.size(); ++i)
      a.push_back({{"rank", i}, {"chunks", v[i].chunks}, {"tokens", v[i].tokens}, {"pairs", v[i].pairs}});
    return a;
  };
  j["balanced"] = list(cp_rank_shares(s, cp, true));
  j["contiguous"] = list(cp_rank_shares(s, cp, false));
  const JobModel& m = run.spec.model;
  if (windowed_layers_in(m, 0, m.shape.layers) > 0 && m.sliding_window < s) {
    // The windowed layers' pairs and halo by rank, in the layout's split.
    auto ranks = nlohmann::ordered_json::array();
    const auto shares = cp_rank_shares(s, cp, run.spec.layout.cp_balanced, m.sliding_window);
    for (std::size_t i = 0; i < shares.size(); ++i)
      ranks.push_back({{"rank", i}, {"pairs", shares[i].pairs}, {"halo", shares[i].halo}});
    j["windowed"] = {{"layers", windowed_layers_in(m, 0, m.shape.layers)},
                     {"window", m.sliding_window},
                     {"pairs", causal_attention_pairs(s, m.sliding_window)},
                     {"ranks", std::move(ranks)}};
  }
  return j;
}
}  // namespace

CaptionedTable job_step_reshard_table(const JobStepRun& run) {
  const ReshardQuestion q = reshard_question(run);
  CaptionedTable t = reshard_table(q);
  t.intro = fmt::format("the checkpoint of this layout (tp {}) loaded at tp {}: each layer's MLP gate projection\n{}",
                        q.from, q.to, t.intro);
  return t;
}

// The share of the BF16 peak the softmax attention layer's kernel runs at in a pass: the
// `attention` efficiency x the kernel's speed at the head dimension x its tile share (docs/attention.md
// "Attention kernels").
double attention_peak_share(const JobStepRun& run, AttentionPass p) {
  const AcceleratorSpec& a = run.spec.cluster.accelerator;
  return a.efficiency.attention *
         attention_kernel_share(run.spec.layout.attention, a.architecture, p, run.result.attention_tiles);
}

// That kernel and its rates, one line (none without softmax attention).
std::string job_step_attention_line(const JobStepRun& run) {
  const AttentionTiles& t = run.result.attention_tiles;
  if (t.keys_per_query <= 0) return "";
  const JobLayout& l = run.spec.layout;
  const std::string what =
      fmt::format("attention: {}, head dim {:g}, {} keys a query",
                  attention_kernel_running(l.attention, run.spec.cluster.accelerator.architecture).words, t.head_dim,
                  comma_grouped(static_cast<std::int64_t>(std::llround(t.keys_per_query))));
  const double forward = 100 * attention_peak_share(run, AttentionPass::Forward);
  if (!fused(l.attention)) return fmt::format("{}: {:.1f} % of the BF16 peak\n", what, forward);
  return fmt::format("{}{}: {:.1f} % of the BF16 peak forward, {:.1f} % backward\n", what,
                     t.calls > 1 ? fmt::format(" in {} calls (CP's ring)", t.calls) : "", forward,
                     100 * attention_peak_share(run, AttentionPass::Backward));
}

namespace {
// An offloaded optimizer's step on the most loaded pipeline rank (as the step runs it), and the
// host memory of a node (host_memory_per_node).
HostOptimizerStep host_step(const JobStepRun& run) {
  const JobCommPlan& cp = run.comm;
  const auto d = static_cast<std::size_t>(run.result.memory.device);
  return host_optimizer_step(run.spec.layout, run.spec.cluster, held_parameters(cp.device_chunks[d], cp.chunks));
}
Bytes host_per_node(const JobStepRun& run) {
  return host_memory_per_node(run.result.memory_by_rank, run.spec.cluster, run.result.gpus);
}
// Where a BF16 gradient became FP32: "host", "gpu", or "none" (reduced in FP32).
const char* converted_on(const JobStepRun& run, const HostOptimizerStep& s) {
  if (run.spec.layout.grad_bytes == 4) return "none";
  return s.converted_on_gpu ? "gpu" : "host";
}
}  // namespace

namespace {
// The offloaded activations (offload_activations): a pipeline's one chunk holds every layer.
const ActivationOffload& activation_offload_of(const JobStepRun& run) { return run.comm.chunks.front().offload; }
double activation_waits_per_step(const JobStepRun& run) {
  const ActivationOffload& a = activation_offload_of(run);
  return (a.forward_wait() + a.backward_wait()) * static_cast<double>(run.spec.layout.microbatches());
}
// The line for offload_activations, "" without it.
std::string activations_host_line(const JobStepRun& run) {
  const JobLayout& l = run.spec.layout;
  if (l.offload_activations <= 0) return "";
  const ActivationOffload& a = activation_offload_of(run);
  const NodeSpec& n = run.spec.cluster.node;
  const Bytes node = host_per_node(run);
  return fmt::format(
      "activations on the host: the first {} of {} layers, {:.2f} GiB a GPU, {:.1f} of {:.1f} GiB a node{}; the "
      "layers' activations on the GPU at most {:.2f} GiB ({:.2f} without); a micro-batch's copies {:.3f} s each way "
      "({:.1f} GB/s), the compute waiting {:.3f} s in its forward and {:.3f} s in its backward: {:.3f} s a step\n",
      a.layers, run.spec.model.shape.layers, gib(run.result.memory.host_activations), gib(node), gib(n.host_memory),
      node > n.host_memory ? " (does not fit)" : "", gib(a.gpu_peak), gib(a.all_layers), a.copy,
      run.spec.cluster.host_link_rate() / 1e9, a.forward_wait(), a.backward_wait(), activation_waits_per_step(run));
}
}  // namespace

std::string job_step_host_line(const JobStepRun& run) {
  if (!run.spec.layout.offload_optimizer) return activations_host_line(run);
  const HostOptimizerStep s = host_step(run);
  const NodeSpec& n = run.spec.cluster.node;
  const Bytes node = host_per_node(run);
  const auto secs_of = [](double x) { return fmt::format("{:.3f} s", x); };
  const double f = run.spec.layout.offload_fraction;
  const std::string_view how = converted_on(run, s);
  return fmt::format(
             "optimizer on the host{}: {:.2f} GiB a GPU, {:.1f} of {:.1f} GiB a node{}; gradients down {} ({}), "
             "Adam {} in host memory ({:.1f} GB/s a GPU of the node's {:.1f}), BF16 weights up {}: {} a step{}\n",
             f < 1 ? fmt::format(" ({:g} % of it)", 100 * f) : "", gib(run.result.memory.host), gib(node),
             gib(n.host_memory), node > n.host_memory ? " (does not fit)" : "", secs_of(s.gradients_down),
             how == "none"  ? "FP32"
             : how == "gpu" ? "BF16 converted to FP32 on the GPU, sent in FP32"
                            : "sent in BF16, converted to FP32 on the host",
             secs_of(s.adam), n.host_memory_bandwidth / 1e9 / std::max(n.gpus, 1), n.host_memory_bandwidth / 1e9,
             secs_of(s.weights_up), secs_of(s.host()),
             f < 1 ? fmt::format(", beside the GPU's {:g} % in {}", 100 * (1 - f), secs_of(s.gpu)) : "") +
         activations_host_line(run);
}

namespace {
// job_step_host_line in JSON.
nlohmann::ordered_json host_optimizer_json(const JobStepRun& run) {
  const HostOptimizerStep s = host_step(run);
  const Bytes node = host_per_node(run);
  return {{"fraction", run.spec.layout.offload_fraction},
          {"host_bytes_per_gpu", run.result.memory.host},
          {"host_bytes_per_node", node},
          {"host_capacity_bytes", run.spec.cluster.node.host_memory},
          {"fits", node <= run.spec.cluster.node.host_memory},
          {"gradients_down_s", s.gradients_down},
          {"converted_on", converted_on(run, s)},
          {"adam_s", s.adam},
          {"weights_up_s", s.weights_up},
          {"host_s", s.host()},
          {"gpu_s", s.gpu},
          {"total_s", s.total()}};
}
// activations_host_line in JSON.
nlohmann::ordered_json host_activations_json(const JobStepRun& run) {
  const ActivationOffload& a = activation_offload_of(run);
  const Bytes node = host_per_node(run);
  return {{"layers", a.layers},
          {"host_bytes_per_gpu", run.result.memory.host_activations},
          {"host_bytes_per_node", node},
          {"host_capacity_bytes", run.spec.cluster.node.host_memory},
          {"fits", node <= run.spec.cluster.node.host_memory},
          {"layers_gpu_peak_bytes", a.gpu_peak},
          {"layers_bytes_without", a.all_layers},
          {"link_bytes_per_s", run.spec.cluster.host_link_rate()},
          {"copy_s", a.copy},
          {"forward_wait_s", a.forward_wait()},
          {"backward_wait_s", a.backward_wait()},
          {"step_wait_s", activation_waits_per_step(run)}};
}
}  // namespace

// The same in JSON, for a step with softmax attention.
nlohmann::ordered_json attention_rate_json(const JobStepRun& run) {
  const AttentionTiles& t = run.result.attention_tiles;
  return {{"kernel", attention_kernel_running(run.spec.layout.attention, run.spec.cluster.accelerator.architecture).id},
          {"head_dim", t.head_dim},
          {"keys_per_query", t.keys_per_query},
          {"calls", t.calls},
          {"forward", attention_peak_share(run, AttentionPass::Forward)},
          {"backward", attention_peak_share(run, AttentionPass::Backward)}};
}

std::string job_step_text(const std::string& name, const JobStepRun& run) {
  const JobStepResult& r = run.result;
  std::string out = job_step_heading(name, run) + "\n";
  out += job_step_summary_table(run, true).render();
  const int pp = run.spec.layout.pp;
  out += pp == 1 ? std::string("\nmemory per GPU\n")
                 : fmt::format("\nmemory per GPU (pipeline rank {} of {}, the most loaded)\n", r.memory.device, pp);
  out += job_step_memory_table(run).render();
  if (pp > 1) out += "\nmemory by pipeline rank (GiB)\n" + job_step_rank_memory_table(run).render();
  out += job_step_host_line(run);
  out += "\nwhat limits the step: critical path by kind of op\n";
  out += job_step_critical_table(r.critical_by_kind).render();
  out += "\ncritical path by resource\n";
  out += job_step_critical_table(r.critical_by_resource).render();
  // The layer's passes by kind of kernel: a Gated DeltaNet hybrid's softmax layer (each kind's
  // totals are in the summary), a hybrid pattern's mean layer.
  const char* layer = !run.spec.model.hybrid_pattern.empty() ? "the mean layer"
                      : r.kind_layers.empty()                ? "one layer"
                                                             : "one softmax layer";
  out += fmt::format("\n{} on one GPU, one micro-batch (ms)\n", layer);
  out += job_step_layer_table(run.spec.model, r).render();
  out += job_step_attention_line(run);
  if (run.spec.layout.cp > 1) out += "\n" + job_step_cp_table(run).render();
  if (run.spec.reshard_tp > 0) out += "\n" + job_step_reshard_table(run).render();
  return out;
}

// The layout as the JSON report gives it (keys past the first ones only where not the default).
nlohmann::ordered_json layout_json(const JobStepRun& run) {
  const JobLayout& l = run.spec.layout;
  nlohmann::ordered_json j = {{"tp", l.tp},
                              {"pp", l.pp},
                              {"virtual_stages", l.vpp},
                              {"chunk_layers", chunk_layer_counts(run.spec.model.shape.layers, l)},
                              {"dp", l.dp},
                              {"cp", l.cp},
                              {"ep", l.ep},
                              {"ep_dispatch", ep_dispatch_name(l.ep_dispatch)},
                              {"fp8_dispatch", l.fp8_dispatch},
                              {"zero", l.zero},
                              {"schedule", l.schedule},
                              {"micro_batch", l.micro_batch},
                              {"global_batch", l.global_batch},
                              {"recompute", recompute_name(l.recompute)},
                              {"recomputed_layers",
                               [&] {
                                 const std::vector<bool> again = recomputed_layers(run.spec.model.shape.layers, l);
                                 return std::count(again.begin(), again.end(), true);
                               }()},
                              {"sequence_parallel", l.sequence_parallel}};
  if (l.tp_overlapped()) j["overlap_tp"] = true;  // absent: the TP collectives wait
  // absent: the backward's TP all-reduces run beside the weight gradients (or none, or SP's)
  if (l.tp > 1 && !l.sequence_parallel && !l.overlap_tp_wgrad) j["overlap_tp_wgrad"] = false;
  // Partial recompute: the layers of each chunk recomputed, and whether `auto` chose them.
  if (l.partial_recompute()) j["recompute_layers"] = l.recompute_layers;
  if (l.fewest_recompute) j["recompute_layers_auto"] = true;
  if (l.overlap_ep_a2a) j["overlap_ep_a2a"] = true;  // absent: 1F1B's forwards and backwards one by one
  // absent: the accelerator's own fused kernel (flash)
  if (l.attention != AttentionKernel::Flash) j["attention"] = attention_name(l.attention);
  if (l.fp8) j["fp8_recipe"] = fp8_recipe_name(l.fp8_recipe);
  if (l.fp8) j["fp8_activations"] = l.fp8_activations;
  if (l.fp8_params()) j["fp8_param_gather"] = true;  // absent: BF16 weights beside the FP8 copies
  if (l.fp8 && l.bf16_first_layers > 0) j["bf16_first_layers"] = l.bf16_first_layers;  // absent: none
  if (l.fp8 && l.bf16_last_layers > 0) j["bf16_last_layers"] = l.bf16_last_layers;
  if (l.folded()) j["expert_tp"] = l.etp();
  if (l.permute_fusion) j["permute_fusion"] = true;  // absent: Megatron-Core's unfused shuffles
  if (l.dp_bandwidth > 0) j["dp_bandwidth_bytes_per_s"] = l.dp_bandwidth;  // absent: the network's rate
  if (l.zero3_fetch == Zero3Fetch::Module) j["zero3_fetch"] = "module";   // absent: layer by layer
  if (l.master_weights == MasterWeights::Model) j["master_weights"] = "model";  // absent: in the optimizer
  if (l.dp_replicate > 1) j["dp_replicate"] = l.dp_replicate;  // absent: one shard group of every dp rank
  if (l.keep_gathered) j["keep_gathered"] = true;              // absent: gathered again for the backward
  if (l.offload_optimizer) j["offload_optimizer"] = true;      // absent: the optimizer on the GPU
  if (l.offload_optimizer) j["offload_fraction"] = l.offload_fraction;
  if (l.offload_optimizer && l.smallest_offload) j["offload_fraction_auto"] = true;
  if (l.offload_activations > 0) j["offload_activations"] = l.offload_activations;  // absent: none
  if (l.fewest_offloaded) j["offload_activations_auto"] = true;
  if (l.zero == 2) j["zero2_accumulate"] = zero2_accumulate_name(l.zero2_accumulate);
  if (l.recompute == JobRecompute::Selective) {
    auto modules = nlohmann::ordered_json::array();
    for (const auto& [module_name, module] : recompute_module_names())
      if (l.recompute_modules & module) modules.push_back(module_name);
    j["recompute_modules"] = modules;
  }
  return j;
}

namespace {
// The most loaded pipeline rank's memory against the capacity, and every rank's.
void add_memory_json(nlohmann::ordered_json& j, const JobStepResult& r) {
  j["memory_bytes"] = {{"weights", r.memory.weights},
                       {"gradients", r.memory.gradients},
                       {"optimizer", r.memory.optimizer},
                       {"activations", r.memory.activations},
                       {"buffers", r.memory.buffers},
                       {"fp8_weight_copies", r.memory.fp8_weight_copies},
                       {"total", r.memory.total()},
                       {"capacity", r.capacity},
                       {"fits", r.memory.total() <= r.capacity},
                       {"pipeline_rank", r.memory.device}};
  j["memory_by_rank_bytes"] = nlohmann::ordered_json::array();
  for (const JobMemory& m : r.memory_by_rank)
    j["memory_by_rank_bytes"].push_back({{"pipeline_rank", m.device},
                                         {"weights", m.weights},
                                         {"gradients", m.gradients},
                                         {"optimizer", m.optimizer},
                                         {"activations", m.activations},
                                         {"buffers", m.buffers},
                                         {"fp8_weight_copies", m.fp8_weight_copies},
                                         {"total", m.total()}});
}
}  // namespace

nlohmann::ordered_json job_step_json(const std::string& name, const JobStepRun& run) {
  const JobStepResult& r = run.result;
  const JobLayout& l = run.spec.layout;
  nlohmann::ordered_json j;
  j["scenario"] = name;
  j["model"] = run.spec.model.shape.name;
  j["model_parameters"] = total_parameters(run.spec.model);  // the whole model's, as its card counts them
  j["accelerator"] = run.spec.cluster.accelerator.name;
  j["gpus"] = r.gpus;
  j["layout"] = layout_json(run);
  if (const JobModel& m = run.spec.model; m.experts > 0 && !m.even_routing()) {
    const ExpertRankLoad load = expert_rank_load(m, l);
    j["expert_routing"] = {
        {"hot_experts", m.routing.kind == MoeRoutingSpec::Kind::Hot ? m.routing.hot_fraction : 0.0},
        {"hot_load", m.routing.kind == MoeRoutingSpec::Kind::Hot ? m.routing.hot_load : 1.0},
        {"placement", placement_name(l.expert_placement)},
        {"capacity_factor", m.capacity_factor ? nlohmann::ordered_json(*m.capacity_factor) : nullptr},
        {"capacity_rows", load.capacity ? nlohmann::ordered_json(*load.capacity) : nullptr},
        {"routed_tokens", load.tokens},
        {"dropped_share", load.dropped},
        {"computed_share", load.computed},
        {"busiest_rank_load", load.busiest}};
  }
  j["step_time_ns"] = r.step_time;
  j["step_time_s"] = to_s(r.step_time);
  j["microbatches"] = r.microbatches;
  j["simulated_devices"] = r.simulated_devices;
  j["ops"] = r.ops;
  j["tokens_per_s_per_gpu"] = r.tokens_per_s_per_gpu;
  j["model_tflops_per_gpu"] = r.model_tflops_per_gpu;
  j["hardware_tflops_per_gpu"] = r.hardware_tflops_per_gpu;
  j["mfu"] = r.mfu;
  j["hfu"] = r.hfu;
  j["bubble"] = r.bubble;
  if (r.simulated_devices > 1 && !run.fsdp) {
    j["stage_imbalance"] = r.stage_imbalance;
    j["busiest_rank"] = r.busiest_rank;
  }
  j["exposed_ns"] = {
      {"tp", r.exposed_tp}, {"pp", r.exposed_pp}, {"dp", r.exposed_dp}, {"cp", r.exposed_cp}, {"ep", r.exposed_ep}};
  add_memory_json(j, r);
  auto shares = [](const std::vector<CriticalShare>& v) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& x : v) a.push_back({{"what", x.what}, {"ns", x.time}, {"share", x.share}});
    return a;
  };
  j["critical_path"] = {{"by_kind", shares(r.critical_by_kind)}, {"by_resource", shares(r.critical_by_resource)}};
  j["layer_forward_ms"] = r.layer_forward_s * 1e3;
  j["layer_backward_ms"] = r.layer_backward_s * 1e3;
  const auto parts = [](const PassSeconds& p) {
    return nlohmann::ordered_json{{"gemm", p.gemm * 1e3},     {"attention", p.attention * 1e3},
                                  {"memory", p.memory * 1e3}, {"host", p.host * 1e3},
                                  {"tp", p.tp * 1e3},         {"cp", p.cp * 1e3},
                                  {"ep", p.ep * 1e3}};
  };
  j["layer_parts_ms"] = {{"forward", parts(r.layer_forward)}, {"backward", parts(r.layer_backward)}};
  if (r.attention_tiles.keys_per_query > 0) j["attention_rate"] = attention_rate_json(run);
  if (run.spec.layout.offload_optimizer) j["host_optimizer"] = host_optimizer_json(run);
  if (run.spec.layout.offload_activations > 0) j["host_activations"] = host_activations_json(run);
  if (!r.kind_layers.empty()) {  // a hybrid: each kind's layer
    auto& kinds = j["layer_kinds"] = nlohmann::ordered_json::array();
    for (const auto& k : r.kind_layers)
      kinds.push_back({{"layer", k.what}, {"forward_ms", k.forward_s * 1e3}, {"backward_ms", k.backward_s * 1e3}});
  }
  if (run.spec.model.experts > 0) {
    j["moe_block_forward_ms"] = r.moe_block_forward_s * 1e3;
    j["moe_block_backward_ms"] = r.moe_block_backward_s * 1e3;
    if (r.layer_host_s > 0) j["layer_host_ms"] = r.layer_host_s * 1e3;
  }
  if (l.cp > 1) j["context_parallel"] = cp_json(run);
  if (run.spec.reshard_tp > 0) j["reshard"] = reshard_json(reshard_question(run));
  return j;
}

void job_step_trace(TraceWriter& tr, const JobStepRun& run) {
  const OpGraph& g = run.graph();
  const Timeline& t = run.timeline;
  tr.process(1, "job step (one pipeline; DP/CP/TP peers folded)", 0);
  for (ResourceId r = 0; r < g.resource_count(); ++r)
    tr.thread(1, static_cast<int>(r), g.resource(r).name, static_cast<int>(r));
  for (OpId op = 0; op < g.op_count(); ++op) {
    if (g.op_duration(op) == 0) continue;
    tr.slice(1, static_cast<int>(g.op_resource(op)), g.op_name(op), job_op_kind_name(run.kinds[op]), t.start[op],
             g.op_duration(op), {});
  }
}

}  // namespace stepsim::cli
