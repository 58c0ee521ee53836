#include "cli/input/job_step_yaml.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "models/moe_routing.hpp"

namespace stepsim::cli {

std::string bandwidth(std::int64_t bytes_per_s) {
  for (const auto& [unit, scale] : {std::pair{"TB", 1'000'000'000'000LL}, std::pair{"GB", 1'000'000'000LL},
                                    std::pair{"MB", 1'000'000LL}, std::pair{"KB", 1'000LL}})
    if (bytes_per_s != 0 && bytes_per_s % scale == 0) return fmt::format("{}{}/s", bytes_per_s / scale, unit);
  return fmt::format("{}B/s", bytes_per_s);
}

std::string format_hardware_yaml(const ClusterSpec& c, const std::string& comment) {
  const auto& e = c.accelerator.efficiency;
  std::string out = comment;
  out += fmt::format("preset: {}\n", c.accelerator.name);
  std::string fields;
  for (const EfficiencyField& f : shown_efficiencies(e)) {
    const double v = e.*f.field;
    fields += fmt::format("{}{}: ", fields.empty() ? "" : ", ", f.name) +
              (f.kind == EfficiencyKind::Seconds ? exact_duration(std::llround(v * 1e9)) : fmt::format("{:.4f}", v));
  }
  out += fmt::format("efficiency: {{{}}}\n", fields);
  return out;
}

namespace {

// One key of a section in its reader's terms, its value as written ("" where the reader has no
// word for it: a sentinel default, or a key the reader refuses in that model), and whether it is
// the reader's default. A key inside a map is named "MAP.KEY" (overlap.pp, mla.kv_lora_rank).
struct Field {
  std::string key;
  std::string value;
  bool is_default;
};

// Writes a section's fields: `put` one as written, `flag` a boolean, `count` a number.
struct FieldWriter {
  std::vector<Field>& f;
  void put(std::string key, std::string_view value, bool is_default) const {
    f.push_back({std::move(key), std::string(value), is_default});
  }
  void flag(std::string key, bool value, bool dflt) const { put(std::move(key), value ? "true" : "false", value == dflt); }
  template <class T>
  void count(std::string key, T value, T dflt) const {
    put(std::move(key), fmt::format("{}", value), value == dflt);
  }
};

// Every key of `l`, in the order the writers write them.
std::vector<Field> layout_fields(const JobLayout& l) {
  const JobLayout d;  // read_layout's defaults
  std::vector<Field> f;
  const FieldWriter w{f};
  const auto put = [&](const char* key, std::string_view value, bool is_default) { w.put(key, value, is_default); };
  const auto flag = [&](const char* key, bool value, bool dflt) { w.flag(key, value, dflt); };
  const auto count = [&](const char* key, auto value, auto dflt) { w.count(key, value, decltype(value)(dflt)); };
  // A count whose default is a sentinel: `word` names it (or nothing names it).
  const auto count_or = [&](const char* key, int value, int dflt, const char* word) {
    put(key, value == dflt ? std::string(word) : fmt::format("{}", value), value == dflt);
  };
  count("tp", l.tp, d.tp);
  count("pp", l.pp, d.pp);
  count("virtual_stages", l.vpp, d.vpp);
  count_or("first_chunk_layers", l.first_chunk_layers, d.first_chunk_layers, "even");
  count_or("last_chunk_layers", l.last_chunk_layers, d.last_chunk_layers, "even");
  count("dp", l.dp, d.dp);
  count("cp", l.cp, d.cp);
  count("ep", l.ep, d.ep);
  put("schedule", l.schedule, l.schedule == d.schedule);
  count("zero", l.zero, d.zero);
  flag("sequence_parallel", l.sequence_parallel, d.sequence_parallel);
  count("micro_batch", l.micro_batch, d.micro_batch);
  count("global_batch", l.global_batch, d.global_batch);
  put("recompute", recompute_name(l.recompute), l.recompute == d.recompute);
  count_or("recompute_layers", l.recompute_layers, d.recompute_layers, "all");
  put("attention", attention_name(l.attention), l.attention == d.attention);
  flag("overlap.grad_reduce", l.overlap_grad_reduce, d.overlap_grad_reduce);
  flag("overlap.param_gather", l.overlap_param_gather, d.overlap_param_gather);
  flag("overlap.pp", l.overlap_pp, d.overlap_pp);
  flag("overlap.pairs", l.overlap_pairs, d.overlap_pairs);
  flag("overlap.tp", l.overlap_tp, d.overlap_tp);
  flag("overlap.tp_wgrad", l.overlap_tp_wgrad, d.overlap_tp_wgrad);
  flag("overlap.ep_a2a", l.overlap_ep_a2a, d.overlap_ep_a2a);
  flag("fp8", l.fp8, d.fp8);
  put("fp8_recipe", fp8_recipe_name(l.fp8_recipe), l.fp8_recipe == d.fp8_recipe);
  count("grad_bytes", l.grad_bytes, d.grad_bytes);
  put("cp_split", l.cp_balanced ? "balanced" : "contiguous", l.cp_balanced == d.cp_balanced);
  put("cp_comm", cp_comm_name(l.cp_comm), l.cp_comm == d.cp_comm);
  put("ep_dispatch", ep_dispatch_name(l.ep_dispatch), l.ep_dispatch == d.ep_dispatch);
  flag("fp8_dispatch", l.fp8_dispatch, d.fp8_dispatch);
  flag("fp8_activations", l.fp8_activations, l.fp8);  // read_layout's default follows fp8
  flag("fp8_param_gather", l.fp8_param_gather, d.fp8_param_gather);
  count("bf16_first_layers", l.bf16_first_layers, d.bf16_first_layers);
  count("bf16_last_layers", l.bf16_last_layers, d.bf16_last_layers);
  put("expert_placement", placement_name(l.expert_placement), l.expert_placement == d.expert_placement);
  std::vector<std::string> modules;
  for (const auto& [name, bit] : recompute_module_names())
    if (l.recompute_modules & bit) modules.emplace_back(name);
  put("recompute_modules", fmt::format("[{}]", fmt::join(modules, ", ")), l.recompute_modules == d.recompute_modules);
  count("adam_moment_bytes", l.adam_moment_bytes, d.adam_moment_bytes);
  count_or("expert_tp", l.expert_tp, d.expert_tp, "tp");
  flag("permute_fusion", l.permute_fusion, d.permute_fusion);
  put("dp_bandwidth", l.dp_bandwidth != d.dp_bandwidth ? bandwidth(l.dp_bandwidth) : "none",  // exact
      l.dp_bandwidth == d.dp_bandwidth);
  put("zero3_fetch", zero3_fetch_name(l.zero3_fetch), l.zero3_fetch == d.zero3_fetch);
  put("master_weights", master_weights_name(l.master_weights), l.master_weights == d.master_weights);
  count("dp_replicate", l.dp_replicate, d.dp_replicate);
  flag("keep_gathered", l.keep_gathered, d.keep_gathered);
  flag("offload_optimizer", l.offload_optimizer, d.offload_optimizer);
  put("offload_fraction", l.smallest_offload ? std::string("auto") : fmt::format("{}", l.offload_fraction),
      l.offload_fraction == d.offload_fraction && !l.smallest_offload);
  put("offload_activations", l.fewest_offloaded ? std::string("auto") : fmt::format("{}", l.offload_activations),
      l.offload_activations == d.offload_activations && !l.fewest_offloaded);
  put("zero2_accumulate", zero2_accumulate_name(l.zero2_accumulate), l.zero2_accumulate == d.zero2_accumulate);
  return f;
}

// The fields `keep` selects as a one-line flow map; those named "MAP.KEY" nested in one map each,
// where the first of them stands.
template <class Keep>
std::string flow_map(const std::vector<Field>& fields, Keep keep) {
  std::vector<std::string> kv;
  std::vector<std::pair<std::string, std::vector<std::string>>> maps;  // name, its entries
  std::vector<std::size_t> map_at;                                     // where each goes in kv
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const Field& x = fields[i];
    if (!keep(i)) continue;
    if (x.value.empty()) throw std::logic_error(fmt::format("key {} has no value to write (the default)", x.key));
    const auto dot = x.key.find('.');
    if (dot == std::string::npos) {
      kv.push_back(fmt::format("{}: {}", x.key, x.value));
      continue;
    }
    const std::string map = x.key.substr(0, dot);
    auto m = std::find_if(maps.begin(), maps.end(), [&](const auto& e) { return e.first == map; });
    if (m == maps.end()) {
      map_at.push_back(kv.size());
      m = maps.insert(maps.end(), {map, {}});
    }
    m->second.push_back(fmt::format("{}: {}", x.key.substr(dot + 1), x.value));
  }
  // From the last, so that the places before it stay put.
  for (std::size_t k = maps.size(); k-- > 0;)
    kv.insert(kv.begin() + static_cast<std::ptrdiff_t>(map_at[k]),
              fmt::format("{}: {{{}}}", maps[k].first, fmt::join(maps[k].second, ", ")));
  return fmt::format("{{{}}}", fmt::join(kv, ", "));
}

// Every field not at its default, and those `always` names.
std::string written_fields(const std::vector<Field>& f, std::initializer_list<std::string_view> always) {
  return flow_map(f, [&](std::size_t i) {
    return !f[i].is_default || std::find(always.begin(), always.end(), f[i].key) != always.end();
  });
}
// The fields of `f` to lay over `b`'s (the same keys in the same order) to read back as `f`: one
// written out where `b`'s differs or is its reader's default, and one at its default where `b`'s
// is written out. Where both are defaults the reader works `f`'s out from the other keys (kv_heads
// from heads, fp8_activations from fp8).
std::string differing_fields(const std::vector<Field>& f, const std::vector<Field>& b) {
  return flow_map(f, [&](std::size_t i) {
    return f[i].is_default ? !b[i].is_default : f[i].value != b[i].value || b[i].is_default;
  });
}
// The keys `b` writes out that `f` has no word for: laid over `b`'s, `f` cannot take them away.
std::vector<std::string> lost_fields(const std::vector<Field>& f, const std::vector<Field>& b) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < f.size(); ++i)
    if (f[i].value.empty() && !b[i].is_default) out.push_back(f[i].key);
  return out;
}

// A string as a YAML scalar inside a flow map: as it is where it reads back so, else quoted
// ("a: b", "#1", "x, y").
std::string scalar(const std::string& text) {
  YAML::Emitter plain;
  plain << text;
  if (plain.c_str() == text && text.find_first_of(",[]{}") == std::string::npos) return text;
  YAML::Emitter quoted;
  quoted << YAML::DoubleQuoted << text;
  return quoted.c_str();
}

// Every key of a model in read_job_model's terms (its defaults: a job's model, without dropout).
std::vector<Field> model_fields(const JobModel& m) {
  std::vector<Field> f;
  const FieldWriter w{f};
  const TransformerConfig& s = m.shape;
  w.put("name", scalar(s.name), false);
  w.count("layers", s.layers, 0);
  w.count("hidden", s.hidden, std::int64_t{0});
  w.count("ffn", s.intermediate, std::int64_t{0});
  w.count("heads", s.heads, 0);
  w.count("kv_heads", s.kv_heads, s.heads);
  w.count("head_dim", s.head_dim, s.heads > 0 ? static_cast<int>(s.hidden / s.heads) : 0);
  w.count("vocab", s.vocab, std::int64_t{0});
  w.count("seq", m.seq, std::int64_t{2048});
  w.put("mlp", m.gated_mlp ? "swiglu" : m.squared_relu ? "relu2" : "gelu", m.gated_mlp);
  w.flag("tied_embeddings", s.tied_embeddings, false);
  w.flag("qk_norm", s.qk_norm, false);
  w.flag("dropout", m.dropout, false);
  w.count("sliding_window", m.sliding_window, std::int64_t{0});
  w.count("sliding_window_pattern", m.sliding_window_pattern, 0);
  w.count("experts", m.experts, 0);
  // Keys the reader takes only with experts: no word for them without.
  const bool moe = m.experts > 0;
  const auto moe_count = [&](const char* key, std::int64_t value, bool required) {
    w.put(key, moe ? fmt::format("{}", value) : "", !moe || (!required && value == 0));
  };
  moe_count("top_k", m.top_k, true);
  moe_count("expert_ffn", m.expert_ffn, true);
  moe_count("shared_expert_ffn", m.shared_expert_ffn, false);
  moe_count("dense_layers", m.dense_layers, false);
  moe_count("node_limit", m.node_limit, false);
  moe_count("device_limit", m.device_limit, false);
  const bool hot = m.routing.kind == MoeRoutingSpec::Kind::Hot;
  if (m.routing.kind == MoeRoutingSpec::Kind::Explicit)
    throw std::logic_error("a job's model has no rows per expert to write (routing loads)");
  // Whole values (a map or a word), so that a variant's replaces the base's: `balanced` and `none`
  // spell the defaults.
  w.put("routing",
        !moe  ? ""
        : hot ? fmt::format("{{hot_experts: {}, hot_load: {}}}", m.routing.hot_fraction, m.routing.hot_load)
              : "balanced",
        !hot);
  w.put("capacity_factor",
        !moe                ? ""
        : m.capacity_factor ? fmt::format("{}", *m.capacity_factor)
                            : "none",
        !m.capacity_factor);
  w.count("mtp_layers", m.mtp_layers, 0);
  // A nested map's counts ("mla.q_lora_rank"): written where the model has the map, none where not.
  const auto nested = [&w](const char* map, bool present) {
    return [&w, map, present](const char* key, std::int64_t value) {
      w.put(fmt::format("{}.{}", map, key), present ? fmt::format("{}", value) : "", !present);
    };
  };
  const auto mla_count = nested("mla", m.latent_attention());
  mla_count("q_lora_rank", m.mla.q_lora_rank);
  mla_count("kv_lora_rank", m.mla.kv_lora_rank);
  mla_count("qk_nope_head_dim", m.mla.qk_nope_head_dim);
  mla_count("qk_rope_head_dim", m.mla.qk_rope_head_dim);
  mla_count("v_head_dim", m.mla.v_head_dim);
  w.flag("attention_output_gate", m.attention_output_gate, false);
  const auto linear_count = nested("linear_attention", m.linear.value_heads > 0);
  linear_count("num_key_heads", m.linear.key_heads);
  linear_count("num_value_heads", m.linear.value_heads);
  linear_count("key_head_dim", m.linear.key_head_dim);
  linear_count("value_head_dim", m.linear.value_head_dim);
  linear_count("conv_kernel_dim", m.linear.conv_kernel);
  linear_count("full_attention_interval", m.linear.full_attention_interval);
  const auto mamba_count = nested("mamba", m.mamba.heads > 0);
  mamba_count("num_heads", m.mamba.heads);
  mamba_count("head_dim", m.mamba.head_dim);
  mamba_count("state_size", m.mamba.state);
  mamba_count("n_groups", m.mamba.groups);
  mamba_count("conv_kernel", m.mamba.conv_kernel);
  w.put("hybrid_override_pattern", scalar(m.hybrid_pattern), m.hybrid_pattern.empty());
  return f;
}

// A size and a rate in TFLOP/s as the readers read them back exactly (a bandwidth: above).

// Every key of a cluster in read_cluster's terms beside its preset (`preset`, the defaults): the
// efficiencies, then what differs from the preset's accelerator, node and network.
std::vector<Field> cluster_fields(const ClusterSpec& c) {
  const ClusterSpec* p = find_cluster_preset(c.accelerator.name);
  if (!p) throw std::logic_error(fmt::format("no preset '{}' to write a cluster beside", c.accelerator.name));
  std::vector<Field> f;
  const FieldWriter w{f};
  w.put("preset", c.accelerator.name, false);
  const Efficiency &e = c.accelerator.efficiency, &pe = p->accelerator.efficiency;
  for (const EfficiencyField& x : efficiency_fields_in_report_order()) {
    const double v = e.*x.field;
    // A time in whole nanoseconds, as the reader holds it; the others as they are.
    w.put(fmt::format("efficiency.{}", x.name),
          x.kind == EfficiencyKind::Seconds ? exact_duration(std::llround(v * 1e9)) : fmt::format("{}", v),
          v == pe.*x.field);
  }
  const AcceleratorSpec &a = c.accelerator, &pa = p->accelerator;
  w.put("accelerator.peak_tflops", fmt::format("{}", a.peak_bf16 / 1e12), a.peak_bf16 == pa.peak_bf16);
  w.put("accelerator.peak_fp8_tflops", fmt::format("{}", a.peak_fp8 / 1e12), a.peak_fp8 == pa.peak_fp8);
  w.put("accelerator.peak_fp4_tflops", fmt::format("{}", a.peak_fp4 / 1e12), a.peak_fp4 == pa.peak_fp4);
  w.put("accelerator.hbm_bandwidth", bandwidth(a.hbm_bandwidth), a.hbm_bandwidth == pa.hbm_bandwidth);
  w.put("accelerator.memory", fmt::format("{}B", a.memory), a.memory == pa.memory);
  w.put("accelerator.usable_memory", fmt::format("{}B", a.usable_memory), a.usable_memory == pa.usable_memory);
  w.count("accelerator.sms", a.tiling.sms, pa.tiling.sms);
  w.put("accelerator.architecture", architecture_name(a.architecture), a.architecture == pa.architecture);
  const NodeSpec &n = c.node, &pn = p->node;
  w.count("node.gpus", n.gpus, pn.gpus);
  w.put("node.fabric_bandwidth", n.fabric_bandwidth > 0 ? bandwidth(n.fabric_bandwidth) : "none",
        n.fabric_bandwidth == pn.fabric_bandwidth);
  w.put("node.pcie_bandwidth", bandwidth(n.pcie_bandwidth), n.pcie_bandwidth == pn.pcie_bandwidth);
  w.flag("node.p2p", n.p2p, pn.p2p);
  w.put("node.fabric_latency", exact_duration(n.fabric_latency), n.fabric_latency == pn.fabric_latency);
  w.put("node.host_memory", fmt::format("{}B", n.host_memory), n.host_memory == pn.host_memory);
  w.put("node.host_memory_bandwidth", bandwidth(n.host_memory_bandwidth),
        n.host_memory_bandwidth == pn.host_memory_bandwidth);
  const NetworkSpec &k = c.network, &pk = p->network;
  w.count("network.nics", k.nics, pk.nics);
  w.put("network.nic_bandwidth", bandwidth(k.nic_bandwidth), k.nic_bandwidth == pk.nic_bandwidth);
  w.put("network.latency", exact_duration(k.latency), k.latency == pk.latency);
  std::vector<std::string> tiers;
  bool same_tiers = k.tiers.size() == pk.tiers.size();
  for (std::size_t i = 0; i < k.tiers.size(); ++i) {
    const NetworkTier& t = k.tiers[i];
    tiers.push_back(fmt::format("{{name: {}, nodes: {}, oversubscription: {}}}", scalar(t.name), t.nodes,
                                t.oversubscription));
    same_tiers = same_tiers && t.name == pk.tiers[i].name && t.nodes == pk.tiers[i].nodes &&
                 t.oversubscription == pk.tiers[i].oversubscription;
  }
  w.put("network.tiers", fmt::format("[{}]", fmt::join(tiers, ", ")), same_tiers);
  return f;
}

}  // namespace

std::string exact_duration(Time t) {
  if (t == 0) return "0s";
  for (const auto& [unit, ns] : {std::pair<const char*, Time>{"d", 86400 * kSecond},
                                 {"h", 3600 * kSecond},
                                 {"min", 60 * kSecond},
                                 {"s", kSecond},
                                 {"ms", kMillisecond},
                                 {"us", kMicrosecond}})
    if (t % ns == 0) return fmt::format("{}{}", t / ns, unit);
  return fmt::format("{}ns", t);
}

std::string format_layout_yaml(const JobLayout& l) {
  return written_fields(layout_fields(l), {"tp", "pp", "dp", "schedule", "micro_batch", "global_batch", "recompute"});
}

std::string format_layout_yaml_over(const JobLayout& l, const JobLayout& base) {
  return differing_fields(layout_fields(l), layout_fields(base));
}

std::string format_model_yaml(const JobModel& m) {
  return written_fields(model_fields(m), {"name", "layers", "hidden", "ffn", "heads", "vocab", "seq"});
}

std::string format_model_yaml_over(const JobModel& m, const JobModel& base) {
  return differing_fields(model_fields(m), model_fields(base));
}

std::vector<std::string> model_keys_lost_over(const JobModel& m, const JobModel& base) {
  return lost_fields(model_fields(m), model_fields(base));
}

// The cluster's fields with its card count after the preset.
static std::vector<Field> cluster_fields(const ClusterSpec& c, std::int64_t gpus) {
  std::vector<Field> f = cluster_fields(c);
  f.insert(f.begin() + 1, Field{"gpus", fmt::format("{}", gpus), false});
  return f;
}

std::string format_cluster_yaml(const ClusterSpec& c, std::int64_t gpus) {
  return written_fields(cluster_fields(c, gpus), {"efficiency.gemm", "efficiency.attention", "efficiency.memory",
                                                  "efficiency.fabric", "efficiency.network", "efficiency.contention"});
}

std::string format_cluster_yaml_over(const ClusterSpec& c, std::int64_t gpus, const ClusterSpec& base,
                                     std::int64_t base_gpus) {
  return differing_fields(cluster_fields(c, gpus), cluster_fields(base, base_gpus));
}

}  // namespace stepsim::cli
