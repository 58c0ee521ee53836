#include "cli/input/validation_csv.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <fstream>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "cli/input/budget.hpp"
#include "cli/input/input.hpp"
#include "cli/input/input_files.hpp"
#include "cli/input/job_step_input.hpp"
#include "models/layout.hpp"
#include "schedules/pipeline/csv_records.hpp"

namespace stepsim::cli {

namespace {
// The column that holds a model or layout key (models/model_limits.hpp, models/layout.hpp).
std::string column_of(const std::string& key) {
  static const std::map<std::string, std::string> columns = {{"layers", "L"},
                                                             {"hidden", "h"},
                                                             {"head_dim", "h"},
                                                             {"kv_heads", "kv"},
                                                             {"virtual_stages", "vpp"},
                                                             {"micro_batch", "mbs"},
                                                             {"global_batch", "gbs"},
                                                             {"routing.hot_experts", "hot_experts"},
                                                             {"routing.hot_load", "hot_load"},
                                                             {"routing", "hot_load"},
                                                             {"recompute", "recomp"},
                                                             {"schedule", "sched"},
                                                             {"overlap.tp", "overlap_tp"},
                                                             {"overlap.tp_wgrad", "overlap_tp_wgrad"},
                                                             {"overlap.pp", "overlap_pp"},
                                                             {"overlap.dp", "overlap_dp"},
                                                             {"overlap.ep_a2a", "overlap_ep_a2a"},
                                                             {"num_key_heads", "linear_key_heads"},
                                                             {"num_value_heads", "linear_value_heads"},
                                                             {"key_head_dim", "linear_key_head_dim"},
                                                             {"value_head_dim", "linear_value_head_dim"},
                                                             {"conv_kernel_dim", "linear_conv_kernel_dim"}};
  const auto it = columns.find(key);
  return it == columns.end() ? key : it->second;
}
}  // namespace

const char* metric_unit(MeasuredMetric m) {
  switch (m) {
    case MeasuredMetric::TflopsSc21:
    case MeasuredMetric::TflopsHardware:
    case MeasuredMetric::TflopsModel: return "TFLOP/s";
    case MeasuredMetric::MfuPercent: return "%";
    case MeasuredMetric::TokensPerGpuSecond: return "tok/s";
    case MeasuredMetric::IterationSeconds: return "s";
    case MeasuredMetric::LayerForwardMs:
    case MeasuredMetric::LayerBackwardMs:
    case MeasuredMetric::MoeForwardMs:
    case MeasuredMetric::MoeBackwardMs: return "ms";
  }
  return "";
}

namespace {
// The metric column: which published figure the row's value is.
MeasuredMetric parse_metric(const std::string& file, int n, const std::string& metric) {
  if (metric == "tflops_sc21") return MeasuredMetric::TflopsSc21;
  if (metric == "tflops_hw") return MeasuredMetric::TflopsHardware;
  if (metric == "iteration_s") return MeasuredMetric::IterationSeconds;
  if (metric == "layer_fwd_ms") return MeasuredMetric::LayerForwardMs;
  if (metric == "layer_bwd_ms") return MeasuredMetric::LayerBackwardMs;
  if (metric == "moe_fwd_ms") return MeasuredMetric::MoeForwardMs;
  if (metric == "moe_bwd_ms") return MeasuredMetric::MoeBackwardMs;
  if (metric == "tflops_model") return MeasuredMetric::TflopsModel;
  if (metric == "mfu") return MeasuredMetric::MfuPercent;
  if (metric == "tokens_per_gpu_s") return MeasuredMetric::TokensPerGpuSecond;
  throw InputError(file, n, "metric",
                   fmt::format("unknown metric '{}' (tflops_sc21, tflops_hw, tflops_model, mfu, tokens_per_gpu_s, "
                               "iteration_s, layer_fwd_ms, layer_bwd_ms, moe_fwd_ms, moe_bwd_ms)",
                               metric));
}

// The cells of one row by column name, read with the row's file and line in every error.
class RowCells {
 public:
  RowCells(const std::string& file, int n, std::map<std::string, std::string> cells)
      : file_(file), n_(n), c_(std::move(cells)) {}

