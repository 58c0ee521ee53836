// Named attention kernels (layout attention: flash2, flash3; docs/attention.md "Attention kernels"): their
// speed against the accelerator's own fused kernel, where they run, and what they leave alone.
#include <catch2/catch.hpp>

#include <cmath>

#include "job_step_fixtures.hpp"
#include "models/attention_kernels.hpp"
#include "models/layer_costs.hpp"
#include "models/layout.hpp"

using namespace stepsim;
using namespace stepsim::job_step_fixtures;

namespace {
// Llama 3 8B's layer at 8,192 tokens, TP 1.
JobModel llama3_8b() {
  JobModel m;
  m.shape = decoder("llama3-8b", 32, 4096, 14336, 32, 8, 128, 128256);
  m.shape.qk_norm = false;
  m.seq = 8192;
  return m;
}
}  // namespace

TEST_CASE("attention kernels: FlashAttention-2 and -3 against the accelerator's own", "[job_step][attention]") {
  // The FlashAttention-3 paper's Figs. 5-6 (H100 SXM5, head dim 128), long-sequence rates against
  // cuDNN's: FA2 0.63 forward, 0.61 backward; FA3 1.17 and 1.09.
  const auto fwd = AttentionPass::Forward, bwd = AttentionPass::Backward;
  CHECK(attention_kernel_speed(AttentionKernel::Flash2, GpuArchitecture::Hopper, fwd, 128) == 0.63);
  CHECK(attention_kernel_speed(AttentionKernel::Flash2, GpuArchitecture::Hopper, bwd, 128) == 0.61);
  CHECK(attention_kernel_speed(AttentionKernel::Flash3, GpuArchitecture::Hopper, fwd, 128) == 1.17);
  CHECK(attention_kernel_speed(AttentionKernel::Flash3, GpuArchitecture::Hopper, bwd, 128) == 1.09);
  CHECK(attention_kernel_speed(AttentionKernel::Flash, GpuArchitecture::Hopper, bwd, 128) == 1.0);
  CHECK(attention_kernel_speed(AttentionKernel::Unfused, GpuArchitecture::Hopper, fwd, 128) == 1.0);
  // On Ampere and Ada FlashAttention-2 is the accelerator's own kernel.
  CHECK(attention_kernel_speed(AttentionKernel::Flash2, GpuArchitecture::Ampere, fwd, 128) == 1.0);
  CHECK(attention_kernel_speed(AttentionKernel::Flash2, GpuArchitecture::Ada, bwd, 128) == 1.0);

  const JobModel m = llama3_8b();
  JobLayout own, fa2, fa3;
  fa2.attention = AttentionKernel::Flash2;
  fa3.attention = AttentionKernel::Flash3;
  const ClusterSpec h100 = *find_cluster_preset("h100-sxm");
  const LayerPasses p = layer_passes(m, own, h100), p2 = layer_passes(m, fa2, h100), p3 = layer_passes(m, fa3, h100);
  // 8,192 causal tokens: 4 x 8,192 x 8,193 / 2 x 4,096 FLOPs forward (2.5x backward) at 989.4
  // TFLOP/s x 0.55 x the kernel's speed x its tile share: 4,096.5 keys a query, 32.0 tiles of 128,
  // half a tile masked on the diagonal, the kernel's own work a query (key) tile's worth of tiles:
  // cuDNN 1.0 forward and 3.0 backward, FlashAttention-2 1.1 and 2.2, FlashAttention-3 1.9 and 3.4.
  const double flops = 4.0 * (8192.0 * 8193 / 2) * 4096, tiles = 4096.5 / 128, rate = 989.4e12 * 0.55;
  REQUIRE(h100.accelerator.peak_bf16 == 989.4e12);
  REQUIRE(h100.accelerator.efficiency.attention == 0.55);
  const auto share = [&](double fixed) { return tiles / (tiles + 0.5 + fixed); };
  CHECK(p.forward.attention == Approx(flops / (rate * share(1.0))).epsilon(1e-9));
  CHECK(p.backward_input.attention == Approx(2.5 * flops / (rate * share(3.0))).epsilon(1e-9));
  CHECK(p2.forward.attention == Approx(flops / (rate * 0.63 * share(1.1))).epsilon(1e-9));
  CHECK(p2.backward_input.attention == Approx(2.5 * flops / (rate * 0.61 * share(2.2))).epsilon(1e-9));
  CHECK(p3.forward.attention == Approx(flops / (rate * 1.17 * share(1.9))).epsilon(1e-9));
  CHECK(p3.backward_input.attention == Approx(2.5 * flops / (rate * 1.09 * share(3.4))).epsilon(1e-9));
  // The GEMMs, the memory-bound kernels and the collectives as they were.
  CHECK(p2.forward.gemm == p.forward.gemm);
  CHECK(p2.forward.memory == p.forward.memory);
  CHECK(p2.backward_input.gemm == p.backward_input.gemm);
  CHECK(p2.backward_weight.gemm == p.backward_weight.gemm);
  // Same kernel, same bytes: the activations and what a fused kernel keeps do not change.
  CHECK(layer_activation_bytes(m, fa2) == layer_activation_bytes(m, own));
  // On an A100, flash2 is flash: FlashAttention-2's tiles at the A100's own rate.
  const ClusterSpec a100 = *find_cluster_preset("a100-sxm-80gb");
  const LayerPasses a = layer_passes(m, own, a100);
  CHECK(layer_passes(m, fa2, a100).forward.attention == a.forward.attention);
  CHECK(layer_passes(m, fa2, a100).backward_input.attention == a.backward_input.attention);
  const double a100_rate = a100.accelerator.peak_bf16 * a100.accelerator.efficiency.attention;
  CHECK(a.forward.attention == Approx(flops / (a100_rate * share(1.1))).epsilon(1e-9));
  // Unfused attention computes every score as batched GEMMs: no tiles, all 8,192 keys.
  JobLayout unfused;
  unfused.attention = AttentionKernel::Unfused;
  CHECK(layer_passes(m, unfused, h100).forward.attention == Approx(2 * flops * 8192 / 8193 / rate).epsilon(1e-9));
}

