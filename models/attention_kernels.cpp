#include "models/attention_kernels.hpp"

#include <fmt/format.h>

namespace stepsim {

namespace {
// Shah et al., "FlashAttention-3: Fast and Accurate Attention with Asynchrony and Low-precision"
// (2024), Figs. 5-6, BF16 on an H100 SXM5, head dimension 128, sequences of 4K to 16K tokens:
// FlashAttention-2 at 0.61-0.63 of cuDNN's speed, forward (causal: 319-335 against 518-539
// TFLOP/s) and backward (310-322 against 499-518) alike; FlashAttention-3 at 1.08-1.14x (forward
// 579-616, backward 542-561). Hopper's own kernel is cuDNN's (Transformer Engine's fused
// attention): 0.52-0.54 of the 989 TFLOP/s peak there, the h100-sxm preset's 0.55.
constexpr double kHopperFlash2 = 0.62;
constexpr double kHopperFlash3 = 1.11;
}  // namespace

double attention_kernel_speed(AttentionKernel k, GpuArchitecture a) {
  if (a != GpuArchitecture::Hopper) return 1.0;  // Ampere and Ada: FlashAttention-2 is their own
  if (k == AttentionKernel::Flash2) return kHopperFlash2;
  if (k == AttentionKernel::Flash3) return kHopperFlash3;
  return 1.0;
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