  const std::string& need(const char* k) const {
    auto it = c_.find(k);
    if (it == c_.end() || it->second.empty()) throw InputError(file_, n_, k, "missing value");
    return it->second;
  }
  std::string text(const char* k) const {
    auto it = c_.find(k);
    return it == c_.end() ? "" : it->second;
  }
  // A whole number from 0 to `max`; an empty or missing cell is `fallback` (< 0: required).
  // At least `min`: 1 for a size (layers, widths, the layout's degrees, batches), whose 0 or -1
  // the cell's own check names as the model's and the layout's do.
  std::int64_t integer(const char* k, std::int64_t fallback = -1, std::int64_t max = INT64_MAX,
                       std::int64_t min = 0) const {
    auto it = c_.find(k);
    if (it == c_.end() || it->second.empty()) {
      if (fallback >= 0) return fallback;
      throw InputError(file_, n_, k, "missing value");
    }
    std::string error;
    const auto v = whole_number(it->second, min, max, error);  // as a scenario's count: 1536, 1.5K
    if (!v) throw InputError(file_, n_, k, error);
    return *v;
  }
  // An on/off column: 1 or 0; an empty or missing cell is `fallback`.
  bool flag(const char* k, bool fallback) const {
    const std::string v = text(k);
    if (v.empty()) return fallback;
    if (v != "0" && v != "1") fail(k, fmt::format("'{}' is not 0 or 1", v));
    return v == "1";
  }
  // A positive finite number ("50%" is 0.5), or nullopt for an empty or missing cell.
  std::optional<double> number(const char* k) const {
    std::string v = text(k);
    if (v.empty()) return std::nullopt;
    const bool percent = v.back() == '%';
    if (percent) v.pop_back();
    double x = 0;
    const auto res = std::from_chars(v.data(), v.data() + v.size(), x);
    if (res.ec != std::errc{} || res.ptr != v.data() + v.size() || !std::isfinite(x) || !(x > 0))
      fail(k, fmt::format("'{}' is not a positive number", text(k)));
    return percent ? x / 100 : x;
  }
  // An int field: checked against int's range here, against the models' limits after.
  int count(const char* k, std::int64_t fallback = -1, std::int64_t min = 0) const {
    return static_cast<int>(integer(k, fallback, INT_MAX, min));
  }
  // A size: at least 1.
  int size(const char* k, std::int64_t fallback = -1) const { return count(k, fallback, 1); }
  [[noreturn]] void fail(const char* k, const std::string& message) const { throw InputError(file_, n_, k, message); }
  // A name read by `from_name` (an empty cell: `dflt`), or the row's error naming `what` and the `known` names.
  template <class Parse>
  auto named(const char* k, const char* what, const char* dflt, Parse from_name, const char* known) const {
    const std::string v = text(k);
    const auto parsed = from_name(v.empty() ? dflt : v);
    if (!parsed) fail(k, fmt::format("unknown {} '{}' ({})", what, v, known));
    return *parsed;
  }

