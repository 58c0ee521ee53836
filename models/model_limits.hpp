#pragma once
// The largest model and layout stepsim takes, checked where a model or a layout is read (YAML
// scenarios, validation CSVs). The limits sit far past any published run (about 100 layers,
// hidden 25,600 and a 256k vocabulary for the largest dense models; 10^5 GPUs for the largest
// clusters) and keep every count the models derive from them inside int64: a model's parameter
// count, its bytes per GPU, a layout's GPU count. A value past a limit is the input's fault:
// one line naming the key (exit 2), never a wrapped number.
#include <cstdint>
#include <optional>
#include <string>

#include "models/job_spec.hpp"
#include "models/transformer.hpp"

namespace stepsim {

// What is wrong with one key of a model or a layout.
struct InputProblem {
  std::string key;      // the YAML key at fault, e.g. "hidden", "pp", "dp"
  std::string message;  // what is wrong and, where there is one, what would fit
};

inline constexpr std::int64_t kMaxLayers = std::int64_t{1} << 16;
inline constexpr std::int64_t kMaxHidden = std::int64_t{1} << 20;
inline constexpr std::int64_t kMaxFfn = std::int64_t{1} << 22;    // intermediate, expert_ffn, heads x head_dim
inline constexpr std::int64_t kMaxHeads = std::int64_t{1} << 16;  // and head_dim
inline constexpr std::int64_t kMaxVocab = std::int64_t{1} << 24;
inline constexpr std::int64_t kMaxSeq = std::int64_t{1} << 27;          // tokens per sequence
inline constexpr std::int64_t kMaxExpertWidth = std::int64_t{1} << 24;  // experts x expert_ffn per layer
// 10^15 parameters, 1,000x the largest models trained; at 16 B each (weights, gradients,
// optimizer state) 1.6e16 bytes, far inside int64.
inline constexpr std::int64_t kMaxParameters = 1'000'000'000'000'000;
// tp x pp x dp x cp (and each of them, and micro_batch): a million GPUs, also the most cards a
// layout search or a plan's card sweep takes.
inline constexpr std::int64_t kMaxGpus = 1'000'000;
// The most GPUs a node (an NVLink or PCIe domain) may hold: NVIDIA's largest announced NVLink
// domain is 576 GPUs (NVL576); the cap bounds what enumerates a node's divisors.
inline constexpr int kMaxNodeGpus = 4'096;
inline constexpr std::int64_t kMaxMicroBatchTokens = std::int64_t{1} << 34;  // micro_batch x seq
inline constexpr std::int64_t kMaxGlobalBatch = std::int64_t{1} << 40;       // sequences per step

// A dense transformer's shape: each dimension at least 1 and within the limits above, the key /
// value heads dividing the heads, the parameters at most kMaxParameters.
std::optional<InputProblem> check_transformer(const TransformerConfig& c);

// A job's model: its shape (check_transformer), MLA's latents and head widths (each at least 1,
// q_lora_rank 0 or more, within the limits above), sequence length and experts.
std::optional<InputProblem> check_latent_attention(const JobModel& m);
// Gated DeltaNet's heads and widths (each at least 1, within the limits above, the value heads a
// multiple of the key heads), its convolution (1-64 taps) and interval (0 to the layers); not
// beside MLA or a sliding window.
std::optional<InputProblem> check_linear_attention(const JobModel& m);
// A Mamba-2 mixer's shape (JobModel::Mamba; keys of a job's `mamba`), and a hybrid pattern
// (hybrid_override_pattern: its symbols, one a layer, and the blocks they need).
std::optional<InputProblem> check_mamba(const JobModel& m);
std::optional<InputProblem> check_hybrid_pattern(const JobModel& m);
std::optional<InputProblem> check_job_model(const JobModel& m);

}  // namespace stepsim
