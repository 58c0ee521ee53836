// Tile and wave quantization of GEMMs (models/layer_costs.hpp, gemm_wave_efficiency; NVIDIA,
// "Matrix Multiplication Background User's Guide"): the useful share of the tile slots a GEMM's
// output occupies, each figure worked by hand below.
#include <catch2/catch.hpp>

#include "models/accelerators.hpp"
#include "models/gemm_costs.hpp"

using namespace stepsim;

namespace {
const GemmTiling kA100{108, 256, 128};
const GemmTiling kH100{132, 256, 128};
}  // namespace

TEST_CASE("wave quantization of whole tiles", "[gemm]") {
  // GPT-3 175B at tp 8, micro-batch 1 (T = 2,048 tokens): the QKV GEMM's output is 2,048 x
  // 3 x 12,288 / 8 = 2,048 x 4,608: 8 x 36 = 288 tiles of 256 x 128. A100: ceil(288 / 108) = 3
  // waves = 324 slots, 288 / 324 = 8/9. H100: 3 waves of 132 = 396 slots, 288 / 396 = 8/11.
  CHECK(gemm_wave_efficiency(2048, 4608, 1, kA100) == Approx(8.0 / 9.0));
  CHECK(gemm_wave_efficiency(2048, 4608, 1, kH100) == Approx(8.0 / 11.0));
  // 1T at tp 8: 2,048 x 3 x 25,600 / 8 = 2,048 x 9,600: 8 x 75 = 600 tiles; ceil(600 / 108) = 6
  // waves = 648 slots, 600 / 648 = 25/27: the larger GEMM wastes less of its last wave.
  CHECK(gemm_wave_efficiency(2048, 9600, 1, kA100) == Approx(25.0 / 27.0));
  // 18 x 12 = 216 tiles = exactly 2 waves of 108: nothing lost.
  CHECK(gemm_wave_efficiency(18 * 256, 12 * 128, 1, kA100) == 1.0);
  // Not modelled (0 SMs): 1.
  CHECK(gemm_wave_efficiency(2048, 4608, 1, GemmTiling{}) == 1.0);
}

TEST_CASE("tile quantization and grouped GEMMs", "[gemm]") {
  // 2,048 x 100: 8 x 1 tiles (each 128 columns wide for 100 useful), one wave of 108 slots:
  // 2,048 x 100 / (256 x 128) = 6.25 useful tiles / 108.
  CHECK(gemm_wave_efficiency(2048, 100, 1, kA100) == Approx(6.25 / 108));
  // Four experts of 300 x 128 as one grouped GEMM: 2 x 1 tiles each, 8 in one wave;
  // 4 x 300 x 128 / 32,768 = 4.6875 useful tiles / 108.
  CHECK(gemm_wave_efficiency(300, 128, 4, kA100) == Approx(4.6875 / 108));
}

TEST_CASE("the backward's GEMMs have their own output shapes", "[gemm]") {
  // The 175B QKV GEMM, Y[2,048 x 4,608] = X[2,048 x 12,288] W[12,288 x 4,608], as many FLOPs in
  // each pass. Forward 8/9 (above); dX is 2,048 x 12,288: 8 x 96 = 768 tiles, ceil(768 / 108) = 8
  // waves = 864 slots, 8/9 again; dW is 12,288 x 4,608: 48 x 36 = 1,728 tiles = 16 whole waves, 1.
  AcceleratorSpec a;
  a.peak_bf16 = 312e12;
  a.efficiency.gemm = 0.5;
  a.tiling = kA100;
  const std::vector<GemmShape> qkv = {{2048, 4608, 12288, 1}};
  const double at_peak = 2.0 * 2048 * 4608 * 12288 / (312e12 * 0.5);
  CHECK(gemm_seconds(qkv, GemmPass::Forward, a, std::nullopt) == Approx(at_peak * 9 / 8));
  CHECK(gemm_seconds(qkv, GemmPass::InputGrad, a, std::nullopt) == Approx(at_peak * 9 / 8));
  CHECK(gemm_seconds(qkv, GemmPass::WeightGrad, a, std::nullopt) == Approx(at_peak));
}