 private:
  const std::string& file_;
  int n_;
  std::map<std::string, std::string> c_;
};

// The model's mixture of experts, latent attention and prediction modules, as job_step's model
// keys of the same names (columns left empty: none).
void read_moe_and_mla(const RowCells& row, JobModel& m) {
  m.experts = row.count("experts", 0);
  if (m.experts > 0) {
    m.top_k = row.size("top_k");
    m.expert_ffn = row.integer("expert_ffn", -1, kMaxFfn, 1);
    m.shared_expert_ffn = row.integer("shared_expert_ffn", 0, kMaxFfn);
    m.dense_layers = row.count("dense_layers", 0);
    m.node_limit = row.count("node_limit", 0);
    m.device_limit = row.count("device_limit", 0);
    // The routing as job_step's model reads it: hot experts (both cells), a capacity factor.
    const auto hot = row.number("hot_experts"), load = row.number("hot_load");
    if (hot.has_value() != load.has_value())
      row.fail(hot ? "hot_load" : "hot_experts", "hot_experts and hot_load come together");
    if (hot) m.routing = {MoeRoutingSpec::Kind::Hot, *hot, *load, {}};
    m.capacity_factor = row.number("capacity_factor");
  } else {
    for (const char* k : {"top_k", "expert_ffn", "shared_expert_ffn", "dense_layers", "node_limit", "device_limit",
                          "hot_experts", "hot_load", "capacity_factor"})
      if (!row.text(k).empty()) row.fail(k, "needs experts (a mixture-of-experts model)");
  }
  m.mtp_layers = row.count("mtp_layers", 0);
  m.sliding_window = row.integer("sliding_window", 0, kMaxSeq);
  m.sliding_window_pattern = row.count("sliding_window_pattern", 0);
  if (!row.text("kv_lora_rank").empty()) {
    m.mla.q_lora_rank = row.integer("q_lora_rank", 0, kMaxFfn);
    m.mla.kv_lora_rank = row.integer("kv_lora_rank", -1, kMaxFfn, 1);
    m.mla.qk_nope_head_dim = row.size("qk_nope_head_dim");
    m.mla.qk_rope_head_dim = row.size("qk_rope_head_dim");
    m.mla.v_head_dim = row.size("v_head_dim");
  }
  m.attention_output_gate = row.flag("attention_output_gate", false);
  if (!row.text("linear_value_heads").empty()) {  // Gated DeltaNet, the names of a job's linear_attention
    auto& a = m.linear;
    a.key_heads = row.size("linear_key_heads");
    a.value_heads = row.size("linear_value_heads");
    a.key_head_dim = row.size("linear_key_head_dim");
    a.value_head_dim = row.size("linear_value_head_dim");
    a.conv_kernel = row.count("linear_conv_kernel_dim", 4);
    a.full_attention_interval = row.count("full_attention_interval", 0);
  } else {
    for (const char* k : {"linear_key_heads", "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim",
                          "full_attention_interval"})
      if (!row.text(k).empty()) row.fail(k, "needs linear_value_heads (a Gated DeltaNet model)");
  }
  // Mamba-2 and a hybrid pattern, the names of a job's mamba with the prefix.
  static const std::vector<std::pair<const char*, const char*>> mamba_columns = {{"num_heads", "mamba_heads"},
                                                                                 {"head_dim", "mamba_head_dim"},
                                                                                 {"state_size", "mamba_state_size"},
                                                                                 {"n_groups", "mamba_n_groups"},
                                                                                 {"conv_kernel", "mamba_conv_kernel"}};
  if (!row.text("mamba_heads").empty()) {
    auto& a = m.mamba;
    a.heads = row.size("mamba_heads");
    a.head_dim = row.size("mamba_head_dim");
    a.state = row.size("mamba_state_size");
    a.groups = row.count("mamba_n_groups", 1, 1);
    a.conv_kernel = row.count("mamba_conv_kernel", 4, 1);
    if (const auto p = check_mamba(m))
      for (const auto& [key, column] : mamba_columns)
        if (p->key == key) row.fail(column, p->message);
  } else {
    for (const auto& [key, column] : mamba_columns)
      if (!row.text(column).empty()) row.fail(column, "needs mamba_heads (a Mamba-2 model)");
  }
  m.hybrid_pattern = row.text("hybrid_override_pattern");
}

// Selective recompute's modules joined by '+' ("layernorm+moe_act"), as the layout's bits.
std::uint8_t recompute_modules_cell(const RowCells& row) {
  const std::string cell = row.text("recompute_modules");
  std::vector<std::string> names;
  for (std::size_t at = 0; at <= cell.size();) {
    const std::size_t end = std::min(cell.find('+', at), cell.size());
    names.push_back(cell.substr(at, end - at));
    at = end + 1;
  }
  std::uint8_t modules = 0;
  if (auto problem = parse_recompute_modules(names, modules)) row.fail("recompute_modules", *problem);
  return modules;
}

// A row's layout columns, as job_step's layout keys.
JobLayout read_layout(const RowCells& row, const std::string& file, int n) {
  JobLayout l;
  l.tp = row.size("tp", 1), l.pp = row.size("pp", 1), l.dp = row.size("dp", 1), l.vpp = row.size("vpp", 1);
  l.cp = row.size("cp", 1), l.ep = row.size("ep", 1);
  l.schedule = row.text("sched").empty() ? "1f1b" : row.text("sched");
  if (!find_schedule(l.schedule)) throw InputError(file, n, "sched", fmt::format("unknown schedule '{}'", l.schedule));
  l.micro_batch = row.size("mbs", 1);
  l.global_batch = row.integer("gbs", -1, INT64_MAX, 1);
  l.recompute = row.named("recomp", "recompute", "none", recompute_from_name, "none, selective, op, full");
  if (!row.text("recompute_modules").empty()) l.recompute_modules = recompute_modules_cell(row);
  l.expert_placement =
      row.named("expert_placement", "placement", "contiguous", parse_placement, "contiguous or round_robin");
  l.sequence_parallel = row.flag("sp", false);
  l.zero = row.count("zero", 0);
  l.dp_replicate = row.size("dp_replicate", 1);
  l.overlap_grad_reduce = row.flag("overlap_dp", true);
  l.overlap_pp = row.flag("overlap_pp", true);
  l.overlap_tp = row.flag("overlap_tp", false);
  l.overlap_tp_wgrad = row.flag("overlap_tp_wgrad", true);
  l.overlap_ep_a2a = row.flag("overlap_ep_a2a", false);
  l.attention =
      row.named("attention", "attention kernel", "flash", attention_from_name, "flash, flash2, flash3 or unfused");
  l.grad_bytes = row.count("grad_bytes", 4);
  l.adam_moment_bytes = row.count("adam_moment_bytes", 4);
  l.expert_tp = row.text("expert_tp").empty() ? 0 : row.count("expert_tp");
  l.fp8 = row.flag("fp8", false);
  l.fp8_recipe = row.named("fp8_recipe", "fp8_recipe", "tensorwise", fp8_recipe_from_name,
                           "tensorwise, blockwise, mxfp8 or nvfp4");
  l.fp8_dispatch = row.flag("fp8_dispatch", false);
  l.permute_fusion = row.flag("permute_fusion", false);
  if (const auto gbs = row.number("dp_bandwidth_gbs")) {
    if (*gbs > 1e6) row.fail("dp_bandwidth_gbs", fmt::format("{} GB/s is too large (at most 1,000,000)", *gbs));
    l.dp_bandwidth = static_cast<std::int64_t>(*gbs * 1e9);
    if (l.dp_bandwidth < 1) row.fail("dp_bandwidth_gbs", fmt::format("{} GB/s is under a byte a second", *gbs));
  }
  l.zero3_fetch = row.named("zero3_fetch", "zero3_fetch", "layer", zero3_fetch_from_name, "layer or module");
  l.keep_gathered = row.flag("keep_gathered", false);
  l.offload_optimizer = row.flag("offload_optimizer", false);
  if (const auto f = row.number("offload_fraction")) l.offload_fraction = *f;
  l.offload_activations = row.count("offload_activations", 0);
  l.zero2_accumulate =
      row.named("zero2_accumulate", "zero2_accumulate", "sharded", zero2_accumulate_from_name, "sharded or whole");
  l.master_weights =
      row.named("master_weights", "master_weights", "optimizer", master_weights_from_name, "optimizer or model");
  l.cp_comm = row.named("cp_comm", "cp_comm", "p2p", cp_comm_from_name, "p2p, all_gather or a2a");
  l.fp8_activations = row.flag("fp8_activations", l.fp8);
  l.fp8_param_gather = row.flag("fp8_param_gather", false);
  l.bf16_first_layers = row.count("bf16_first_layers", 0);
  l.bf16_last_layers = row.count("bf16_last_layers", 0);
  l.ep_dispatch =
      row.named("ep_dispatch", "ep_dispatch", "all_to_all", ep_dispatch_from_name, "all_to_all or per_node");
  // Empty or absent: -1, as the layout's fields (every layer recomputed, an even share).
  auto or_unset = [&](const char* k) { return row.text(k).empty() ? -1 : row.count(k); };
  l.recompute_layers = or_unset("recompute_layers");
  l.first_chunk_layers = or_unset("first_chunk_layers");
  l.last_chunk_layers = or_unset("last_chunk_layers");
  return l;
}

// Every column a row is read from (docs/validation.md, "Columns of a measured-runs CSV"): a header that
// names another is refused, so that a misspelt column does not leave its setting at the default.
const std::vector<std::string>& known_columns() {
  // clang-format off
  static const std::vector<std::string> columns = {
      "src", "tbl", "model", "notes", "hw", "ngpu", "metric", "value", "fit",
      "L", "h", "heads", "kv", "head_dim", "ffn", "vocab", "seq", "mlp", "tied", "qk_norm", "dropout",
      "experts", "top_k", "expert_ffn", "shared_expert_ffn", "dense_layers", "node_limit", "device_limit",
      "hot_experts", "hot_load", "capacity_factor", "mtp_layers", "sliding_window", "sliding_window_pattern",
      "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
      "attention_output_gate", "linear_key_heads", "linear_value_heads", "linear_key_head_dim", "linear_value_head_dim",
      "linear_conv_kernel_dim", "full_attention_interval", "mamba_heads", "mamba_head_dim", "mamba_state_size",
      "mamba_n_groups", "mamba_conv_kernel", "hybrid_override_pattern",
      "tp", "pp", "dp", "vpp", "cp", "ep", "sched", "mbs", "gbs", "recomp", "recompute_layers", "recompute_modules",
      "first_chunk_layers", "last_chunk_layers", "expert_placement", "sp", "zero", "overlap_dp", "overlap_pp",
      "overlap_tp", "overlap_tp_wgrad", "overlap_ep_a2a", "attention", "grad_bytes", "adam_moment_bytes", "expert_tp", "fp8", "fp8_recipe",
      "fp8_dispatch", "fp8_activations", "fp8_param_gather", "bf16_first_layers", "bf16_last_layers", "permute_fusion", "dp_bandwidth_gbs", "zero3_fetch", "master_weights", "cp_comm",
      "ep_dispatch", "dp_replicate", "node_gbps", "nics", "keep_gathered", "zero2_accumulate", "offload_optimizer",
      "offload_fraction", "offload_activations"};
  // clang-format on
  return columns;
}

// The header's columns, each known and named once.
void check_header(const std::vector<std::string>& header, const std::string& file, int n) {
  const auto& known = known_columns();
  for (std::size_t i = 0; i < header.size(); ++i) {
    const std::string& name = header[i];
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      const std::string near = nearest(name, known);
      throw InputError(file, n, name,
                       near.empty() ? fmt::format("unknown column '{}'", name)
                                    : fmt::format("unknown column '{}'; did you mean '{}'?", name, near));
    }
    if (std::find(header.begin(), header.begin() + static_cast<std::ptrdiff_t>(i), name) !=
        header.begin() + static_cast<std::ptrdiff_t>(i))
      throw InputError(file, n, name, fmt::format("column '{}' named twice", name));
  }
}

// One row of a measured-runs CSV: its layout, metric and value (columns by header name).
MeasuredRun parse_row(const std::string& file, int n, std::map<std::string, std::string> cells) {
  const RowCells row(file, n, std::move(cells));
  MeasuredRun r;
  r.line = n;
  r.file = file;
  r.table = row.text("tbl");
  r.hw = row.need("hw");
  const ClusterSpec* preset = find_cluster_preset(r.hw);
  if (!preset) throw InputError(file, n, "hw", unknown_preset_message(r.hw));
  r.spec.cluster = *preset;
  // A node with another number of NICs than the preset's (2 where a DGX has 8), each at the
  // preset's bandwidth unless node_gbps gives the node's.
  if (const std::int64_t nics = row.integer("nics", 0, 1024); nics > 0)
    r.spec.cluster.network.nics = static_cast<int>(nics);
  else if (!row.text("nics").empty())
    row.fail("nics", "0 NICs: a node needs at least one");
  // A cluster whose nodes reach the network slower or faster than the preset's: the node's
  // bandwidth over all its NICs, Gbit/s (shared by `nics` NICs, else the preset's count).
  if (const auto gbps = row.number("node_gbps")) {
    if (*gbps > 1e6) row.fail("node_gbps", fmt::format("{} Gbit/s is too large (at most 1,000,000)", *gbps));
    NetworkSpec& net = r.spec.cluster.network;
    net.nic_bandwidth = static_cast<std::int64_t>(*gbps * 1e9 / 8 / net.nics);
    if (net.nic_bandwidth < 1) row.fail("node_gbps", fmt::format("{} Gbit/s is under a byte a second a NIC", *gbps));
  }
  JobModel& m = r.spec.model;
  m.shape.name = row.text("model");
  m.shape.layers = row.size("L");
  m.shape.hidden = row.integer("h", -1, kMaxHidden, 1);  // bounded before 4 h below
  m.shape.heads = row.size("heads");
  m.shape.kv_heads = row.size("kv", m.shape.heads);
  m.shape.head_dim = row.size("head_dim", m.shape.hidden / std::max(1, m.shape.heads));
  m.shape.intermediate = row.integer("ffn", 4 * m.shape.hidden, INT64_MAX, 1);
  m.shape.vocab = row.integer("vocab", -1, INT64_MAX, 1);
  m.shape.tied_embeddings = row.flag("tied", true);  // GPT-style by default: the LM head shares the embedding
  m.shape.qk_norm = row.flag("qk_norm", false);      // per-head query and key norms (Qwen3): none by default
  m.seq = row.integer("seq", -1, INT64_MAX, 1);
  // GPT (the default): GeLU MLP.
  const std::string mlp = row.named(
      "mlp", "mlp", "gelu",
      [](std::string_view v) {
        return v == "gelu" || v == "swiglu" || v == "relu2" ? std::optional<std::string>(v) : std::nullopt;
      },
      "gelu, swiglu or relu2");
  m.gated_mlp = mlp == "swiglu";
  m.squared_relu = mlp == "relu2";
  m.dropout = row.flag("dropout", true);  // GPT (the default): dropout, its masks kept
  read_moe_and_mla(row, m);
  r.spec.layout = read_layout(row, file, n);
  const JobLayout& l = r.spec.layout;
  r.metric = parse_metric(file, n, row.need("metric"));
  const std::string& v = row.need("value");
  // A decimal number (no hex, no infinity) in the range of any metric's readings: 1e-300 gave an
  // error of 10^302 %.
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), r.value);
  if (ec != std::errc{} || end != v.data() + v.size() || !std::isfinite(r.value) || !(r.value > 0))
    throw InputError(file, n, "value", fmt::format("'{}' is not a positive number", v));
  if (r.value < 1e-6 || r.value > 1e9)
    throw InputError(file, n, "value", fmt::format("'{}' is out of range for a measurement (1e-6 to 1e9)", v));
  if ((r.metric == MeasuredMetric::MoeForwardMs || r.metric == MeasuredMetric::MoeBackwardMs) && m.experts <= 0)
    throw InputError(file, n, "metric", fmt::format("{} needs experts (an MoE block)", row.need("metric")));
  r.fit = row.flag("fit", false);
  // Empty: the layout's ranks; given, at least one.
  const std::int64_t ngpu = row.integer("ngpu", 0, kMaxGpus);
  if (ngpu == 0 && !row.text("ngpu").empty())
    throw InputError(file, n, "ngpu", "0 GPUs: at least 1 (or leave it empty)");
  if (const auto p = check_job_model(m)) throw InputError(file, n, column_of(p->key), p->message);
  if (const auto p = check_layout(m, l, ngpu)) throw InputError(file, n, column_of(p->key), p->message);
  if (const auto p = check_accelerator_kernels(l, r.spec.cluster.accelerator))
    throw InputError(file, n, column_of(p->key), p->message);
  check_budget(file, n, "gbs", job_step_ops_bound(l, m.shape.layers));  // as a job_step scenario's global_batch
  r.label = fmt::format("{} {} {} GPUs", r.table, m.shape.name, ngpu > 0 ? ngpu : l.ranks());
  // A line of a table (and a comment in --export's YAML): a quoted cell's line ends are spaces there.
  std::replace(r.label.begin(), r.label.end(), '\n', ' ');
  return r;
}
}  // namespace

