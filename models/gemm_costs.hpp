#pragma once
// The time of a pass's GEMMs from their shapes: FLOPs over the peak (BF16 or FP8) times the
// fitted efficiency and the tile and wave quantization the shapes leave, or the HBM traffic of a
// thin GEMM where that is longer (the roofline); and the bytes an FP8 recipe's casts move.
#include <cstdint>
#include <vector>

#include "models/accelerators.hpp"

namespace stepsim {

// Bytes of a BF16 activation or weight element.
inline constexpr double kAct = 2;

// One GEMM of a pass, C[m x n] = A[m x k] B[k x n], or `count` of them launched together (an MoE
// layer's local experts as one grouped GEMM).
// The module a GEMM belongs to, for selective recompute (RecomputeModule).
enum class GemmPart : std::uint8_t { Attention, MlaUpProj, Router, Experts, SharedExperts, Mlp };
// How TP splits a GEMM (Shoeybi et al. 2019 sec. 3): by output columns (its input gathered
// with sequence parallelism), by input rows (its output reduced or reduce-scattered), or not.
enum class TpSplit : std::uint8_t { None, Column, Row };
struct GemmShape {
  double m = 0, n = 0, k = 0;
  double count = 1;
  GemmPart part = GemmPart::Attention;
  TpSplit split = TpSplit::None;
};
// The backward of Y[m x n] = X[m x k] W[k x n] computes dX[m x k] = dY W^T (inner n) and
// dW[k x n] = X^T dY (inner m): as many FLOPs, other output shapes.
enum class GemmPass : std::uint8_t { Forward, InputGrad, WeightGrad };

// Tile and wave quantization (NVIDIA, "Matrix Multiplication Background User's Guide", sections
// "Tile quantization" and "Wave quantization"): the m x n output is computed in tile_m x tile_n
// tiles, each SM one tile at a time, so a partial tile costs a whole one and the last wave of
// ceil(tiles / sms) leaves SMs idle. Returns the useful share of the occupied tile slots,
// (count m n / (tile_m tile_n)) / (waves x sms), in (0, 1]; 1 when the tiling is not modelled.
double gemm_wave_efficiency(double m, double n, double count, const GemmTiling& g);
// The bytes an FP8 recipe's casts move in one pass (Transformer Engine's cast_transpose: read the
// BF16 tensor, write its FP8 copy and the transposed copy the weight gradient reads, 4 B per
// element): forward, the inputs of row-parallel GEMMs (the projection, the MLP's and the experts'
// second GEMMs: another kernel's output; a column-parallel GEMM's input is cast inside the norm
// or the dispatch before it, except the routed experts' first GEMM's after a BF16 dispatch,
// `fp8_dispatch` false, which Transformer Engine's grouped linear casts itself); input gradient,
// every GEMM's output gradient. The router stays BF16. What the casts cost is the bytes over
// HBM, as any memory-bound kernel: 4 B an element in FP8, 7.125 in NVFP4 (gemm_costs.cpp).
double fp8_cast_bytes(const std::vector<GemmShape>& gemms, GemmPass pass, bool fp8_dispatch,
                      Fp8Recipe recipe = Fp8Recipe::Tensorwise);
// Seconds of one GEMM in one pass: its 2 m n k x count FLOPs / (peak x efficiency.gemm x its
// wave efficiency), efficiency.gemm being what quantization leaves unexplained (fitted), or its
// HBM traffic where that is longer. `fp8`: the recipe of FP8 GEMMs (at the FP8 peak x its share;
// nvfp4 at the FP4 peak), nullopt for BF16.
double one_gemm_seconds(const GemmShape& x, GemmPass pass, const AcceleratorSpec& a, std::optional<Fp8Recipe> fp8);
// Seconds of `gemms` in one pass: the sum of one_gemm_seconds.
double gemm_seconds(const std::vector<GemmShape>& gemms, GemmPass pass, const AcceleratorSpec& a,
                    std::optional<Fp8Recipe> fp8);

}  // namespace stepsim