TEST_CASE("a thin GEMM waits on HBM: the roofline", "[gemm]") {
  // DeepSeek-V3's router on an H800, Y[4,096 x 256] = X[4,096 x 7,168] W[7,168 x 256]: 15.0
  // GFLOPs over (4,096 x 7,168 + 7,168 x 256 + 4,096 x 256) x 2 B = 64.5 MB, 233 FLOPs per byte,
  // under the 295 at which 989.4 TFLOP/s and 3.35 TB/s meet: the bytes set its time. The QKV GEMM
  // above (1,075 FLOPs per byte) does not notice.
  AcceleratorSpec a;
  a.peak_bf16 = 989.4e12;
  a.peak_fp8 = 1978.9e12;
  a.hbm_bandwidth = 3'350'000'000'000;
  a.efficiency = {};
  a.efficiency.gemm = a.efficiency.memory = 1;
  const std::vector<GemmShape> router = {{4096, 256, 7168, 1}};
  const double bytes = (4096.0 * 7168 + 7168.0 * 256 + 4096.0 * 256) * 2;
  CHECK(gemm_seconds(router, GemmPass::Forward, a, std::nullopt) == Approx(bytes / 3.35e12));
  CHECK(gemm_seconds(router, GemmPass::Forward, a, std::nullopt) > 2.0 * 4096 * 256 * 7168 / 989.4e12);
  // FP8: the operands at 1 B, the output at 2 B.
  const double fp8_bytes = 4096.0 * 7168 + 7168.0 * 256 + 4096.0 * 256 * 2;
  CHECK(gemm_seconds(router, GemmPass::Forward, a, Fp8Recipe::Tensorwise) == Approx(fp8_bytes / 3.35e12));
  // The weight gradient writes the 7,168 x 256 matrix and reads the other two.
  const double wgrad_bytes = (4096.0 * 7168 + 4096.0 * 256) * 2 + 7168.0 * 256 * 2;
  CHECK(gemm_seconds(router, GemmPass::WeightGrad, a, std::nullopt) == Approx(wgrad_bytes / 3.35e12));
  // A wide GEMM is compute-bound: 2 x 8,192^3 FLOPs at peak.
  const std::vector<GemmShape> wide = {{8192, 8192, 8192, 1}};
  CHECK(gemm_seconds(wide, GemmPass::Forward, a, std::nullopt) == Approx(2.0 * 8192 * 8192 * 8192 / 989.4e12));
}

TEST_CASE("presets carry their SM counts", "[gemm]") {
  CHECK(find_cluster_preset("a100-sxm-80gb")->accelerator.tiling.sms == 108);
  CHECK(find_cluster_preset("h100-sxm")->accelerator.tiling.sms == 132);
  CHECK(find_cluster_preset("h800")->accelerator.tiling.sms == 132);
  CHECK(find_cluster_preset("h200")->accelerator.tiling.sms == 132);
  CHECK(find_cluster_preset("b200")->accelerator.tiling.sms == 148);
  CHECK(find_cluster_preset("rtx4090")->accelerator.tiling.sms == 128);
}

TEST_CASE("the FP8 shares slow FP8 GEMMs only, each its recipe's, on top of the experts' share", "[gemm]") {
  // 8,192^3 on an H100 without wave quantization: 2 x 8,192^3 FLOPs at the FP8 peak x gemm x fp8;
  // an expert GEMM of the same shape x experts as well. BF16 ignores the FP8 share.
  AcceleratorSpec a;
  a.peak_bf16 = 989.4e12;
  a.peak_fp8 = 1978.9e12;
  a.efficiency.gemm = 0.8;
  a.efficiency.experts = 0.75;
  a.efficiency.fp8 = 0.6;
  const double flops = 2.0 * 8192 * 8192 * 8192;
  const std::vector<GemmShape> dense = {{8192, 8192, 8192, 1}};
  const std::vector<GemmShape> expert = {{8192, 8192, 8192, 1, GemmPart::Experts}};
  CHECK(gemm_seconds(dense, GemmPass::Forward, a, std::nullopt) == Approx(flops / (989.4e12 * 0.8)));
  CHECK(gemm_seconds(dense, GemmPass::Forward, a, Fp8Recipe::Tensorwise) == Approx(flops / (1978.9e12 * 0.8 * 0.6)));
  CHECK(gemm_seconds(expert, GemmPass::InputGrad, a, Fp8Recipe::Tensorwise) ==
        Approx(flops / (1978.9e12 * 0.8 * 0.75 * 0.6)));
  // Blockwise GEMMs take their own share, and each recipe only its own.
  a.efficiency.fp8_blockwise = 0.4;
  CHECK(gemm_seconds(dense, GemmPass::Forward, a, Fp8Recipe::Blockwise) == Approx(flops / (1978.9e12 * 0.8 * 0.4)));
  CHECK(gemm_seconds(dense, GemmPass::Forward, a, Fp8Recipe::Tensorwise) == Approx(flops / (1978.9e12 * 0.8 * 0.6)));
  CHECK(gemm_seconds(expert, GemmPass::WeightGrad, a, Fp8Recipe::Blockwise) ==
        Approx(flops / (1978.9e12 * 0.8 * 0.75 * 0.4)));
  // MXFP8 likewise (its share, not the others').
  a.efficiency.fp8_mx = 0.5;
  CHECK(gemm_seconds(dense, GemmPass::Forward, a, Fp8Recipe::Mx) == Approx(flops / (1978.9e12 * 0.8 * 0.5)));
  CHECK(gemm_seconds(dense, GemmPass::Forward, a, Fp8Recipe::Blockwise) == Approx(flops / (1978.9e12 * 0.8 * 0.4)));
  // No FP8 peak (an A100): FP8 asked for runs BF16, at the BF16 efficiency.
  a.peak_fp8 = 0;
  CHECK(gemm_seconds(dense, GemmPass::Forward, a, Fp8Recipe::Tensorwise) == Approx(flops / (989.4e12 * 0.8)));
}
