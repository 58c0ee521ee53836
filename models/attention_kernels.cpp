#include "models/attention_kernels.hpp"

#include <fmt/format.h>

namespace stepsim {

namespace {
// Shah et al., "FlashAttention-3: Fast and Accurate Attention with Asynchrony and Low-precision"
// (2024), BF16 on an H100 SXM5, head dimension 128, 16K tokens a batch at 512 to 16K a sequence:
// Fig. 5's forward with the causal mask and Fig. 6's backward (no mask), TFLOP/s.
//   forward, causal     512  1K   2K   4K   8K   16K     backward   512  1K   2K   4K   8K   16K
//   cuDNN               315  410  484  518  529  539                305  408  465  499  518  516
//   FlashAttention-2    191  260  298  319  333  335                214  260  291  310  318  322
//   FlashAttention-3    292  423  521  579  602  616                316  424  501  542  559  561
// Each series is a rate R times attention_tile_share's k / (k + masked + fixed), k the key tiles
// a query tile works through (s / 256 causal, s / 128 unmasked), fixed fitted to it: within 3.6 %
// at every length. The speeds are the ratios of the R, the long-sequence rates; cuDNN's R is
// 0.566 (forward) and 0.549 (backward) of the 989 TFLOP/s peak, the h100-sxm preset's 0.55.
struct KernelFit {
  double forward_speed, backward_speed;  // R against cuDNN's
  double forward_fixed, backward_fixed;  // key tiles' worth of a query (key) tile's own work
};
constexpr KernelFit kCudnn{1.0, 1.0, 1.0, 3.0};
constexpr KernelFit kFlash2{0.63, 0.61, 1.1, 2.2};
constexpr KernelFit kFlash3{1.17, 1.09, 1.9, 3.4};
constexpr double kTileKeys = 128;  // keys a tile holds: all three kernels' at head dimension 128

// What runs: Hopper's and Blackwell's own kernel is cuDNN's (Transformer Engine's fused
// attention; on Blackwell with Hopper's tile figures, none being published), Ampere's and Ada's
// FlashAttention-2.
const KernelFit& kernel_fit(AttentionKernel k, GpuArchitecture a) {
  const bool cudnn_own = a == GpuArchitecture::Hopper || a == GpuArchitecture::Blackwell;
  if (k == AttentionKernel::Flash3) return kFlash3;
  if (k == AttentionKernel::Flash2 || !cudnn_own) return kFlash2;
  return kCudnn;
}
}  // namespace

double attention_kernel_speed(AttentionKernel k, GpuArchitecture a, AttentionPass p) {
  if (a != GpuArchitecture::Hopper || !fused(k)) return 1.0;  // elsewhere a named kernel is the own one
  const KernelFit& f = kernel_fit(k, a);
  return p == AttentionPass::Forward ? f.forward_speed : f.backward_speed;
}

double attention_tile_share(AttentionKernel k, GpuArchitecture a, AttentionPass p, double keys_per_query,
                            double masked_tiles) {
  if (!fused(k) || keys_per_query <= 0) return 1.0;
  const KernelFit& f = kernel_fit(k, a);
  const double tiles = keys_per_query / kTileKeys;
  return tiles / (tiles + masked_tiles + (p == AttentionPass::Forward ? f.forward_fixed : f.backward_fixed));
}

std::optional<std::string> attention_kernel_refusal(AttentionKernel k, const AcceleratorSpec& a) {
  const bool hopper = a.architecture == GpuArchitecture::Hopper;
  // FlashAttention-3 is written for Hopper's warpgroup MMA and TMA (its README: H100 / H800).
  if (k == AttentionKernel::Flash3 && !hopper)
    return fmt::format("flash3 (FlashAttention-3) runs on Hopper only (H100, H800, H200); {} is {}: flash{} would run",
                       a.name, architecture_name(a.architecture),
                       a.architecture == GpuArchitecture::Blackwell ? " (cuDNN's)" : " (FlashAttention-2)");
  // No published measurement times FlashAttention-2 on Blackwell beside cuDNN's kernel.
  if (k == AttentionKernel::Flash2 && a.architecture == GpuArchitecture::Blackwell)
    return fmt::format(
        "flash2 (FlashAttention-2) has no published speed on Blackwell to scale {}'s attention efficiency by: "
        "flash (cuDNN's, the calibrated rate) would run",
        a.name);
  return std::nullopt;
}

}  // namespace stepsim