std::vector<MeasuredRun> read_measured_runs(const std::string& file) {
  return parse_measured_runs(read_input_file(file), file);
}

std::vector<MeasuredRun> parse_measured_runs(const std::string& text, const std::string& file) {
  // Lines starting with '#' are comments; a row's line is the one it starts on.
  CsvReader in(text, '#');
  std::vector<std::string> header;
  std::vector<MeasuredRun> rows;
  for (CsvRecord rec; in.next(rec);) {
    const int n = rec.line;
    if (rec.text.empty()) continue;
    const auto& cells = rec.cells;
    const auto column = [&header](std::size_t cell) { return cell < header.size() ? header[cell] : std::string(); };
    if (rec.open_quote_line > 0)
      throw InputError(
          file, n, column(cells.size() - 1),
          fmt::format("the quote opened on line {} is not closed by the end of the file", rec.open_quote_line));
    if (rec.stray_quote_cell >= 0)
      throw InputError(file, rec.stray_quote_line, column(static_cast<std::size_t>(rec.stray_quote_cell)),
                       "a quote inside a cell that does not start with one: quote the whole cell and double "
                       "the quotes in it (\"12\"\" disk\")");
    if (header.empty()) {
      header = cells;
      check_header(header, file, n);
      continue;
    }
    if (cells.size() > header.size())
      throw InputError(file, n, "", fmt::format("{} cells where the header names {} columns", cells.size(),
                                                header.size()));
    std::map<std::string, std::string> c;
    for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) c[header[i]] = cells[i];
    // Each row is a simulation (or one per fit step), and the ranking compares every pair.
    if (rows.size() == kMaxMeasuredRows)
      throw InputError(file, n, "", "more than 10,000 measured rows: split the table");
    static_assert(kMaxMeasuredRows == 10'000);
    MeasuredRun r = parse_row(file, n, c);
    rows.push_back(std::move(r));
  }
  if (rows.empty())
    throw InputError(file, in.lines(), "", "no measured rows (a header line, then one row per measurement)");
  return rows;
}

