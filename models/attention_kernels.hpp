#pragma once
// How fast a fused attention kernel runs on a GPU generation: a named kernel against the
// accelerator's own, whose long-sequence rate its `attention` efficiency is, and the share of that
// rate a layer's shape leaves it (docs/attention.md, "Attention kernels").
#include <cstdint>
#include <optional>
#include <string>

#include "models/accelerators.hpp"
#include "models/job_spec.hpp"

namespace stepsim {

enum class AttentionPass : std::uint8_t { Forward, Backward };

// The head dimension an accelerator's `attention` efficiency is measured at (most models': Llama,
// Qwen3, GPT-3), and the FlashAttention-3 paper's middle one.
inline constexpr double kAttentionReferenceHeadDim = 128;

// The kernel's long-sequence speed in a pass at a head dimension (the mean of the query-key and
// the value widths) as a share of the accelerator's own fused kernel's at head dimension 128,
// where its `attention` efficiency is measured: a softmax attention core runs at peak x
// efficiency.attention x this x attention_tile_share (1 for unfused, whose FLOPs and bytes
// already differ).
double attention_kernel_speed(AttentionKernel k, GpuArchitecture a, AttentionPass p, double head_dim);

// A softmax attention core as a fused kernel's tiles see it, per query tile of 128.
struct AttentionTiles {
  double keys_per_query = 0;  // the keys a query attends on the mean (0: no softmax core)
  // Key tiles computed whole for none of their pairs: half a tile on the causal diagonal, half
  // more at a sliding window's start.
  double masked_tiles = 0;
  double head_dim = 0;  // the mean of the query-key and value widths (MLA's 192 and 128: 160)
  // Kernel calls a tile's keys are split across, each paying the tile's own work: one a step of
  // CP's ring (Megatron-Core's p2p: a call per K/V chunk passed), one otherwise.
  int calls = 1;
};

// The share of its long-sequence rate a fused kernel reaches when each query tile works through
// keys_per_query / 128 key tiles, masked_tiles of them for no pairs: a tile's own work (loading
// its queries, writing its output; in the backward loading its keys and values, writing their
// gradients) costs a fixed number of key tiles beside them in each call. 1 for unfused attention
// (batched GEMMs).
double attention_tile_share(AttentionKernel k, GpuArchitecture a, AttentionPass p, const AttentionTiles& t);

// The kernel's speed at the tiles' head dimension times their share: a softmax core runs at peak x
// efficiency.attention x this (1 for unfused attention, or no softmax core).
double attention_kernel_share(AttentionKernel k, GpuArchitecture a, AttentionPass p, const AttentionTiles& t);

// What runs for `k` on `a`: cuDNN's fused kernel (Hopper's and Blackwell's own), FlashAttention-2
// (Ampere's and Ada's own, or named), FlashAttention-3, or unfused batched GEMMs; `id` for JSON
// (cudnn, flash2, flash3, unfused), `words` for people.
struct AttentionKernelName {
  const char* id;
  const char* words;
};
AttentionKernelName attention_kernel_running(AttentionKernel k, GpuArchitecture a);

// Why `a` cannot run the kernel at a known speed, in one sentence naming what would run; nullopt
// when it can.
std::optional<std::string> attention_kernel_refusal(AttentionKernel k, const AcceleratorSpec& a);

}  // namespace stepsim
