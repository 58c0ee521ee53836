#pragma once
// Block scaling for FP8 (section 10.1; DeepSeek-V3 technical report, 2024, sec. 3.3.2): E4M3's
// largest value is 448, too small a range for one global scale over a whole model, so every
// block of a tensor gets its own FP32 scale factor: 1 x 128 tiles of activations (per token, per
// 128 channels) and 128 x 128 blocks of weights.
#include <cstdint>

#include "sim/time.hpp"

namespace stepsim {

struct ScaleBlock {
  std::int64_t rows = 1;
  std::int64_t cols = 128;
};
inline constexpr ScaleBlock kActivationBlock{1, 128};  // DeepSeek-V3: activations, 1 x 128
inline constexpr ScaleBlock kWeightBlock{128, 128};    // DeepSeek-V3: weights, 128 x 128
inline constexpr ScaleBlock kMxBlock{1, 32};           // MXFP8 (OCP MX v1.0): 32 values, one E8M0 scale
// NVFP4 (Transformer Engine's NVFP4BlockScaling): 4-bit values, an E4M3 scale per 16 (weights in
// 16 x 16 blocks, as many scales), and one FP32 factor per tensor, left out: 0.5 + 1/16 B a value.
inline constexpr double kNvfp4Bytes = 0.5 + 1.0 / 16;

// Scale factors of an [M, K] tensor: ceil(M / block rows) x ceil(K / block cols).
std::int64_t scale_factor_count(std::int64_t m, std::int64_t k, ScaleBlock block);

// Bytes of an [M, K] tensor stored with `element_bytes` per value and one `scale_bytes` scale per
// block.
Bytes block_scaled_bytes(std::int64_t m, std::int64_t k, ScaleBlock block, int element_bytes = 1, int scale_bytes = 4);

// Bytes per element when the block divides the tensor: element + scale / block size. FP8 weights
// with an FP32 scale per 128 x 128: 1 + 4 / 16,384 = 1.000244 ("~1.0002 bytes").
double block_scaled_bytes_per_element(ScaleBlock block, int element_bytes = 1, int scale_bytes = 4);

}  // namespace stepsim
