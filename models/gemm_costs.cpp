#include "models/gemm_costs.hpp"

#include <algorithm>
#include <cmath>

#include "models/block_scaling.hpp"

namespace stepsim {

double gemm_wave_efficiency(double m, double n, double count, const GemmTiling& g) {
  if (g.sms <= 0 || g.tile_m <= 0 || g.tile_n <= 0 || m <= 0 || n <= 0 || count <= 0) return 1;
  const double tm = g.tile_m, tn = g.tile_n;
  const double tiles = count * std::ceil(m / tm) * std::ceil(n / tn);
  const double waves = std::ceil(tiles / g.sms);
  return count * m * n / (tm * tn) / (waves * g.sms);
}

double one_gemm_seconds(const GemmShape& x, GemmPass pass, const AcceleratorSpec& a, std::optional<Fp8Recipe> fp8) {
  const bool at_fp8 = fp8.has_value() && a.low_precision_peak(*fp8) > 0;
  const double peak = at_fp8 ? a.low_precision_peak(*fp8) : a.peak_bf16;
  // The output of each pass: forward m x n, input gradient m x k, weight gradient k x n.
  const double rows = pass == GemmPass::WeightGrad ? x.k : x.m;
  const double cols = pass == GemmPass::InputGrad ? x.k : x.n;
  const double flops = 2 * x.m * x.n * x.k * x.count;
  const double eff = a.efficiency.gemm * (x.part == GemmPart::Experts ? a.efficiency.experts : 1.0) *
                     (at_fp8 ? a.efficiency.fp8_share(*fp8) : 1.0);
  const double compute = flops / (peak * eff * gemm_wave_efficiency(rows, cols, x.count, a.tiling));
  // The roofline (Williams et al., CACM 2009): a GEMM reads its two operands and writes its
  // output at least once, so a thin one (few tokens, a router's few columns) waits on HBM. Of
  // the three matrices m x k, k x n, m x n, the pass's output is the one it writes (BF16); the
  // operands are FP8 in an FP8 GEMM, NVFP4 (with their scales) in an NVFP4 one.
  const double in_bytes = !at_fp8 ? kAct : *fp8 == Fp8Recipe::Nvfp4 ? kNvfp4Bytes : 1;
  const double mk = x.m * x.k, kn = x.k * x.n, mn = x.m * x.n;
  const double out = pass == GemmPass::Forward ? mn : pass == GemmPass::InputGrad ? mk : kn;
  const double bytes = x.count * ((mk + kn + mn - out) * in_bytes + out * kAct);
  if (a.hbm_bandwidth <= 0) return compute;  // not stated: the compute alone
  const double memory = bytes / (static_cast<double>(a.hbm_bandwidth) * a.efficiency.memory);
  return std::max(compute, memory);
}

double gemm_seconds(const std::vector<GemmShape>& gemms, GemmPass pass, const AcceleratorSpec& a,
                    std::optional<Fp8Recipe> fp8) {
  double s = 0;
  for (const auto& x : gemms) s += one_gemm_seconds(x, pass, a, fp8);
  return s;
}

double fp8_cast_bytes(const std::vector<GemmShape>& gemms, GemmPass pass, bool fp8_dispatch, Fp8Recipe recipe) {
  double elements = 0;
  for (const GemmShape& g : gemms) {
    if (g.part == GemmPart::Router) continue;  // the gating runs in BF16 (DeepSeek-V3 sec. 3.3.1)
    const bool bf16_copies = g.part == GemmPart::Experts && g.split == TpSplit::Column && !fp8_dispatch;
    // The shared experts read the MoE block's input, the norm's BF16 output the router and the
    // dispatch read too: a plain Linear, it casts its input itself.
    const bool shared_input = g.part == GemmPart::SharedExperts && g.split == TpSplit::Column;
    if (pass == GemmPass::Forward && (g.split == TpSplit::Row || bf16_copies || shared_input))
      elements += g.m * g.k * g.count;
    if (pass == GemmPass::InputGrad) elements += g.m * g.n * g.count;
  }
  // FP8: read the BF16 tensor, write its FP8 copy and the transpose (4 B). NVFP4 (TE's
  // NVFP4Quantizer): a pass for the tensor's amax, then the row-wise copy and the column-wise one
  // through the 16 x 16 Hadamard transform, each reading the BF16 tensor (2 + 2 x (2 + 0.5625) B).
  const double per_element = recipe == Fp8Recipe::Nvfp4 ? kAct + 2 * (kAct + kNvfp4Bytes) : 4;
  return per_element * elements;
}

}  // namespace stepsim
