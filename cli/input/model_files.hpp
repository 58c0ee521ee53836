#pragma once
// Models and accelerators in scenarios. Each is given one of three ways:
//   model: qwen3-8b                         a built-in (models/transformer.hpp, models/hardware.hpp)
//   model: {file: models/qwen3-8b.yaml}     a YAML file of fields, relative to the scenario's folder
//   model: {layers: 36, hidden: 4096, ...}  the fields inline
// Transformer fields: name, layers, hidden, intermediate (or ffn), heads, kv_heads, head_dim, vocab,
// tied_embeddings, qk_norm. Accelerator fields: name, peak_tflops (dense BF16), memory,
// usable_memory, host_link (PCIe, each direction), peer_link, p2p.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "cli/input/input.hpp"
#include "models/hardware.hpp"
#include "models/model_limits.hpp"
#include "models/transformer.hpp"

namespace stepsim::cli {

TransformerConfig read_transformer(const Reader& parent, const std::string& k);

// The pieces of read_transformer, for sections that add keys of their own (job_step's model):
// the inline map at `k`, or the root of the YAML file its only key `file:` names (relative to
// the scenario's folder). `beside_file` are keys the caller reads from `k` itself next to `file:`
// (job_step.hardware's gpus);
Reader fields_or_file(const Reader& parent, const std::string& k, const std::vector<std::string>& beside_file = {});
// the built-in a scalar at `k` names (nullptr when `k` is a map; an unknown name is an error);
const TransformerConfig* builtin_transformer(const Reader& parent, const std::string& k);
// and the shape read from `r`'s kTransformerKeys (`ffn` is another name for `intermediate`,
// which defaults to 4 x hidden). The caller checks the keys with Reader::only.
inline constexpr std::array<const char*, 11> kTransformerKeys = {
    "name", "layers", "hidden", "intermediate", "ffn", "heads", "kv_heads", "head_dim", "vocab", "tied_embeddings",
    "qk_norm"};
TransformerConfig transformer_fields(const Reader& r);
// A model's or a layout's problem (models/model_limits.hpp, models/layout.hpp), if any, as the
// error at its key in `r` (`ffn` given as `intermediate` is blamed as such).
void fail_on(const Reader& r, const std::optional<InputProblem>& problem);
Accelerator read_accelerator(const Reader& parent, const std::string& k);

}  // namespace stepsim::cli
