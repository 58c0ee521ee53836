#include "cli/input/job_step_yaml.hpp"

#include <cmath>
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

std::string format_layout_yaml(const JobLayout& l) {
  const JobLayout d;  // read_layout's defaults
  std::vector<std::string> kv;
  const auto put = [&](const char* key, const auto& value) { kv.push_back(fmt::format("{}: {}", key, value)); };
  const auto flag = [&](const char* key, bool value, bool dflt) {
    if (value != dflt) put(key, value ? "true" : "false");
  };
  const auto count = [&](const char* key, auto value, auto dflt) {
    if (value != dflt) put(key, value);
  };
  put("tp", l.tp);
  put("pp", l.pp);
  count("virtual_stages", l.vpp, d.vpp);
  count("first_chunk_layers", l.first_chunk_layers, d.first_chunk_layers);
  count("last_chunk_layers", l.last_chunk_layers, d.last_chunk_layers);
  put("dp", l.dp);
  count("cp", l.cp, d.cp);
  count("ep", l.ep, d.ep);
  put("schedule", l.schedule);
  count("zero", l.zero, d.zero);
  flag("sequence_parallel", l.sequence_parallel, d.sequence_parallel);
  put("micro_batch", l.micro_batch);
  put("global_batch", l.global_batch);
  put("recompute", recompute_name(l.recompute));
  count("recompute_layers", l.recompute_layers, d.recompute_layers);
  if (l.attention != d.attention) put("attention", attention_name(l.attention));
  std::vector<std::string> overlap;
  const auto overlap_flag = [&](const char* key, bool value, bool dflt) {
    if (value != dflt) overlap.push_back(fmt::format("{}: {}", key, value ? "true" : "false"));
  };
  overlap_flag("grad_reduce", l.overlap_grad_reduce, d.overlap_grad_reduce);
  overlap_flag("param_gather", l.overlap_param_gather, d.overlap_param_gather);
  overlap_flag("pp", l.overlap_pp, d.overlap_pp);
  overlap_flag("pairs", l.overlap_pairs, d.overlap_pairs);
  overlap_flag("tp", l.overlap_tp, d.overlap_tp);
  overlap_flag("ep_a2a", l.overlap_ep_a2a, d.overlap_ep_a2a);
  if (!overlap.empty()) put("overlap", fmt::format("{{{}}}", fmt::join(overlap, ", ")));
  flag("fp8", l.fp8, d.fp8);
  if (l.fp8_recipe != d.fp8_recipe) put("fp8_recipe", fp8_recipe_name(l.fp8_recipe));
  count("grad_bytes", l.grad_bytes, d.grad_bytes);
  if (!l.cp_balanced) put("cp_split", "contiguous");
  if (l.cp_comm != d.cp_comm) put("cp_comm", cp_comm_name(l.cp_comm));
  if (l.ep_dispatch != d.ep_dispatch) put("ep_dispatch", ep_dispatch_name(l.ep_dispatch));
  flag("fp8_dispatch", l.fp8_dispatch, d.fp8_dispatch);
  flag("fp8_activations", l.fp8_activations, l.fp8);  // read_layout's default follows fp8
  if (l.expert_placement != d.expert_placement) put("expert_placement", placement_name(l.expert_placement));
  if (l.recompute_modules != d.recompute_modules) {
    std::vector<std::string> names;
    for (const auto& [name, bit] : recompute_module_names())
      if (l.recompute_modules & bit) names.emplace_back(name);
    put("recompute_modules", fmt::format("[{}]", fmt::join(names, ", ")));
  }
  count("adam_moment_bytes", l.adam_moment_bytes, d.adam_moment_bytes);
  count("expert_tp", l.expert_tp, d.expert_tp);
  flag("permute_fusion", l.permute_fusion, d.permute_fusion);
  if (l.dp_bandwidth != d.dp_bandwidth) put("dp_bandwidth", fmt::format("{}B/s", l.dp_bandwidth));  // exact
  if (l.zero3_fetch != d.zero3_fetch) put("zero3_fetch", zero3_fetch_name(l.zero3_fetch));
  if (l.master_weights != d.master_weights) put("master_weights", master_weights_name(l.master_weights));
  count("dp_replicate", l.dp_replicate, d.dp_replicate);
  flag("keep_gathered", l.keep_gathered, d.keep_gathered);
  return fmt::format("{{{}}}", fmt::join(kv, ", "));
}

}  // namespace stepsim::cli