InputError row_error(const MeasuredRun& row, const std::string& key, const std::string& message) {
  const std::string k = key.starts_with("layout.") ? key.substr(7) : key.starts_with("model.") ? key.substr(6) : key;
  return InputError(row.file, row.line, column_of(k), message);
}

double predicted_metric(const MeasuredRun& row, const JobStepResult& r) {
  const JobModel& m = row.spec.model;
  const JobLayout& l = row.spec.layout;
  switch (row.metric) {
    case MeasuredMetric::TflopsSc21: {
      // SC21's own count: F = 96 B s l h^2 (1 + s / 6h + V / 16 l h) (sec. 5.1), per GPU per second.
      const double B = static_cast<double>(l.global_batch), s = static_cast<double>(m.seq), L = m.shape.layers,
                   h = static_cast<double>(m.shape.hidden), V = static_cast<double>(m.shape.vocab);
      const double F = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
      return F / to_s(r.step_time) / static_cast<double>(r.gpus) / 1e12;
    }
    case MeasuredMetric::TflopsHardware: return r.hardware_tflops_per_gpu;
    case MeasuredMetric::TflopsModel: return r.model_tflops_per_gpu;
    case MeasuredMetric::MfuPercent: return 100 * r.mfu;
    case MeasuredMetric::TokensPerGpuSecond: return r.tokens_per_s_per_gpu;
    case MeasuredMetric::IterationSeconds: return to_s(r.step_time);
    case MeasuredMetric::LayerForwardMs: return r.layer_forward_s * 1e3;
    case MeasuredMetric::LayerBackwardMs: return r.layer_backward_s * 1e3;
    case MeasuredMetric::MoeForwardMs: return r.moe_block_forward_s * 1e3;
    case MeasuredMetric::MoeBackwardMs: return r.moe_block_backward_s * 1e3;
  }
  return 0;
}

}  // namespace stepsim::cli
