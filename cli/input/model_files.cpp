#include "cli/input/model_files.hpp"

#include <algorithm>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

namespace stepsim::cli {

Reader fields_or_file(const Reader& parent, const std::string& k, const std::vector<std::string>& beside_file) {
  const Reader r = parent.child(k);
  if (!r.has("file")) {
    // `file:` with nothing after it (or `--set ...file=`) is a path left out, not a field of the section.
    if (r.node()["file"].IsDefined()) r.fail("file", "empty: give the file's path (relative to this scenario)");
    return r;
  }
  std::vector<std::string> allowed = beside_file;
  allowed.push_back("file");
  r.only(allowed);
  const std::string name = r.text("file");
  if (name.empty()) r.fail("file", "empty: give the file's path (relative to this scenario)");
  std::filesystem::path path(name);
  if (path.is_relative()) path = std::filesystem::path(parent.file()).parent_path() / path;
  if (const std::string why = input_file_problem(path.string()); !why.empty())
    r.fail("file", fmt::format("cannot open '{}' ({})", path.string(), why));
  const auto src = Source::load(path.string(), {});
  return Reader(src, src->root, "");
}

const TransformerConfig* builtin_transformer(const Reader& parent, const std::string& k) {
  const YAML::Node n = parent.node()[k];
  if (!n.IsDefined() || !n.IsScalar()) return nullptr;
  const std::string name = parent.text(k);
  if (const auto* c = find_transformer(name)) return c;
  // A model the repository ships as a file (scenarios/models/NAME.yaml), not built in.
  std::vector<std::string> shipped;
  for (std::string_view rest = STEPSIM_SHIPPED_MODELS; !rest.empty();) {
    const auto comma = std::min(rest.find(','), rest.size());
    shipped.emplace_back(rest.substr(0, comma));
    rest.remove_prefix(std::min(comma + 1, rest.size()));
  }
  if (std::find(shipped.begin(), shipped.end(), name) != shipped.end())
    parent.fail(k, fmt::format("'{}' is not built in (built in: {}), but the repository ships it as a file: "
                               "{{file: models/{}.yaml}} from a scenario in scenarios/ (a path is relative to the "
                               "scenario's folder)",
                               name, fmt::join(transformer_names(), ", "), name));
  const auto near = nearest(name, transformer_names());
  parent.fail(k, near.empty() ? fmt::format("unknown model '{}' (built in: {}; or a file, {{file: PATH}} relative to "
                                            "the scenario's folder: scenarios/models has {}; or the fields)",
                                            name, fmt::join(transformer_names(), ", "), fmt::join(shipped, ", "))
                              : fmt::format("unknown model '{}'; did you mean '{}'?", name, near));
}

void fail_on(const Reader& r, const std::optional<InputProblem>& problem) {
  if (!problem) return;
  // The model's FFN width may be given as `intermediate`; blame the key the file has.
  const bool as_intermediate = problem->key == "ffn" && !r.has("ffn") && r.has("intermediate");
  const std::string key = as_intermediate ? "intermediate" : problem->key;
  // A key inside a map the file has (routing.hot_load): blamed at its own line.
  if (const auto dot = key.find('.');
      dot != std::string::npos && r.has(key.substr(0, dot)) && r.node()[key.substr(0, dot)].IsMap())
    fail_on(r.child(key.substr(0, dot)), InputProblem{key.substr(dot + 1), problem->message});
  r.fail(key, problem->message);
}

TransformerConfig transformer_fields(const Reader& r) {
  TransformerConfig c;
  c.name = r.opt_text("name").value_or("custom");
  c.layers = r.count("layers", 1);
  c.hidden = r.integer("hidden", 1, kMaxHidden);  // bounded before 4 x hidden below
  if (r.has("ffn") && r.has("intermediate")) r.fail("ffn", "give ffn or intermediate (the same thing), not both");
  c.intermediate = r.has("ffn") ? r.integer("ffn", 1) : r.opt_integer("intermediate", 1).value_or(4 * c.hidden);
  c.heads = r.count("heads", 1);
  c.kv_heads = r.opt_count("kv_heads", 1).value_or(c.heads);
  c.head_dim = r.opt_count("head_dim", 1).value_or(c.hidden / c.heads);
  // Without head_dim each head is hidden / heads wide: a hidden that does not split evenly was read
  // as the rounded-down width, unsaid.
  if (!r.has("head_dim") && c.hidden % c.heads != 0 && c.hidden >= c.heads)
    r.fail("heads", fmt::format("hidden {} does not split into {} heads of equal width: give head_dim (each head's "
                                "width, e.g. {})",
                                c.hidden, c.heads, c.hidden / c.heads));
  c.vocab = r.integer("vocab", 1);
  c.tied_embeddings = r.flag("tied_embeddings", false);
  c.qk_norm = r.flag("qk_norm", false);
  fail_on(r, check_transformer(c));
  return c;
}

TransformerConfig read_transformer(const Reader& parent, const std::string& k) {
  if (const auto* c = builtin_transformer(parent, k)) return *c;
  const Reader r = fields_or_file(parent, k);
  std::vector<std::string> keys(kTransformerKeys.begin(), kTransformerKeys.end());
  r.only(keys);
  return transformer_fields(r);
}

Accelerator read_accelerator(const Reader& parent, const std::string& k) {
  const YAML::Node n = parent.node()[k];
  if (n.IsDefined() && n.IsScalar()) {
    const std::string name = parent.text(k);
    if (const auto* a = find_accelerator(name)) return *a;
    const auto near = nearest(name, accelerator_names());
    parent.fail(k, near.empty() ? fmt::format("unknown accelerator '{}' (built in: {})", name,
                                              fmt::join(accelerator_names(), ", "))
                                : fmt::format("unknown accelerator '{}'; did you mean '{}'?", name, near));
  }
  const Reader r = fields_or_file(parent, k);
  r.only({"name", "peak_tflops", "memory", "usable_memory", "host_link", "peer_link", "p2p"});
  Accelerator a;
  a.name = r.opt_text("name").value_or("custom");
  const double tflops = r.number("peak_tflops");
  if (!(tflops > 0)) r.fail("peak_tflops", "must be positive");
  a.peak_bf16_flops = tflops * 1e12;
  a.memory = r.opt_bytes("memory").value_or(0);
  a.usable_memory = r.opt_bytes("usable_memory").value_or(a.memory);
  a.host_link = r.bandwidth("host_link");
  a.peer_link = r.opt_bandwidth("peer_link").value_or(0);
  a.p2p = r.flag("p2p", a.peer_link > 0);
  return a;
}

}  // namespace stepsim::cli
