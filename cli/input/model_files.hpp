#pragma once
// Models and accelerators in scenarios. Each is given one of three ways:
//   model: qwen3-8b                         a built-in (models/transformer.hpp, models/hardware.hpp)
//   model: {file: models/qwen3-8b.yaml}     a YAML file of fields, relative to the scenario's folder
//   model: {layers: 36, hidden: 4096, ...}  the fields inline
// Transformer fields: name, layers, hidden, intermediate, heads, kv_heads, head_dim, vocab,
// tied_embeddings, qk_norm. Accelerator fields: name, peak_tflops (dense BF16), memory,
// usable_memory, host_link (PCIe, each direction), peer_link, p2p.
#include <string>

#include "cli/input/input.hpp"
#include "models/hardware.hpp"
#include "models/transformer.hpp"

namespace stepsim::cli {

TransformerConfig read_transformer(const Reader& parent, const std::string& k);
Accelerator read_accelerator(const Reader& parent, const std::string& k);

}  // namespace stepsim::cli