TEST_CASE("attention kernels: speed and tile share follow the published rates from 512 to 16K tokens",
          "[job_step][attention]") {
  // Shah et al. 2024, Fig. 5 (forward, causal) and Fig. 6 (backward, no mask), H100 SXM5, TFLOP/s
  // at 512, 1K, 2K, 4K, 8K and 16K tokens, head dims 64, 128 and 256 (backward: 64 and 128). Each
  // is cuDNN's long-sequence rate at head dim 128 (least squares over its series) times the
  // kernel's speed times its tile share at that head dimension: all 90 within 5.8 % (3.8 % but for
  // FlashAttention-3 at head dim 64 and 1K tokens, 265 TFLOP/s between 197 and 371).
  struct Series {
    AttentionKernel kernel;
    AttentionPass pass;
    double head_dim;
    double tflops[6];
  };
  const auto F = AttentionPass::Forward, B = AttentionPass::Backward;
  const auto cudnn = AttentionKernel::Flash, fa2 = AttentionKernel::Flash2, fa3 = AttentionKernel::Flash3;
  const Series series[] = {
      {cudnn, F, 128, {315, 410, 484, 518, 529, 539}}, {cudnn, B, 128, {305, 408, 465, 499, 518, 516}},
      {cudnn, F, 64, {225, 288, 334, 363, 379, 388}},  {cudnn, B, 64, {266, 348, 395, 417, 432, 433}},
      {cudnn, F, 256, {308, 391, 450, 483, 497, 509}}, {fa2, F, 64, {180, 229, 262, 284, 295, 299}},
      {fa2, F, 128, {191, 260, 298, 319, 333, 335}},   {fa2, F, 256, {208, 251, 278, 293, 297, 298}},
      {fa2, B, 64, {198, 238, 264, 279, 287, 291}},    {fa2, B, 128, {214, 260, 291, 310, 318, 322}},
      {fa3, F, 64, {197, 265, 371, 420, 460, 473}},    {fa3, F, 128, {292, 423, 521, 579, 602, 616}},
      {fa3, F, 256, {286, 427, 537, 612, 628, 642}},   {fa3, B, 64, {272, 363, 422, 453, 472, 474}},
      {fa3, B, 128, {316, 424, 501, 542, 559, 561}},
  };
  const auto rate = [](const Series& s, int i) {  // speed x share at 512 << i tokens
    const double seq = 512 << i;
    const bool causal = s.pass == AttentionPass::Forward;
    return attention_kernel_speed(s.kernel, GpuArchitecture::Hopper, s.pass, s.head_dim) *
           attention_tile_share(s.kernel, GpuArchitecture::Hopper, s.pass,
                                {causal ? (seq + 1) / 2 : seq, causal ? 0.5 : 0.0, s.head_dim});
  };
  double cudnn_rate[2];  // forward, backward
  for (int p = 0; p < 2; ++p) {
    double vs = 0, ss = 0;
    for (int i = 0; i < 6; ++i) {
      vs += series[p].tflops[i] * rate(series[p], i);
      ss += rate(series[p], i) * rate(series[p], i);
    }
    cudnn_rate[p] = vs / ss;
  }
  // 0.566 (forward) and 0.549 (backward) of the 989.4 TFLOP/s peak: the h100-sxm preset's 0.55.
  CHECK(cudnn_rate[0] / 989.4 == Approx(0.566).epsilon(0.002));
  CHECK(cudnn_rate[1] / 989.4 == Approx(0.549).epsilon(0.002));
  for (const Series& s : series)
    for (int i = 0; i < 6; ++i) {
      INFO("kernel " << static_cast<int>(s.kernel) << " pass " << static_cast<int>(s.pass) << " head dim " << s.head_dim
                     << " at " << (512 << i));
      CHECK(cudnn_rate[s.pass == AttentionPass::Forward ? 0 : 1] * rate(s, i) == Approx(s.tflops[i]).epsilon(0.058));
    }
  // Unfused attention: 1 at any length and head dimension.
  CHECK(attention_tile_share(AttentionKernel::Unfused, GpuArchitecture::Hopper, F, {64, 0.5, 64}) == 1.0);
  CHECK(attention_kernel_speed(AttentionKernel::Unfused, GpuArchitecture::Hopper, F, 64) == 1.0);
  // A 1,024-token window (Gemma 3's local layers): 8 tiles and one masked, at 0.8 of the rate.
  CHECK(attention_tile_share(cudnn, GpuArchitecture::Hopper, F, {1024, 1.0, 128}) == Approx(0.8));
}

