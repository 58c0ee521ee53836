#include "models/job_spec.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace stepsim {

namespace {
// The value of `all` that name_of calls `name`: one reverse lookup for the enums inputs name.
template <class E, std::size_t N>
std::optional<E> named_value(std::string_view name, const E (&all)[N], const char* (*name_of)(E)) {
  for (const E e : all)
    if (name == name_of(e)) return e;
  return std::nullopt;
}
}  // namespace

const char* recompute_name(JobRecompute r) {
  switch (r) {
    case JobRecompute::None: return "none";
    case JobRecompute::Selective: return "selective";
    case JobRecompute::Full: return "full";
    case JobRecompute::Op: return "op";
  }
  return "?";
}

std::string recomputed_layers_note(const JobLayout& l) {
  if (l.recompute != JobRecompute::Full) return "";
  if (l.fewest_recompute && l.recompute_layers == 0) return " (no layer: the fewest that fit)";
  if (l.fewest_recompute && l.recompute_layers < 0) return " (every layer: the fewest that fit)";
  if (!l.partial_recompute()) return "";
  const std::string first =
      l.recompute_layers == 1 ? "the first layer" : "the first " + std::to_string(l.recompute_layers) + " layers";
  return " (" + first + " of each chunk" + (l.fewest_recompute ? ", the fewest that fit)" : ")");
}

std::string offload_words(const JobLayout& l) {
  if (!l.offload_optimizer) return "";
  if (l.offload_fraction >= 1) return "optimizer on the host";
  return fmt::format("{:g} % of the optimizer on the host", 100 * l.offload_fraction);
}

std::optional<JobRecompute> recompute_from_name(std::string_view name) {
  const JobRecompute all[] = {JobRecompute::None, JobRecompute::Selective, JobRecompute::Full, JobRecompute::Op};
  return named_value(name, all, recompute_name);
}

const std::vector<std::pair<const char*, RecomputeModule>>& recompute_module_names() {
  static const std::vector<std::pair<const char*, RecomputeModule>> names = {
      {"core_attn", kRecomputeCoreAttn},
      {"layernorm", kRecomputeLayerNorm},
      {"mla_up_proj", kRecomputeMlaUpProj},
      {"moe_act", kRecomputeMoeAct},
      {"mlp", kRecomputeMlp},
      {"shared_experts", kRecomputeSharedExperts},
      {"moe", kRecomputeMoe}};
  return names;
}

std::optional<std::string> parse_recompute_modules(const std::vector<std::string>& names, std::uint8_t& modules) {
  std::uint8_t set = 0;
  for (const std::string& name : names) {
    const auto& known = recompute_module_names();
    const auto it = std::find_if(known.begin(), known.end(), [&](const auto& k) { return name == k.first; });
    if (it == known.end()) return "unknown module '" + name + "' (" + recompute_module_list(0xff) + ")";
    set |= it->second;
  }
  modules = set;
  return std::nullopt;
}

