// Named attention kernels (layout attention: flash2, flash3; docs/job.md "Attention kernels"): their
// speed against the accelerator's own fused kernel, where they run, and what they leave alone.
#include <catch2/catch.hpp>

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
  // The FlashAttention-3 paper's Figs. 5-6 (H100 SXM5, head dim 128): FA2 0.62 of cuDNN, FA3 1.11x.
  CHECK(attention_kernel_speed(AttentionKernel::Flash2, GpuArchitecture::Hopper) == 0.62);
  CHECK(attention_kernel_speed(AttentionKernel::Flash3, GpuArchitecture::Hopper) == 1.11);
  CHECK(attention_kernel_speed(AttentionKernel::Flash, GpuArchitecture::Hopper) == 1.0);
  CHECK(attention_kernel_speed(AttentionKernel::Unfused, GpuArchitecture::Hopper) == 1.0);
  // On Ampere and Ada FlashAttention-2 is the accelerator's own kernel.
  CHECK(attention_kernel_speed(AttentionKernel::Flash2, GpuArchitecture::Ampere) == 1.0);
  CHECK(attention_kernel_speed(AttentionKernel::Flash2, GpuArchitecture::Ada) == 1.0);

  const JobModel m = llama3_8b();
  JobLayout own, fa2, fa3;
  fa2.attention = AttentionKernel::Flash2;
  fa3.attention = AttentionKernel::Flash3;
  const ClusterSpec h100 = *find_cluster_preset("h100-sxm");
  const LayerPasses p = layer_passes(m, own, h100), p2 = layer_passes(m, fa2, h100), p3 = layer_passes(m, fa3, h100);
  // The core's time (FLOP-bound) divided by the kernel's speed, forward and backward; the GEMMs,
  // the memory-bound kernels and the collectives as they were.
  REQUIRE(p.forward.attention > 0);
  CHECK(p2.forward.attention == Approx(p.forward.attention / 0.62).epsilon(1e-12));
  CHECK(p2.backward_input.attention == Approx(p.backward_input.attention / 0.62).epsilon(1e-12));
  CHECK(p3.forward.attention == Approx(p.forward.attention / 1.11).epsilon(1e-12));
  CHECK(p3.backward_input.attention == Approx(p.backward_input.attention / 1.11).epsilon(1e-12));
  CHECK(p2.forward.gemm == p.forward.gemm);
  CHECK(p2.forward.memory == p.forward.memory);
  CHECK(p2.backward_input.gemm == p.backward_input.gemm);
  CHECK(p2.backward_weight.gemm == p.backward_weight.gemm);
  // 8,192 tokens: 4 x 8,192 x 8,193 / 2 x 4,096 FLOPs at 989.4 TFLOP/s x 0.55, then / 0.62.
  const double flops = 4.0 * (8192.0 * 8193 / 2) * 4096;
  REQUIRE(h100.accelerator.peak_bf16 == 989.4e12);
  REQUIRE(h100.accelerator.efficiency.attention == 0.55);
  CHECK(p.forward.attention == Approx(flops / (989.4e12 * 0.55)).epsilon(1e-9));
  CHECK(p2.forward.attention == Approx(flops / (989.4e12 * 0.55 * 0.62)).epsilon(1e-9));
  // Same kernel, same bytes: the activations and what a fused kernel keeps do not change.
  CHECK(layer_activation_bytes(m, fa2) == layer_activation_bytes(m, own));
  // On an A100, flash2 is flash.
  const ClusterSpec a100 = *find_cluster_preset("a100-sxm-80gb");
  CHECK(layer_passes(m, fa2, a100).forward.attention == layer_passes(m, own, a100).forward.attention);
  CHECK(layer_passes(m, fa2, a100).backward_input.attention == layer_passes(m, own, a100).backward_input.attention);
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