TEST_CASE("attention kernels: between and beyond the published head dimensions", "[job_step][attention]") {
  const auto F = AttentionPass::Forward, B = AttentionPass::Backward;
  const auto H = GpuArchitecture::Hopper;
  // Linear in log2(head dim): MLA's 192 and 128 run as 160, a third of the way from 128 to 256
  // (cuDNN 1 - 0.07 x 0.322 forward, 0.9 + ... its tiles' fixed work 1 - 0.1 x 0.322).
  const double t = std::log2(160.0 / 128);
  CHECK(attention_kernel_speed(AttentionKernel::Flash, H, F, 160) == Approx(1 - 0.07 * t));
  CHECK(attention_tile_share(AttentionKernel::Flash, H, F, {1024, 0.5, 160}) == Approx(8 / (8 + 0.5 + 1 - 0.1 * t)));
  // 96 halfway (in log2) between 64 and 128: FlashAttention-3 0.90 + 0.415 x 0.27.
  CHECK(attention_kernel_speed(AttentionKernel::Flash3, H, F, 96) == Approx(0.90 + std::log2(1.5) * 0.27));
  // No backward figure at 256: 128's.
  CHECK(attention_kernel_speed(AttentionKernel::Flash, H, B, 256) == 1.0);
  CHECK(attention_kernel_speed(AttentionKernel::Flash3, H, B, 200) == Approx(1.09));
  // Outside 64-256: the nearest published.
  CHECK(attention_kernel_speed(AttentionKernel::Flash, H, F, 32) == Approx(0.71));
  CHECK(attention_kernel_speed(AttentionKernel::Flash2, H, F, 512) == Approx(0.55));
  // On Ampere FlashAttention-2 is the own kernel: 1 at head dim 128, its own ratio elsewhere.
  CHECK(attention_kernel_speed(AttentionKernel::Flash2, GpuArchitecture::Ampere, F, 64) == Approx(0.55 / 0.63));
  CHECK(attention_kernel_speed(AttentionKernel::Flash, GpuArchitecture::Ampere, B, 64) == Approx(0.55 / 0.61));

  // A layer of head dimension 64 (GPT-OSS's: 64 query heads of 64 at hidden 2,880) at 8,192
  // tokens on an H100: cuDNN at 0.71 of its rate forward, 0.83 backward, its tiles' fixed work 1.0
  // and 2.6 key tiles.
  JobModel m;
  m.shape = decoder("head-dim-64", 2, 2880, 2880, 64, 8, 64, 201088);
  m.shape.qk_norm = false;
  m.seq = 8192;
  JobLayout own;
  const ClusterSpec h100 = *find_cluster_preset("h100-sxm");
  const LayerWork w = layer_work(m, own);
  CHECK(w.attention_tiles.head_dim == 64);
  const LayerPasses p = layer_passes(m, own, h100);
  const double flops = 4.0 * (8192.0 * 8193 / 2) * 64 * 64, tiles = 4096.5 / 128, rate = 989.4e12 * 0.55;
  CHECK(p.forward.attention == Approx(flops / (rate * 0.71 * tiles / (tiles + 0.5 + 1.0))).epsilon(1e-9));
  CHECK(p.backward_input.attention == Approx(2.5 * flops / (rate * 0.83 * tiles / (tiles + 0.5 + 2.6))).epsilon(1e-9));
}

