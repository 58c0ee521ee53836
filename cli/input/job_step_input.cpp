#include "cli/input/job_step_input.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/input/budget.hpp"
#include "cli/input/model_files.hpp"
#include "cli/input/moe_routing_input.hpp"
#include "models/layout.hpp"

namespace stepsim::cli {

namespace {

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

double gib(Bytes b) { return static_cast<double>(b) / (1024.0 * 1024 * 1024); }

// A setting named by one of its values: `fallback` when absent, one line at the key when unknown.
template <class FromName>
auto read_named(const Reader& r, const char* key, const char* fallback, FromName from_name, const char* what,
                const char* choices) {
  const std::string text = r.opt_text(key).value_or(fallback);
  const auto value = from_name(text);
  if (!value) r.fail(key, fmt::format("unknown {} '{}' ({})", what, text, choices));
  return *value;
}
}  // namespace

namespace {
// A model's linear-time mixers: Gated DeltaNet (the linear_* keys of Qwen3-Next's config.json,
// without the prefix) and Mamba-2 (Nemotron-H's mamba_num_heads, mamba_head_dim, ssm_state_size,
// n_groups and conv_kernel, without the prefixes).
void read_linear_mixers(const Reader& r, JobModel& m) {
  if (r.has("linear_attention")) {
    const Reader a = r.child("linear_attention");
    a.only({"num_key_heads", "num_value_heads", "key_head_dim", "value_head_dim", "conv_kernel_dim",
            "full_attention_interval"});
    auto& x = m.linear;
    x.key_heads = a.count("num_key_heads", 1);
    x.value_heads = a.count("num_value_heads", 1);
    x.key_head_dim = a.count("key_head_dim", 1);
    x.value_head_dim = a.count("value_head_dim", 1);
    x.conv_kernel = a.opt_count("conv_kernel_dim", 1).value_or(4);
    x.full_attention_interval = a.opt_count("full_attention_interval", 0).value_or(0);
    if (auto p = check_linear_attention(m)) a.fail(p->key, p->message);
  }
  if (r.has("mamba")) {
    const Reader a = r.child("mamba");
    a.only({"num_heads", "head_dim", "state_size", "n_groups", "conv_kernel"});
    auto& x = m.mamba;
    x.heads = a.count("num_heads", 1);
    x.head_dim = a.count("head_dim", 1);
    x.state = a.count("state_size", 1);
    x.groups = a.opt_count("n_groups", 1).value_or(1);
    x.conv_kernel = a.opt_count("conv_kernel", 1).value_or(4);
    if (auto p = check_mamba(m)) a.fail(p->key, p->message);
  }
}
}  // namespace

JobModel read_job_model(const Reader& parent, const std::string& k) {
  JobModel m;
  m.dropout = false;  // a job's model trains without dropout unless its file says so (as Llama and its successors)
  if (const auto* c = builtin_transformer(parent, k)) {
    m.shape = *c;
    return m;
  }
  const Reader r = fields_or_file(parent, k);
  std::vector<std::string> keys(kTransformerKeys.begin(), kTransformerKeys.end());
  keys.insert(keys.end(), {"seq",
                           "mlp",
                           "experts",
                           "top_k",
                           "expert_ffn",
                           "shared_expert_ffn",
                           "dense_layers",
                           "node_limit",
                           "device_limit",
                           "mla",
                           "mtp_layers",
                           "routing",
                           "capacity_factor",
                           "dropout",
                           "sliding_window",
                           "sliding_window_pattern",
                           "linear_attention",
                           "attention_output_gate",
                           "mamba",
                           "hybrid_override_pattern"});
  r.only(keys);
  m.shape = transformer_fields(r);
  m.seq = r.opt_integer("seq", 1).value_or(2048);
  const std::string mlp = r.opt_text("mlp").value_or("swiglu");
  if (mlp != "swiglu" && mlp != "gelu" && mlp != "relu2")
    r.fail("mlp", fmt::format("unknown mlp '{}' (swiglu, gelu or relu2)", mlp));
  m.gated_mlp = mlp == "swiglu";
  m.squared_relu = mlp == "relu2";
  m.dropout = r.flag("dropout", false);
  m.sliding_window = r.opt_integer("sliding_window", 0).value_or(0);  // 0: none
  m.sliding_window_pattern = r.opt_count("sliding_window_pattern", 0).value_or(0);
  m.attention_output_gate = r.flag("attention_output_gate", false);
  read_linear_mixers(r, m);
  m.hybrid_pattern = r.opt_text("hybrid_override_pattern").value_or("");
  m.experts = r.opt_count("experts", 0).value_or(0);
  if (m.experts > 0) {
    m.top_k = r.count("top_k", 1);
    m.expert_ffn = r.integer("expert_ffn", 1);
    m.shared_expert_ffn = r.opt_integer("shared_expert_ffn", 1).value_or(0);
    m.dense_layers = r.opt_count("dense_layers", 0).value_or(0);
    m.node_limit = r.opt_count("node_limit", 1).value_or(0);
    m.device_limit = r.opt_count("device_limit", 1).value_or(0);
    if (r.has("routing")) m.routing = read_routing(r);
    if (m.routing.kind == MoeRoutingSpec::Kind::Explicit)
      r.child("routing").fail("loads",
                              "rows per expert depend on the tokens of a micro-batch: in a job give "
                              "balanced or {hot_experts, hot_load}");
    if (r.has("capacity_factor")) m.capacity_factor = read_capacity_factor(r);
  } else {
    for (const char* key : {"top_k", "expert_ffn", "shared_expert_ffn", "dense_layers", "node_limit", "device_limit",
                            "routing", "capacity_factor"})
      if (r.has(key)) r.fail(key, "needs experts (a mixture-of-experts model)");
  }
  m.mtp_layers = r.opt_count("mtp_layers", 0).value_or(0);
  if (r.has("mla")) {
    const Reader a = r.child("mla");
    a.only({"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
    m.mla.q_lora_rank = a.opt_integer("q_lora_rank", 0).value_or(0);
    m.mla.kv_lora_rank = a.integer("kv_lora_rank", 1);
    m.mla.qk_nope_head_dim = a.count("qk_nope_head_dim", 1);
    m.mla.qk_rope_head_dim = a.count("qk_rope_head_dim", 1);
    m.mla.v_head_dim = a.count("v_head_dim", 1);
    if (auto p = check_latent_attention(m)) a.fail(p->key, p->message);
  }
  fail_on(r, check_job_model(m));
  return m;
}

static void read_network(const Reader& n, NetworkSpec& net) {
  n.only({"nics", "nic_bandwidth", "latency", "tiers"});
  if (auto v = n.opt_count("nics", 1)) net.nics = *v;
  if (auto v = n.opt_bandwidth("nic_bandwidth")) net.nic_bandwidth = *v;
  if (auto v = n.opt_duration("latency")) net.latency = *v;
  if (n.has("tiers")) {
    const YAML::Node list = n.node()["tiers"];
    if (!list.IsSequence()) n.fail("tiers", "expected a list of {name, nodes, oversubscription}, inner tier first");
    net.tiers.clear();
    for (std::size_t i = 0; i < list.size(); ++i) {
      NetworkTier tier;
      const YAML::Node x = list[i];
      if (!x.IsMap())
        n.fail_at(x, fmt::format("{}[{}]", n.key("tiers"), i), "expected {name, nodes, oversubscription}");
      if (x["name"] && !x["name"].IsScalar())
        n.fail_at(x["name"], fmt::format("{}[{}].name", n.key("tiers"), i), "expected a string");
      tier.name = x["name"] ? x["name"].Scalar() : fmt::format("tier {}", i + 1);
      const Reader t = n.over(x, fmt::format("{}[{}]", n.key("tiers"), i));
      tier.nodes = t.opt_integer("nodes", 0).value_or(0);  // 0: the top tier
      try {
        tier.oversubscription = x["oversubscription"] ? x["oversubscription"].as<double>() : 1.0;
      } catch (const YAML::Exception&) { n.fail_at(x, t.path(), "oversubscription must be a ratio like 2"); }
      if (!(tier.oversubscription >= 1) || !std::isfinite(tier.oversubscription))
        n.fail_at(x, t.path(), "oversubscription must be >= 1");
      net.tiers.push_back(tier);
    }
  }
}

// The efficiencies a scenario sets over the preset's (or a hardware file's).
static void read_efficiency(const Reader& e, Efficiency& eff) {
  std::vector<std::string> keys;
  for (const EfficiencyField& f : efficiency_fields_in_report_order()) keys.emplace_back(f.name);
  keys.emplace_back("moe_host");
  e.only(keys);
  // The fractions first, in the table's order, then contention and the host time: the first bad
  // key named.
  for (const EfficiencyField& f : kEfficiencyFields)
    if (auto v = f.kind == EfficiencyKind::Fraction ? e.opt_number(f.name) : std::nullopt) {
      if (!(*v >= kMinEfficiency && *v <= 1))
        e.fail(f.name,
               fmt::format("{} is not an efficiency (a fraction in [{}, 1], e.g. 0.7 or 70%)", *v, kMinEfficiency));
      eff.*f.field = *v;
    }
  // Contention is a share of time lost, not an efficiency: 0 (collectives cost the compute
  // under them nothing) is a valid answer.
  if (auto v = e.opt_number("contention")) {
    if (!(*v >= 0 && *v <= 1))
      e.fail("contention", fmt::format("{} is not a share of time (a fraction in [0, 1], e.g. 0.2 or 20%)", *v));
    eff.contention = *v;
  }
  // A time, not a fraction: what the host holds the GPU up per MoE pass and local expert (up to
  // a second). The time of a whole pass (`moe_host`, before 2026-12) is refused by name: read
  // as per expert it would count 4-32 times over.
  if (e.has("moe_host"))
    e.fail("moe_host",
           "is now moe_host_per_expert: the host time a pass for each expert a GPU holds (a pass of 849us at "
           "16 experts a GPU is 53us each; docs/calibration.md \"The MoE passes' host time\")");
  if (auto v = e.opt_duration("moe_host_per_expert")) {
    if (*v > kSecond)
      e.fail("moe_host_per_expert", fmt::format("{} s per MoE pass and expert is more than a second", to_s(*v)));
    eff.moe_host_per_expert = to_s(*v);
  }
}

// The node (GPUs, fabric) and the network over the preset's, where `r` gives them.
static void read_node_and_network(const Reader& r, ClusterSpec& c) {
  if (r.has("node")) {
    const Reader n = r.child("node");
    n.only({"gpus", "fabric_bandwidth", "pcie_bandwidth", "p2p", "fabric_latency", "host_memory",
            "host_memory_bandwidth"});
    // A node is an NVLink domain at most (NVL72: 72 GPUs); the search enumerates its divisors.
    if (auto v = n.opt_count("gpus", 1)) {
      if (*v > kMaxNodeGpus) n.fail("gpus", fmt::format("{} GPUs in a node: at most {}", *v, kMaxNodeGpus));
      c.node.gpus = *v;
    }
    if (n.has("fabric_bandwidth")) {
      const YAML::Node fb = n.node()["fabric_bandwidth"];
      c.node.fabric_bandwidth =
          fb.IsScalar() && (fb.Scalar() == "0" || fb.Scalar() == "none") ? 0 : n.bandwidth("fabric_bandwidth");
    }
    if (auto v = n.opt_bandwidth("pcie_bandwidth")) c.node.pcie_bandwidth = *v;
    c.node.p2p = n.flag("p2p", c.node.p2p);
    if (auto v = n.opt_duration("fabric_latency")) c.node.fabric_latency = *v;
    if (auto v = n.opt_bytes("host_memory")) c.node.host_memory = *v;
    if (auto v = n.opt_bandwidth("host_memory_bandwidth")) c.node.host_memory_bandwidth = *v;
  }
  if (r.has("network")) read_network(r.child("network"), c.network);
}

ClusterSpec read_cluster(const Reader& parent, const std::string& k) {
  // gpus: read by read_job_step_scenario; efficiency, node and network beside a file: over the file's.
  const Reader r = fields_or_file(parent, k, {"gpus", "efficiency", "node", "network"});
  r.only({"preset", "gpus", "accelerator", "efficiency", "node", "network", "name"});
  const std::string preset = r.text("preset");
  const ClusterSpec* p = find_cluster_preset(preset);
  if (!p) r.fail("preset", unknown_preset_message(preset));
  ClusterSpec c = *p;
  if (r.has("accelerator")) {
    const Reader a = r.child("accelerator");
    a.only({"peak_tflops", "peak_fp8_tflops", "peak_fp4_tflops", "hbm_bandwidth", "memory", "usable_memory", "sms",
            "architecture"});
    if (auto v = a.opt_number("peak_tflops")) c.accelerator.peak_bf16 = *v * 1e12;
    if (auto v = a.opt_number("peak_fp8_tflops")) c.accelerator.peak_fp8 = *v * 1e12;
    if (auto v = a.opt_number("peak_fp4_tflops")) c.accelerator.peak_fp4 = *v * 1e12;
    if (auto v = a.opt_bandwidth("hbm_bandwidth")) c.accelerator.hbm_bandwidth = *v;
    if (auto v = a.opt_bytes("memory")) {
      // The preset's share of its memory stays usable unless given (an A100 40 GB: 38 of 40 GiB).
      c.accelerator.usable_memory = static_cast<Bytes>(static_cast<__int128>(*v) * c.accelerator.usable_memory /
                                                       std::max<Bytes>(c.accelerator.memory, 1));
      c.accelerator.memory = *v;
    }
    if (auto v = a.opt_bytes("usable_memory")) c.accelerator.usable_memory = *v;
    if (c.accelerator.usable_memory > c.accelerator.memory)
      a.fail(a.has("usable_memory") ? "usable_memory" : "memory",
             fmt::format("usable memory {:.1f} GiB is more than the card's {:.1f} GiB",
                         static_cast<double>(c.accelerator.usable_memory) / (1 << 30),
                         static_cast<double>(c.accelerator.memory) / (1 << 30)));
    if (auto v = a.opt_count("sms", 0)) c.accelerator.tiling.sms = *v;  // 0: no wave quantization
    c.accelerator.architecture = read_named(a, "architecture", architecture_name(c.accelerator.architecture),
                                            architecture_from_name, "architecture", "ampere, ada, hopper or blackwell");
    if (c.accelerator.peak_bf16 <= 0) a.fail("peak_tflops", "must be positive");
  }
  if (r.has("efficiency")) read_efficiency(r.child("efficiency"), c.accelerator.efficiency);
  read_node_and_network(r, c);
  // Beside a hardware file (a calibrated accelerator), the scenario's own efficiencies, node and
  // network over the file's.
  if (const Reader here = parent.child(k); here.has("file")) {
    if (here.has("efficiency")) read_efficiency(here.child("efficiency"), c.accelerator.efficiency);
    read_node_and_network(here, c);
  }
  return c;
}

const std::vector<std::string>& layout_keys() {
  // clang-format off
  static const std::vector<std::string> keys = {
      "tp", "pp", "virtual_stages", "first_chunk_layers", "last_chunk_layers", "dp", "cp", "ep", "schedule", "zero",
      "fsdp", "sequence_parallel", "micro_batch", "global_batch", "recompute", "recompute_layers", "attention",
      "overlap", "fp8", "fp8_recipe", "grad_bytes", "cp_split", "cp_comm", "ep_dispatch", "fp8_dispatch",
      "fp8_activations", "expert_placement", "recompute_modules", "adam_moment_bytes", "expert_tp", "permute_fusion",
      "dp_bandwidth", "zero3_fetch", "master_weights", "dp_replicate", "keep_gathered",
      "zero2_accumulate", "bf16_first_layers", "bf16_last_layers", "fp8_param_gather", "offload_optimizer",
      "offload_fraction", "offload_activations"};
  // clang-format on
  return keys;
}

namespace {
// Which communications run beside the compute (layout.overlap).
void read_overlap(const Reader& o, JobLayout& l) {
  o.only({"grad_reduce", "param_gather", "pp", "pairs", "tp", "tp_wgrad", "ep_a2a"});
  l.overlap_grad_reduce = o.flag("grad_reduce", true);
  l.overlap_param_gather = o.flag("param_gather", true);
  l.overlap_pp = o.flag("pp", true);
  l.overlap_pairs = o.flag("pairs", true);
  l.overlap_tp = o.flag("tp", false);
  l.overlap_tp_wgrad = o.flag("tp_wgrad", true);
  l.overlap_ep_a2a = o.flag("ep_a2a", false);
}

bool is_word(const YAML::Node& n, std::string_view word) { return n.IsDefined() && n.IsScalar() && n.Scalar() == word; }

// A count key that also takes words: any other word is refused naming them (not "not a whole
// number", which hides that words are taken).
void refuse_other_words(const Reader& r, const char* key, std::initializer_list<std::string_view> words,
                        const char* expected) {
  const YAML::Node n = r.node()[key];
  if (!n.IsDefined() || !n.IsScalar() || n.Scalar().empty() ||
      !std::isalpha(static_cast<unsigned char>(n.Scalar().front())))
    return;
  for (const std::string_view w : words)
    if (n.Scalar() == w) return;
  r.fail(key, fmt::format("'{}': expected {}", n.Scalar(), expected));
}

// A count key whose default is spelt `word` (so that a variant can go back to it over a base
// that sets one): the count from `min`, or `dflt` where absent or the word.
int count_or_word(const Reader& r, const char* key, const char* word, int min, int dflt, const char* expected) {
  refuse_other_words(r, key, {word}, expected);
  return is_word(r.node()[key], word) ? dflt : r.opt_count(key, min).value_or(dflt);
}

}  // namespace

const std::vector<std::string>& searchable_layout_keys() {
  // clang-format off
  static const std::vector<std::string> keys = {
      "tp", "pp", "virtual_stages", "schedule", "micro_batch", "recompute", "zero", "sequence_parallel", "dp", "cp",
      "ep", "fsdp", "global_batch", "expert_tp", "cp_comm", "dp_replicate", "recompute_layers", "keep_gathered",
      "offload_optimizer", "offload_activations",
      "first_chunk_layers", "last_chunk_layers"};
  // clang-format on
  return keys;
}

namespace {
// A job step runs one layout; `auto` and lists are a search's (a search reads its searched keys
// apart, and its fixed ones through read_layout).
void refuse_search_values(const Reader& r) {
  for (const auto& k : searchable_layout_keys()) {
    const YAML::Node n = r.has(k) ? r.node()[k] : YAML::Node();
    // The fewest layers that fit, found by the step.
    const bool own_auto = k == "recompute_layers" || k == "offload_activations";
    if ((n.IsScalar() && n.Scalar() == "auto" && !own_auto) || n.IsSequence())
      r.fail(k, fmt::format("a job step runs one layout: `auto` and lists are a search's (`stepsim search FILE` "
                            "searches around this step, `--set search.layout.{}=...` opens this key)",
                            k));
  }
}
}  // namespace

namespace {
// ZeRO's stage and how it shards, gathers and accumulates (layout keys).
void read_sharding(const Reader& r, JobLayout& l) {
  l.zero = r.opt_count("zero", 0).value_or(0);
  if (r.flag("fsdp", false)) {
    if (r.has("zero") && l.zero != 3) r.fail("fsdp", "fsdp is zero 3; drop one of them");
    l.zero = 3;
  }
  l.dp_replicate = r.opt_count("dp_replicate", 1).value_or(1);
  l.zero3_fetch = read_named(r, "zero3_fetch", "layer", zero3_fetch_from_name, "zero3_fetch", "layer or module");
  l.keep_gathered = r.flag("keep_gathered", false);
  l.offload_optimizer = r.flag("offload_optimizer", false);
  // A share, or `auto`: the smallest that fits (set once the model and hardware are read).
  refuse_other_words(r, "offload_fraction", {"auto"},
                     "a share of the optimizer in (0, 1], or auto (the smallest that fits)");
  l.smallest_offload = is_word(r.node()["offload_fraction"], "auto");
  if (!l.smallest_offload) l.offload_fraction = r.opt_number("offload_fraction").value_or(1.0);
  // A count, or `auto`: the fewest that fit (set once the model and hardware are read).
  refuse_other_words(r, "offload_activations", {"auto"},
                     "a count of layers (the model's first) or auto (the fewest that fit)");
  l.fewest_offloaded = is_word(r.node()["offload_activations"], "auto");
  if (!l.fewest_offloaded) l.offload_activations = r.opt_count("offload_activations", 0).value_or(0);
  l.zero2_accumulate =
      read_named(r, "zero2_accumulate", "sharded", zero2_accumulate_from_name, "zero2_accumulate", "sharded or whole");
}
}  // namespace

JobLayout read_layout(const Reader& r) {
  r.only(layout_keys());
  refuse_search_values(r);
  JobLayout l;
  l.tp = r.opt_count("tp", 1).value_or(1);
  l.pp = r.opt_count("pp", 1).value_or(1);
  l.vpp = r.opt_count("virtual_stages", 1).value_or(1);
  l.dp = r.opt_count("dp", 1).value_or(0);
  l.cp = r.opt_count("cp", 1).value_or(1);
  l.ep = r.opt_count("ep", 1).value_or(1);
  l.schedule = r.opt_text("schedule").value_or(l.vpp > 1 ? "interleaved-1f1b" : "1f1b");
  if (!find_schedule(l.schedule)) {
    const auto near = nearest(l.schedule, schedule_names());
    r.fail("schedule", near.empty()
                           ? fmt::format("unknown schedule '{}' (known: {})", l.schedule, join(schedule_names()))
                           : fmt::format("unknown schedule '{}'; did you mean '{}'?", l.schedule, near));
  }
  l.schedule = find_schedule(l.schedule)->name;  // aliases to the family name (the layout's chunk rules use it)
  read_sharding(r, l);
  l.sequence_parallel = r.flag("sequence_parallel", false);
  if (l.sequence_parallel && l.tp == 1)
    r.fail("sequence_parallel", "sequence parallelism splits along the TP group: needs tp > 1");
  l.micro_batch = r.opt_count("micro_batch", 1).value_or(1);
  l.global_batch = r.integer("global_batch", 1);
  l.recompute = read_named(r, "recompute", "none", recompute_from_name, "recompute", "none, selective, op or full");
  // A count, `all` (every layer: the default, spelled out so that a variant can go back to it),
  // or `auto`: the fewest that fit (set once the model and hardware are read).
  const YAML::Node layers = r.node()["recompute_layers"];
  refuse_other_words(r, "recompute_layers", {"all", "auto"},
                     "a count of layers, all (every layer, the default) or auto (the fewest that fit)");
  l.fewest_recompute = is_word(layers, "auto");
  if (l.fewest_recompute && l.recompute != JobRecompute::Full)
    r.fail("recompute_layers",
           "auto recomputes the fewest layers of each chunk that fit, whole: needs recompute: full");
  if (!l.fewest_recompute && !is_word(layers, "all"))
    l.recompute_layers = r.opt_count("recompute_layers", 0).value_or(-1);
  // Used under recompute: selective (a variant may change that).
  if (r.has("recompute_modules"))
    if (auto problem = parse_recompute_modules(r.texts("recompute_modules"), l.recompute_modules))
      r.fail("recompute_modules", *problem);
  l.attention =
      read_named(r, "attention", "flash", attention_from_name, "attention kernel", "flash, flash2, flash3 or unfused");
  if (r.has("overlap")) read_overlap(r.child("overlap"), l);
  l.fp8 = r.flag("fp8", false);
  l.fp8_recipe = read_named(r, "fp8_recipe", "tensorwise", fp8_recipe_from_name, "fp8_recipe",
                            "tensorwise, blockwise, mxfp8 or nvfp4");
  l.ep_dispatch =
      read_named(r, "ep_dispatch", "all_to_all", ep_dispatch_from_name, "ep_dispatch", "all_to_all or per_node");
  l.fp8_dispatch = r.flag("fp8_dispatch", false);
  l.permute_fusion = r.flag("permute_fusion", false);
  refuse_other_words(r, "dp_bandwidth", {"none"}, "a rate (21.3GB/s), or none (the network's, the default)");
  if (!is_word(r.node()["dp_bandwidth"], "none")) l.dp_bandwidth = r.opt_bandwidth("dp_bandwidth").value_or(0);
  l.master_weights =
      read_named(r, "master_weights", "optimizer", master_weights_from_name, "master_weights", "optimizer or model");
  l.fp8_activations = r.flag("fp8_activations", l.fp8);  // Transformer Engine's default with FP8
  l.fp8_param_gather = r.flag("fp8_param_gather", false);
  l.bf16_first_layers = r.opt_count("bf16_first_layers", 0).value_or(0);
  l.bf16_last_layers = r.opt_count("bf16_last_layers", 0).value_or(0);
  l.expert_placement = read_placement(r, "expert_placement");
  const std::string split = r.opt_text("cp_split").value_or("balanced");
  if (split != "balanced" && split != "contiguous")
    r.fail("cp_split", fmt::format("unknown cp_split '{}' (balanced or contiguous)", split));
  l.cp_balanced = split == "balanced";
  l.cp_comm = read_named(r, "cp_comm", "p2p", cp_comm_from_name, "cp_comm", "p2p, all_gather or a2a");
  l.grad_bytes = r.opt_count("grad_bytes", 2).value_or(4);
  l.adam_moment_bytes = r.opt_count("adam_moment_bytes", 1).value_or(4);
  l.expert_tp = count_or_word(r, "expert_tp", "tp", 1, 0, "a count, or tp (the layout's tp, the default)");
  l.first_chunk_layers =
      count_or_word(r, "first_chunk_layers", "even", 0, -1, "a count of layers, or even (an even share, the default)");
  l.last_chunk_layers =
      count_or_word(r, "last_chunk_layers", "even", 0, -1, "a count of layers, or even (an even share, the default)");
  fail_on(r, check_layout_settings(l));
  return l;
}

namespace {
// A GPU's memory by part, GiB, for a refusal: the FP8 GEMMs' weight copies named within the part
// they are of (the weights with FP8 parameters, else the buffers).
std::string memory_parts(const JobMemory& mem) {
  const std::string fp8 = fmt::format("{:.1f}", gib(mem.fp8_weight_copies));
  const bool copies = mem.fp8_weight_copies > 0;
  return fmt::format("weights {:.1f}{}, gradients {:.1f}, optimizer {:.1f}, activations {:.1f}, buffers {:.1f}{}",
                     gib(mem.weights), copies && mem.fp8_parameters ? ", of them FP8 " + fp8 : "", gib(mem.gradients),
                     gib(mem.optimizer), gib(mem.activations), gib(mem.buffers),
                     copies && !mem.fp8_parameters ? ", of them FP8 weight copies " + fp8 : "");
}
}  // namespace

namespace {
// The optimizer on the host, where zero and master_weights allow it (check_layout), the smallest
// share of it that fits (the GPU's memory falls linearly with the share; hundredths, rounded up)
// and whose shards the hosts hold: offered through `try_layout`.
template <class TryLayout>
void try_offload(const JobStepSpec& spec, JobLayout l, TryLayout& try_layout) {
  l.offload_optimizer = true;
  l.offload_fraction = 1;
  if (check_layout(spec.model, l, 0)) return;
  l.offload_fraction = smallest_offload_fraction(spec.model, l, spec.cluster);
  if (host_memory_per_node(job_memory_by_rank(spec.model, l, chunk_costs(spec.model, l, spec.cluster)), spec.cluster,
                           l.ranks()) > spec.cluster.node.host_memory)
    return;
  try_layout(l, l.offload_fraction < 1
                    ? fmt::format("offload_optimizer: true, offload_fraction: {:g}", l.offload_fraction)
                    : std::string("offload_optimizer: true"));
}

// The pipeline (`dim` pp) or context parallelism (cp) 2, 4 or 8 times larger, up to `most`, over
// as many fewer data-parallel ranks, offered through `try_layout` (the smallest that fits): a
// deeper pipeline holds fewer layers a GPU, wider CP a shorter stretch of each sequence.
template <class TryLayout>
void try_fewer_dp(const JobLayout& base, int JobLayout::*dim, const char* name, std::int64_t most,
                  TryLayout& try_layout) {
  for (int f = 2; f <= 8 && std::int64_t{base.*dim} * f <= most && base.dp % f == 0; f *= 2) {
    JobLayout l = base;
    l.*dim *= f;
    l.dp /= f;
    try_layout(l, fmt::format("{}: {}, dp: {}", name, l.*dim, l.dp));
  }
}

// More layers' activations on the host (offload_activations, pp 1 without recompute): the fewest
// that fit the GPU, where the hosts hold them, offered through `try_layout`.
template <class TryLayout>
void try_offload_activations(const JobStepSpec& spec, JobLayout l, TryLayout& try_layout) {
  if (l.pp != 1 || l.recompute != JobRecompute::None) return;
  const int n = fewest_offloaded_layers(spec.model, l, spec.cluster, 0);
  if (n <= l.offload_activations) return;
  l.offload_activations = n;
  l.fewest_offloaded = false;
  if (check_layout(spec.model, l, 0) ||
      host_memory_per_node(job_memory_by_rank(spec.model, l, chunk_costs(spec.model, l, spec.cluster)), spec.cluster,
                           l.ranks()) > spec.cluster.node.host_memory)
    return;
  try_layout(l, fmt::format("offload_activations: {}", n));
}
}  // namespace

std::string memory_refusal(const JobStepSpec& spec, const JobMemory& mem, const std::string& where) {
  auto total = [&](const JobLayout& l) {
    return job_memory(spec.model, l, chunk_costs(spec.model, l, spec.cluster)).total();
  };
  const Bytes cap = spec.cluster.accelerator.usable_memory;
  // What would fit (analytically): one change at a time, in the order a user would try them.
  std::string fits;
  // Whether `l` fits: then it is the suggestion, unless an earlier one is.
  auto try_layout = [&](JobLayout l, const std::string& what) {
    if (!fits.empty() || check_layout(spec.model, l, 0)) return false;
    const Bytes n = total(l);
    if (n <= cap) fits = fmt::format("{} ({:.1f} GiB)", what, gib(n));
    return n <= cap;
  };
  const JobLayout& base = spec.layout;
  // Activations already on the host: more layers' first (recompute would take them back).
  if (base.offload_activations > 0) try_offload_activations(spec, base, try_layout);
  // HSDP: fewer replicas, each sharding over more ranks (the most replicas that fit).
  for (int r = base.dp_replicate - 1; r >= 1; --r)
    if (base.dp % r == 0) {
      JobLayout l = base;
      l.dp_replicate = r;
      try_layout(l, fmt::format("dp_replicate: {}", r));
    }
  // Full recompute of as few layers of each chunk as fit, before every layer.
  if (const int n = fewest_recomputed_layers(spec.model, base, spec.cluster, 0);
      n > 0 && (base.recompute != JobRecompute::Full || base.partial_recompute())) {
    JobLayout l = base;
    l.recompute = JobRecompute::Full;
    l.recompute_layers = n;
    try_layout(l, base.recompute == JobRecompute::Full ? fmt::format("recompute_layers: {}", n)
                                                       : fmt::format("recompute: full, recompute_layers: {}", n));
  }
  bool every_layer = false;  // the suggestion recomputes every layer
  if (base.partial_recompute()) {
    JobLayout l = base;
    l.recompute_layers = -1;
    every_layer = try_layout(l, "recompute every layer (no recompute_layers)");
  }
  if (base.recompute != JobRecompute::Full) {
    JobLayout l = base;
    l.recompute = JobRecompute::Full;
    every_layer = try_layout(l, "recompute: full") || every_layer;
  }
  // Over at the simulated peak, the analytic count of the layers to recompute is a lower bound
  // that says every layer or none: fewer than every layer may fit, which a run with
  // recompute_layers: auto finds.
  if (!where.empty() && every_layer && !base.fewest_recompute && most_chunk_layers(spec.model, base) > 1)
    fits += ", or of the fewest layers that fit with recompute_layers: auto";
  if (base.zero < 1) {
    JobLayout l = base;
    l.zero = 1;
    try_layout(l, "zero: 1");
  }
  if (base.pp == 1 && base.zero < 3) {
    JobLayout l = base;
    l.zero = 3;
    try_layout(l, "zero: 3");
  }
  if (!base.offload_optimizer || base.offload_fraction < 1) try_offload(spec, base, try_layout);
  if (base.offload_activations == 0) try_offload_activations(spec, base, try_layout);
  if (base.micro_batch > 1) {
    JobLayout l = base;
    l.micro_batch = 1;
    try_layout(l, "micro_batch: 1");
  }
  try_fewer_dp(base, &JobLayout::pp, "pp", spec.model.shape.layers, try_layout);
  try_fewer_dp(base, &JobLayout::cp, "cp", std::numeric_limits<int>::max(), try_layout);
  return fmt::format(
      "needs {:.1f} GiB per GPU{} ({}) but {} has {:.1f} GiB usable; {} (or set allow_oom: true to "
      "report it)",
      gib(mem.total()), where, memory_parts(mem), spec.cluster.accelerator.name, gib(cap),
      fits.empty()
          ? "no single change of recompute, zero, micro_batch, pp, cp, offload_optimizer or offload_activations fits"
          : "would fit: " + fits);
}

void check_job_step(const Reader& r, const JobStepSpec& spec, std::int64_t gpus, bool allow_oom) {
  fail_on(r.child("layout"), check_layout(spec.model, spec.layout, gpus));
  // More layers than a chunk holds is every layer, said otherwise ("the first 100 layers of each
  // chunk" of 4): refused for one step (a search applies one count to chunks of every size).
  if (const int most = most_chunk_layers(spec.model, spec.layout);
      spec.layout.partial_recompute() && most > 0 && spec.layout.recompute_layers > most)
    r.child("layout").fail("recompute_layers",
                           fmt::format("{} is more than the {} layer{} of a chunk: at most {} (all: every layer)",
                                       spec.layout.recompute_layers, most, most == 1 ? "" : "s", most));
  fail_on(r.child("layout"), check_accelerator_kernels(spec.layout, spec.cluster.accelerator));
  check_budget(r.child("layout"), "global_batch", job_step_ops_bound(spec.layout, spec.model.shape.layers));
  if (allow_oom) return;
  const std::vector<JobMemory> ranks =
      job_memory_by_rank(spec.model, spec.layout, chunk_costs(spec.model, spec.layout, spec.cluster));
  const JobMemory mem = most_loaded(ranks);
  if (mem.total() > spec.cluster.accelerator.usable_memory) r.fail("layout", memory_refusal(spec, mem, ""));
  const JobLayout& l = spec.layout;
  if (const Bytes host =
          l.offload_optimizer || l.offload_activations > 0 ? host_memory_per_node(ranks, spec.cluster, gpus) : 0;
      host > spec.cluster.node.host_memory)
    r.child("layout").fail(
        l.offload_optimizer ? "offload_optimizer" : "offload_activations",
        fmt::format("the {} on the host needs {:.1f} GiB of a node's host memory ({} GPUs' {}) but the node "
                    "has {:.1f} GiB (hardware.node.host_memory; or set allow_oom: true to report it)",
                    !l.offload_optimizer        ? "activations"
                    : l.offload_activations > 0 ? "optimizer and activations"
                                                : "optimizer",
                    gib(host), std::min<std::int64_t>(spec.cluster.node.gpus, gpus),
                    !l.offload_optimizer        ? "activations"
                    : l.offload_activations > 0 ? "shards and activations"
                                                : "shards",
                    gib(spec.cluster.node.host_memory)));
}

std::string unknown_preset_message(const std::string& name) {
  const auto names = cluster_preset_names();
  const auto parts = [](std::string s) {
    for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    std::vector<std::string> out;
    std::size_t from = 0;
    for (std::size_t dash; (dash = s.find('-', from)) != std::string::npos; from = dash + 1)
      out.push_back(s.substr(from, dash - from));
    out.push_back(s.substr(from));
    return out;
  };
  const auto has_digit = [](const std::string& w) {
    return std::any_of(w.begin(), w.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; });
  };
  // Each of the name's parts that one of the preset's holds (or is held by) scores, a model number
  // twice, and one more where a part is the preset's own ('GB200' is gb200, not b200 inside it).
  std::string near;
  int best = 0;
  for (const auto& n : names) {
    const std::vector<std::string> its = parts(n);
    int score = 0;
    for (const auto& w : parts(name)) {
      if (w.empty()) continue;
      if (std::find(its.begin(), its.end(), w) != its.end())
        score += has_digit(w) ? 3 : 2;
      else if (std::any_of(its.begin(), its.end(), [&](const std::string& q) {
                 return q.find(w) != std::string::npos || w.find(q) != std::string::npos;
               }))
        score += has_digit(w) ? 2 : 1;
    }
    if (score > best) {
      best = score;
      near = n;
    }
  }
  if (near.empty()) near = nearest(name, names);
  return near.empty() ? fmt::format("unknown preset '{}' (known: {})", name, join(names))
                      : fmt::format("unknown preset '{}'; did you mean '{}'?", name, near);
}

namespace {

JobStepScenario read_job_step_fields(const Reader& r);

// Each variant read as a whole section: the base's keys with the variant's laid over them.
std::vector<JobStepVariant> read_job_step_variants(const Reader& r) {
  std::vector<JobStepVariant> out;
  const Reader vs = r.child("variants");
  YAML::Node arena(YAML::NodeType::Sequence);  // the maps merged in the document's memory (laid_over)
  arena.push_back(r.node());
  for (const auto& name : vs.keys()) {
    if (name == "base")
      vs.fail(name, "'base' names the scenario's own step in compare's rows: call the variant otherwise");
    const Reader v = vs.child(name);
    v.only({"model", "hardware", "layout", "input_wait"});
    YAML::Node section = laid_over(r.node(), v.node(), &arena, {"variants"});
    section["allow_oom"] = true;  // compare reports a variant that does not fit
    try {
      out.push_back({name, read_job_step_fields(r.over(section, v.path())).spec, ""});
    } catch (const InputError& e) {
      // A map the merge made has no line of its own: the variant's (a --set key has none).
      if (e.line() > 0 || e.file() == "--set") throw;
      throw InputError(e.file(), static_cast<int>(v.node().Mark().line) + 1, e.key(), e.message());
    }
  }
  return out;
}

}  // namespace

JobStepScenario read_job_step(const Reader& r) {
  r.only({"model", "hardware", "layout", "input_wait", "allow_oom", "reshard_tp", "variants"});
  JobStepScenario sc = read_job_step_fields(r);
  if (r.has("variants")) sc.variants = read_job_step_variants(r);
  return sc;
}

namespace {
// tp x pp x cp, which must divide the GPUs. Blamed at the first of the three the layout gives for
// which the other two divide the GPUs, with its values that would (the divisors of what the other
// two leave); at the GPUs when there is none such.
std::int64_t model_parallel_size(const Reader& r, const JobLayout& l, std::int64_t gpus) {
  const Reader layout = r.child("layout");
  const std::array<std::pair<const char*, std::int64_t>, 3> factors{{{"tp", l.tp}, {"pp", l.pp}, {"cp", l.cp}}};
  // Each factor is at most 2^31: products of two stay in range, and past the GPUs they divide nothing.
  const std::int64_t mp = factors[0].second * factors[1].second;
  if (mp <= gpus && factors[2].second <= gpus / mp && gpus % (mp * factors[2].second) == 0)
    return mp * factors[2].second;
  const std::string split =
      fmt::format("{} GPUs do not split into tp x pp x cp = {} x {} x {} groups", gpus, l.tp, l.pp, l.cp);
  for (std::size_t i = 0; i < factors.size(); ++i) {
    const auto [name, factor] = factors[i];
    const std::int64_t rest = factors[(i + 1) % 3].second * factors[(i + 2) % 3].second;
    if (!layout.has(name) || rest > gpus || gpus % rest != 0) continue;
    layout.fail(name, fmt::format("{} (would fit: {} {})", split, name, divisors_of(gpus / rest, gpus / rest)));
  }
  r.child("hardware").fail("gpus", split);
}

JobStepScenario read_job_step_fields(const Reader& r) {
  JobStepScenario sc;
  if (!r.has("model")) r.fail("model", "missing (a model file, fields or a built-in name)");
  if (!r.has("hardware")) r.fail("hardware", "missing (preset, gpus, ...)");
  if (!r.has("layout"))
    r.fail("layout",
           "missing (tp, pp, dp, global_batch, ...); to find one, put the model and hardware under `search:` with "
           "layout: {global_batch: N} and run `stepsim search` (docs/search.md)");
  sc.spec.model = read_job_model(r, "model");
  sc.spec.cluster = read_cluster(r, "hardware");
  const Reader hw = r.child("hardware");
  const std::int64_t gpus = hw.has("gpus") ? hw.integer("gpus", 1, kMaxGpus) : 0;
  sc.spec.layout = read_layout(r.child("layout"));
  JobLayout& l = sc.spec.layout;
  if (l.dp == 0) {  // derive dp from the GPUs
    if (gpus == 0) r.child("layout").fail("dp", "give layout.dp or hardware.gpus");
    l.dp = static_cast<int>(gpus / model_parallel_size(r, l, gpus));
  }
  if (l.fewest_recompute) l.recompute_layers = fewest_recomputed_layers(sc.spec.model, l, sc.spec.cluster, gpus);
  if (l.smallest_offload && l.offload_optimizer && !check_layout(sc.spec.model, l, gpus))
    l.offload_fraction = smallest_offload_fraction(sc.spec.model, l, sc.spec.cluster);
  if (l.fewest_offloaded) l.offload_activations = fewest_offloaded_layers(sc.spec.model, l, sc.spec.cluster, gpus);
  sc.spec.input_wait = r.opt_duration("input_wait").value_or(0);
  if (r.has("reshard_tp")) {
    const std::int64_t to = r.integer("reshard_tp", 1);
    const auto& s = sc.spec.model.shape;
    const int kv = s.kv_heads > 0 ? s.kv_heads : s.heads;
    if (to < 1 || to > 1024 || s.heads % to != 0 || kv % to != 0)
      r.fail("reshard_tp",
             fmt::format("tp {} does not divide the {} attention heads and {} key/value heads", to, s.heads, kv));
    sc.spec.reshard_tp = static_cast<int>(to);
  }
  sc.allow_oom = r.flag("allow_oom", false);
  check_job_step(r, sc.spec, gpus, sc.allow_oom);
  return sc;
}
}  // namespace

}  // namespace stepsim::cli
