#include "models/attention_kernels.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstddef>

namespace stepsim {

namespace {
// Shah et al., "FlashAttention-3: Fast and Accurate Attention with Asynchrony and Low-precision"
// (2024), BF16 on an H100 SXM5, 16K tokens a batch at 512 to 16K a sequence, TFLOP/s: Fig. 5's
// forward with the causal mask and Fig. 6's backward (no mask; head dims 64 and 128 only).
//   forward, causal  head dim  512  1K   2K   4K   8K   16K    backward  512  1K   2K   4K   8K   16K
//   cuDNN                  64  225  288  334  363  379  388              266  348  395  417  432  433
//                         128  315  410  484  518  529  539              305  408  465  499  518  516
//                         256  308  391  450  483  497  509
//   FlashAttention-2       64  180  229  262  284  295  299              198  238  264  279  287  291
//                         128  191  260  298  319  333  335              214  260  291  310  318  322
//                         256  208  251  278  293  297  298
//   FlashAttention-3       64  197  265  371  420  460  473              272  363  422  453  472  474
//                         128  292  423  521  579  602  616              316  424  501  542  559  561
//                         256  286  427  537  612  628  642
// Each series is a rate R times attention_tile_share's k / (k + masked + fixed), k the 128-key
// tiles a query works through (s / 256 causal, s / 128 unmasked), fixed fitted to it. The speeds
// are the R against cuDNN's at head dim 128, 0.566 (forward) and 0.549 (backward) of the 989
// TFLOP/s peak, the h100-sxm preset's 0.55: cuDNN's rate x speed x share gives all 90 figures
// within 5.8 % (3.8 % but FlashAttention-3's at head dim 64 and 1K tokens).
// A narrower head does less matrix work per score beside the same softmax: cuDNN runs at 0.71 of
// its rate at head dim 64; FlashAttention-2's and cuDNN's narrower tiles at 256 cost more than
// the wider head gains, FlashAttention-3's do not.
struct KernelFit {
  double head_dim;
  double forward_speed, backward_speed;  // R against cuDNN's at head dim 128
  double forward_fixed, backward_fixed;  // key tiles' worth of a query (key) tile's own work
};
using KernelFits = std::array<KernelFit, 3>;  // head dims 64, 128, 256
// No backward is published at head dim 256: it keeps 128's.
constexpr KernelFits kCudnn{{{64, 0.71, 0.83, 1.0, 2.6}, {128, 1.0, 1.0, 1.0, 3.0}, {256, 0.93, 1.0, 0.9, 3.0}}};
constexpr KernelFits kFlash2{{{64, 0.55, 0.55, 0.9, 2.0}, {128, 0.63, 0.61, 1.1, 2.2}, {256, 0.55, 0.61, 0.4, 2.2}}};
constexpr KernelFits kFlash3{{{64, 0.90, 0.92, 2.7, 3.2}, {128, 1.17, 1.09, 1.9, 3.4}, {256, 1.24, 1.09, 2.2, 3.4}}};
constexpr double kTileKeys = 128;  // the unit `fixed` and `masked` count key tiles in

// What runs: Hopper's and Blackwell's own kernel is cuDNN's (Transformer Engine's fused
// attention; on Blackwell with Hopper's tile figures, none being published), Ampere's and Ada's
// FlashAttention-2 (with H100's figures across head dims, none being found for the A100).
const KernelFits& kernel_fits(AttentionKernel k, GpuArchitecture a) {
  const bool cudnn_own = a == GpuArchitecture::Hopper || a == GpuArchitecture::Blackwell;
  if (k == AttentionKernel::Flash3) return kFlash3;
  if (k == AttentionKernel::Flash2 || !cudnn_own) return kFlash2;
  return kCudnn;
}

// The kernel's figures at a head dimension: linear in log2(head dim) between the published ones,
// the nearest published outside them (FlashAttention-2 and -3 take at most 256).
KernelFit fit_at(const KernelFits& fits, double head_dim) {
  if (!(head_dim > fits.front().head_dim)) return fits.front();
  if (head_dim >= fits.back().head_dim) return fits.back();
  std::size_t i = 1;
  while (fits[i].head_dim < head_dim) ++i;
  if (fits[i].head_dim == head_dim) return fits[i];  // a published one exactly
  const KernelFit &lo = fits[i - 1], &hi = fits[i];
  const double t = std::log2(head_dim / lo.head_dim) / std::log2(hi.head_dim / lo.head_dim);
  const auto mix = [t](double x, double y) { return x + t * (y - x); };
  return {head_dim, mix(lo.forward_speed, hi.forward_speed), mix(lo.backward_speed, hi.backward_speed),
          mix(lo.forward_fixed, hi.forward_fixed), mix(lo.backward_fixed, hi.backward_fixed)};
}
}  // namespace

double attention_kernel_speed(AttentionKernel k, GpuArchitecture a, AttentionPass p, double head_dim) {
  if (!fused(k)) return 1.0;
  // Against the accelerator's own kernel at the reference head dimension.
  const KernelFit f = fit_at(kernel_fits(k, a), head_dim);
  const KernelFit own = fit_at(kernel_fits(AttentionKernel::Flash, a), kAttentionReferenceHeadDim);
  return p == AttentionPass::Forward ? f.forward_speed / own.forward_speed : f.backward_speed / own.backward_speed;
}

double attention_tile_share(AttentionKernel k, GpuArchitecture a, AttentionPass p, const AttentionTiles& t) {
  if (!fused(k) || t.keys_per_query <= 0) return 1.0;
  const KernelFit f = fit_at(kernel_fits(k, a), t.head_dim);
  const double tiles = t.keys_per_query / kTileKeys;
  const double fixed = (p == AttentionPass::Forward ? f.forward_fixed : f.backward_fixed) * t.calls;
  return tiles / (tiles + t.masked_tiles + fixed);
}

double attention_kernel_share(AttentionKernel k, GpuArchitecture a, AttentionPass p, const AttentionTiles& t) {
  if (t.keys_per_query <= 0) return 1.0;
  return attention_kernel_speed(k, a, p, t.head_dim) * attention_tile_share(k, a, p, t);
}

AttentionKernelName attention_kernel_running(AttentionKernel k, GpuArchitecture a) {
  if (!fused(k)) return {"unfused", "unfused attention (batched GEMMs)"};
  const KernelFits& f = kernel_fits(k, a);
  if (&f == &kFlash3) return {"flash3", "FlashAttention-3"};
  if (&f == &kFlash2) return {"flash2", "FlashAttention-2"};
  return {"cudnn", "cuDNN's fused attention"};
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