TEST_CASE("attention kernels: refused where they do not run at a known speed", "[job_step][attention]") {
  const auto on = [](AttentionKernel k, const char* preset) {
    return check_accelerator_kernels(
        [&] {
          JobLayout l;
          l.attention = k;
          return l;
        }(),
        find_cluster_preset(preset)->accelerator);
  };
  CHECK_FALSE(on(AttentionKernel::Flash3, "h100-sxm"));
  CHECK_FALSE(on(AttentionKernel::Flash3, "h800"));
  CHECK_FALSE(on(AttentionKernel::Flash2, "h100-sxm"));
  CHECK_FALSE(on(AttentionKernel::Flash2, "a100-sxm-80gb"));
  CHECK_FALSE(on(AttentionKernel::Flash2, "rtx4090"));
  CHECK_FALSE(on(AttentionKernel::Flash, "b200"));
  const auto fa3 = on(AttentionKernel::Flash3, "a100-sxm-80gb");
  REQUIRE(fa3);
  CHECK(fa3->key == "attention");
  CHECK(fa3->message ==
        "flash3 (FlashAttention-3) runs on Hopper only (H100, H800, H200); a100-sxm-80gb is ampere: flash "
        "(FlashAttention-2) would run");
  const auto fa3_b200 = on(AttentionKernel::Flash3, "b200");
  REQUIRE(fa3_b200);
  CHECK(
      fa3_b200->message ==
      "flash3 (FlashAttention-3) runs on Hopper only (H100, H800, H200); b200 is blackwell: flash (cuDNN's) would run");
  const auto fa2_b200 = on(AttentionKernel::Flash2, "gb200");
  REQUIRE(fa2_b200);
  CHECK(fa2_b200->message ==
        "flash2 (FlashAttention-2) has no published speed on Blackwell to scale gb200's attention efficiency by: "
        "flash (cuDNN's, the calibrated rate) would run");
}
