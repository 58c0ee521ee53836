#include "cli/input/job_step_yaml.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/moe_routing.hpp"

namespace stepsim::cli {

std::string format_hardware_yaml(const ClusterSpec& c, const std::string& comment) {
  const auto& e = c.accelerator.efficiency;
  std::string out = comment;
  out += fmt::format("preset: {}\n", c.accelerator.name);
  out += fmt::format(
      "efficiency: {{gemm: {:.4f}, attention: {:.4f}, memory: {:.4f}, fabric: {:.4f}, network: {:.4f}, contention: "
      "{:.4f}{}{}{}{}}}\n",
      e.gemm, e.attention, e.memory, e.fabric, e.network, e.contention,
      e.experts != 1.0 ? fmt::format(", experts: {:.4f}", e.experts) : "",
      e.fp8 != 1.0 ? fmt::format(", fp8: {:.4f}", e.fp8) : "",
      e.fp8_blockwise != 1.0 ? fmt::format(", fp8_blockwise: {:.4f}", e.fp8_blockwise) : "",
      e.moe_host != 0 ? fmt::format(", moe_host: {}us", std::llround(e.moe_host * 1e6)) : "");
  return out;
}

namespace {

// One key of a layout in read_layout's terms, its value as written ("" where read_layout has no
// word for it: only the search's base holds such values, which its layouts share), and whether it
// is read_layout's default. Keys under `overlap` are named "overlap.KEY".
struct LayoutField {
  const char* key;
  std::string value;
  bool is_default;
};

// Every key of `l`, in the order the writers write them.
std::vector<LayoutField> layout_fields(const JobLayout& l) {
  const JobLayout d;  // read_layout's defaults
  std::vector<LayoutField> f;
  const auto put = [&](const char* key, std::string_view value, bool is_default) {
    f.push_back({key, std::string(value), is_default});
  };
  const auto flag = [&](const char* key, bool value, bool dflt) { put(key, value ? "true" : "false", value == dflt); };
  const auto count = [&](const char* key, auto value, auto dflt) { put(key, fmt::format("{}", value), value == dflt); };
  // A count whose default is a sentinel: `word` names it (or nothing names it).
  const auto count_or = [&](const char* key, int value, int dflt, const char* word) {
    put(key, value == dflt ? std::string(word) : fmt::format("{}", value), value == dflt);
  };
  count("tp", l.tp, d.tp);
  count("pp", l.pp, d.pp);
  count("virtual_stages", l.vpp, d.vpp);
  count_or("first_chunk_layers", l.first_chunk_layers, d.first_chunk_layers, "");
  count_or("last_chunk_layers", l.last_chunk_layers, d.last_chunk_layers, "");
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
  flag("overlap.ep_a2a", l.overlap_ep_a2a, d.overlap_ep_a2a);
  flag("fp8", l.fp8, d.fp8);
  put("fp8_recipe", fp8_recipe_name(l.fp8_recipe), l.fp8_recipe == d.fp8_recipe);
  count("grad_bytes", l.grad_bytes, d.grad_bytes);
  put("cp_split", l.cp_balanced ? "balanced" : "contiguous", l.cp_balanced == d.cp_balanced);
  put("cp_comm", cp_comm_name(l.cp_comm), l.cp_comm == d.cp_comm);
  put("ep_dispatch", ep_dispatch_name(l.ep_dispatch), l.ep_dispatch == d.ep_dispatch);
  flag("fp8_dispatch", l.fp8_dispatch, d.fp8_dispatch);
  flag("fp8_activations", l.fp8_activations, l.fp8);  // read_layout's default follows fp8
  put("expert_placement", placement_name(l.expert_placement), l.expert_placement == d.expert_placement);
  std::vector<std::string> modules;
  for (const auto& [name, bit] : recompute_module_names())
    if (l.recompute_modules & bit) modules.emplace_back(name);
  put("recompute_modules", fmt::format("[{}]", fmt::join(modules, ", ")), l.recompute_modules == d.recompute_modules);
  count("adam_moment_bytes", l.adam_moment_bytes, d.adam_moment_bytes);
  count_or("expert_tp", l.expert_tp, d.expert_tp, "tp");
  flag("permute_fusion", l.permute_fusion, d.permute_fusion);
  put("dp_bandwidth", l.dp_bandwidth != d.dp_bandwidth ? fmt::format("{}B/s", l.dp_bandwidth) : "",  // exact
      l.dp_bandwidth == d.dp_bandwidth);
  put("zero3_fetch", zero3_fetch_name(l.zero3_fetch), l.zero3_fetch == d.zero3_fetch);
  put("master_weights", master_weights_name(l.master_weights), l.master_weights == d.master_weights);
  count("dp_replicate", l.dp_replicate, d.dp_replicate);
  flag("keep_gathered", l.keep_gathered, d.keep_gathered);
  return f;
}

// The fields `keep` selects as a one-line flow map, those under `overlap` nested in one map.
template <class Keep>
std::string flow_map(const std::vector<LayoutField>& fields, Keep keep) {
  std::vector<std::string> kv, overlap;
  std::size_t overlap_at = 0;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const LayoutField& x = fields[i];
    if (!keep(i)) continue;
    if (x.value.empty())
      throw std::logic_error(fmt::format("layout key {} has no value to write (the default)", x.key));
    const std::string_view key = x.key;
    if (key.starts_with("overlap.")) {
      if (overlap.empty()) overlap_at = kv.size();
      overlap.push_back(fmt::format("{}: {}", key.substr(8), x.value));
    } else {
      kv.push_back(fmt::format("{}: {}", key, x.value));
    }
  }
  if (!overlap.empty())
    kv.insert(kv.begin() + static_cast<std::ptrdiff_t>(overlap_at),
              fmt::format("overlap: {{{}}}", fmt::join(overlap, ", ")));
  return fmt::format("{{{}}}", fmt::join(kv, ", "));
}

}  // namespace

std::string format_layout_yaml(const JobLayout& l) {
  static constexpr std::string_view kAlways[] = {"tp",          "pp",           "dp",       "schedule",
                                                 "micro_batch", "global_batch", "recompute"};
  const std::vector<LayoutField> f = layout_fields(l);
  return flow_map(f, [&](std::size_t i) {
    return !f[i].is_default || std::find(std::begin(kAlways), std::end(kAlways), f[i].key) != std::end(kAlways);
  });
}

std::string format_layout_yaml_over(const JobLayout& l, const JobLayout& base) {
  const std::vector<LayoutField> f = layout_fields(l), b = layout_fields(base);
  return flow_map(f, [&](std::size_t i) { return f[i].value != b[i].value || f[i].is_default != b[i].is_default; });
}

}  // namespace stepsim::cli