std::string recompute_module_list(std::uint8_t modules) {
  std::string out;
  for (const auto& [n, m] : recompute_module_names())
    if (modules & m) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

const char* attention_name(AttentionKernel a) {
  switch (a) {
    case AttentionKernel::Flash: return "flash";
    case AttentionKernel::Unfused: return "unfused";
    case AttentionKernel::Flash2: return "flash2";
    case AttentionKernel::Flash3: return "flash3";
  }
  return "";
}

std::optional<AttentionKernel> attention_from_name(std::string_view name) {
  const AttentionKernel all[] = {AttentionKernel::Flash, AttentionKernel::Unfused, AttentionKernel::Flash2,
                                 AttentionKernel::Flash3};
  return named_value(name, all, attention_name);
}

const char* cp_comm_name(CpComm c) {
  switch (c) {
    case CpComm::P2p: return "p2p";
    case CpComm::AllGather: return "all_gather";
    case CpComm::AllToAll: return "a2a";
  }
  return "p2p";
}

std::optional<CpComm> cp_comm_from_name(std::string_view name) {
  const CpComm all[] = {CpComm::P2p, CpComm::AllGather, CpComm::AllToAll};
  return named_value(name, all, cp_comm_name);
}

const char* ep_dispatch_name(EpDispatch d) { return d == EpDispatch::PerNode ? "per_node" : "all_to_all"; }

const char* architecture_name(GpuArchitecture a) {
  switch (a) {
    case GpuArchitecture::Ampere: return "ampere";
    case GpuArchitecture::Ada: return "ada";
    case GpuArchitecture::Hopper: return "hopper";
    case GpuArchitecture::Blackwell: return "blackwell";
  }
  return "";
}

std::optional<GpuArchitecture> architecture_from_name(std::string_view name) {
  const GpuArchitecture all[] = {GpuArchitecture::Ampere, GpuArchitecture::Ada, GpuArchitecture::Hopper,
                                 GpuArchitecture::Blackwell};
  return named_value(name, all, architecture_name);
}

const char* fp8_recipe_name(Fp8Recipe r) {
  return r == Fp8Recipe::Blockwise ? "blockwise"
         : r == Fp8Recipe::Mx      ? "mxfp8"
         : r == Fp8Recipe::Nvfp4   ? "nvfp4"
                                   : "tensorwise";
}

std::optional<Fp8Recipe> fp8_recipe_from_name(std::string_view name) {
  const Fp8Recipe all[] = {Fp8Recipe::Tensorwise, Fp8Recipe::Blockwise, Fp8Recipe::Mx, Fp8Recipe::Nvfp4};
  return named_value(name, all, fp8_recipe_name);
}

std::optional<EpDispatch> ep_dispatch_from_name(std::string_view name) {
  const EpDispatch all[] = {EpDispatch::AllToAll, EpDispatch::PerNode};
  return named_value(name, all, ep_dispatch_name);
}

const char* zero3_fetch_name(Zero3Fetch f) { return f == Zero3Fetch::Module ? "module" : "layer"; }

std::optional<Zero3Fetch> zero3_fetch_from_name(std::string_view name) {
  const Zero3Fetch all[] = {Zero3Fetch::Layer, Zero3Fetch::Module};
  return named_value(name, all, zero3_fetch_name);
}

const char* zero2_accumulate_name(Zero2Accumulate a) { return a == Zero2Accumulate::Whole ? "whole" : "sharded"; }

std::optional<Zero2Accumulate> zero2_accumulate_from_name(std::string_view name) {
  const Zero2Accumulate all[] = {Zero2Accumulate::Sharded, Zero2Accumulate::Whole};
  return named_value(name, all, zero2_accumulate_name);
}

const char* master_weights_name(MasterWeights w) { return w == MasterWeights::Model ? "model" : "optimizer"; }

std::optional<MasterWeights> master_weights_from_name(std::string_view name) {
  const MasterWeights all[] = {MasterWeights::Optimizer, MasterWeights::Model};
  return named_value(name, all, master_weights_name);
}

std::vector<int> chunk_layer_counts(int layers, const JobLayout& l) {
  const int chunks = l.pp * l.chunks_per_device();
  std::vector<int> out(static_cast<std::size_t>(chunks), 0);
  int first = 0, count = chunks, rest = layers;  // the chunks [first, first + count) share `rest`
  if (l.first_chunk_layers >= 0 && count > 0) {
    out.front() = l.first_chunk_layers;
    rest -= l.first_chunk_layers;
    ++first;
    --count;
  }
  if (l.last_chunk_layers >= 0 && count > 0) {
    out.back() = l.last_chunk_layers;
    rest -= l.last_chunk_layers;
    --count;
  }
  for (int k = 0; k < count; ++k) out[static_cast<std::size_t>(first + k)] = rest / count + (k < rest % count ? 1 : 0);
  return out;
}

std::vector<std::vector<int>> device_chunks(const JobLayout& l) {
  std::vector<std::vector<int>> out(static_cast<std::size_t>(l.pp));
  const int n = l.pp * l.chunks_per_device();
  for (int k = 0; k < n; ++k) {
    auto& held = out[static_cast<std::size_t>(l.schedule == "dualpipe-v" && k >= l.pp ? 2 * l.pp - 1 - k : k % l.pp)];
    held.push_back(k);
  }
  if (l.stage_copies() == 2)
    for (int d = 0; d < l.pp; ++d)
      out[static_cast<std::size_t>(d)] = {std::min(d, l.pp - 1 - d), std::max(d, l.pp - 1 - d)};
  return out;
}

JobModel dense_layer_model(const JobModel& m) {
  JobModel d = m;
  d.experts = d.top_k = d.dense_layers = d.node_limit = d.device_limit = 0;
  d.expert_ffn = d.shared_expert_ffn = 0;
  return d;
}

JobModel windowed_layer_model(const JobModel& m) {
  JobModel w = m;
  w.sliding_window_pattern = 0;
  return w;
}

JobModel linear_layer_model(const JobModel& m) {
  JobModel w = m;
  w.linear.full_attention_interval = 0;
  return w;
}

JobModel full_attention_layer_model(const JobModel& m) {
  JobModel f = m;
  f.sliding_window = 0;
  f.sliding_window_pattern = 0;
  f.linear = {};
  return f;
}

namespace {
// How many of the decoder layers [first, first + count) `is` holds for.
template <class Is>
int layers_where(int first, int count, Is is) {
  int n = 0;
  for (int i = first; i < first + count; ++i) n += is(i) ? 1 : 0;
  return n;
}
}  // namespace

int linear_layers_in(const JobModel& m, int first, int count) {
  return layers_where(first, count, [&](int i) { return m.linear_layer(i); });
}

JobLayout bf16_layer_layout(const JobLayout& l) {
  JobLayout b = l;
  b.fp8 = b.fp8_dispatch = b.fp8_activations = b.fp8_param_gather = false;
  b.fp8_recipe = Fp8Recipe::Tensorwise;
  b.bf16_first_layers = b.bf16_last_layers = 0;
  return b;
}

bool has_fp8_layer(const JobModel& m, const JobLayout& l, bool dense) {
  if (!l.fp8) return false;
  for (int i = 0; i < m.shape.layers; ++i)
    if ((dense_layers_in(m, i, 1) == 1) == dense && !l.bf16_layer(i, m.shape.layers)) return true;
  return false;
}

int windowed_layers_in(const JobModel& m, int first, int count) {
  return layers_where(first, count, [&](int i) { return m.windowed_layer(i); });
}

int dense_layers_in(const JobModel& m, int first, int count) {
  if (m.experts == 0) return count;
  if (!m.hybrid_pattern.empty()) return pattern_layers_in(m, '-', first, count);
  return std::clamp(m.dense_layers - first, 0, count);
}

const std::vector<std::pair<char, const char*>>& hybrid_pattern_blocks() {
  static const std::vector<std::pair<char, const char*>> blocks = {
      {'M', "Mamba-2"}, {'*', "attention"}, {'-', "MLP"}, {'E', "MoE"}};
  return blocks;
}

int pattern_layers_in(const JobModel& m, char symbol, int first, int count) {
  return layers_where(first, count, [&](int i) { return m.pattern_symbol(i) == symbol; });
}

int layer_kind(const JobModel& m, int i) {
  int k = (dense_layers_in(m, i, 1) == 1 ? kKindDense : 0) | (m.windowed_layer(i) ? kKindWindowed : 0) |
          (m.linear_layer(i) ? kKindLinear : 0) | (m.mamba_layer(i) ? kKindMamba : 0);
  switch (m.pattern_symbol(i)) {
    case 'M':
    case '*': k |= kKindMixerOnly; break;
    case '-':
    case 'E': k |= kKindMlpOnly; break;
    default: break;
  }
  return k;
}

JobModel layer_kind_model(const JobModel& m, int kind) {
  const JobModel own = (kind & kKindDense) != 0 && m.experts > 0 ? dense_layer_model(m) : m;
  JobModel k = (kind & kKindLinear) != 0     ? linear_layer_model(own)
               : (kind & kKindWindowed) != 0 ? windowed_layer_model(own)
                                             : full_attention_layer_model(own);
  k.hybrid_pattern.clear();
  if ((kind & kKindMamba) == 0) k.mamba = {};
  if ((kind & kKindMixerOnly) != 0) k.blocks = JobModel::Blocks::Mixer;
  if ((kind & kKindMlpOnly) != 0) k.blocks = JobModel::Blocks::Mlp;
  return k;
}

}  // namespace stepsim
