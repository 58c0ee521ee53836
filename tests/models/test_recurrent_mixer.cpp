// The recurrent mixers' own figures (models/recurrent_mixer.hpp), per token, worked by hand from
// the kernel counts in recurrent_mixer.cpp at the widths of the models that ship: Nemotron-H-56B's
// Mamba-2 layer (docs/attention.md "Mamba-2 hybrids": 37,120 projected columns, the scan's 2,298 bytes
// forward and 7,440 backward a token and head) and Qwen3-Next-80B-A3B's Gated DeltaNet layer.
#include <catch2/catch.hpp>

#include "models/recurrent_mixer.hpp"

using namespace stepsim;

namespace {
JobModel with_hidden(std::int64_t hidden) {
  JobModel m;
  m.shape.hidden = hidden;
  return m;
}
}  // namespace

TEST_CASE("Mamba-2 mixer at Nemotron-H-56B's widths", "[recurrent_mixer][mamba]") {
  JobModel m = with_hidden(8192);
  m.mamba = {256, 64, 256, 8, 4};  // heads, head_dim, state, groups, conv_kernel
  const auto r = recurrent_mixer(m);
  REQUIRE(r);
  CHECK(has_recurrent_mixer(m));
  // z and x (256 x 64 each), B and C (8 groups x 256 each), a step size per head.
  CHECK(r->projected == 2 * 16384 + 2 * 8 * 256 + 256);  // 37,120
  CHECK(r->inner == 16384);
  CHECK(r->heads == 256);
  // 2 (Q N G/H + Q P + 2 N P), Q 128: 2 (1,024 + 8,192 + 32,768).
  CHECK(r->core_flops == 83968);
  // Forward 26 + 10 P + 8 N r + 8 Q r + 12 P N / Q: 26 + 640 + 64 + 32 + 1,536; backward
  // 160 + 36 P + 62 N r + 32 Q r + 34 P N / Q: 160 + 2,304 + 496 + 128 + 4,352.
  CHECK(r->core_bytes == 2298);
  CHECK(r->core_backward_bytes == 7440);
  // The convolution over x, B and C read and written, the group norm's read and write: 2 B each.
  CHECK(r->memory_bytes == 2 * (16384 + 4096) * 2 + 2 * 16384 * 2);  // 147,456
  // From two sequences a micro-batch, the projection's output and the scan's copied to the
  // batch-first layout and back, read and written.
  CHECK(r->batch_copy_bytes == 2 * (37120 + 16384) * 2);  // 214,016
  // The projection (2 B a column) and three arrays of the inner width.
  CHECK(r->activation_bytes == 2 * 37120 + 6 * 16384);  // 172,544
  // in_proj, the convolution's taps and bias, A_log / D / dt_bias, the norm, out_proj.
  CHECK(r->parameters == 8192LL * 37120 + 5 * 20480 + 3 * 256 + 16384 + 16384LL * 8192);  // 438,424,320
}

TEST_CASE("Gated DeltaNet mixer at Qwen3-Next-80B-A3B's widths", "[recurrent_mixer][linear_attention]") {
  JobModel m = with_hidden(2048);
  m.linear = {16, 32, 128, 128, 4, 0};  // key heads, value heads, their dims, conv_kernel; every layer
  const auto r = recurrent_mixer(m);
  REQUIRE(r);
  // q and k (16 x 128), v and the gate (32 x 128), b and a per value head.
  CHECK(r->projected == 2 * 2048 + 2 * 4096 + 2 * 32);  // 12,352
  CHECK(r->inner == 4096);
  CHECK(r->heads == 32);
  // 2 (3 C dk + 2 C dv + 3 dk dv + C^2 / 3), C 64.
  CHECK(r->core_flops == Approx(2 * (3 * 64 * 128 + 2 * 64 * 128 + 3 * 128 * 128 + 64.0 * 64 / 3)));
  CHECK(r->core_bytes == 2304 + 1024 + 768 + 1024 + 28);  // 5,148
  CHECK(r->core_backward_bytes == 0);                     // taken as FlashAttention's, 2.5x
  // The convolution's input copied channel-first and the convolution (8,192 channels, read and
  // write each), q and k copied out of its output and L2-normed (2,048 each), both repeated to 32
  // heads, v and the gate copied out of their views, the decays and strengths, the gated norm.
  CHECK(r->memory_bytes == 32768 + 32768 + 16384 + 16384 + 24576 + 2 * 16384 + 320 + 24576);  // 180,544
  // From two sequences a micro-batch, the norm's output turned back sequence-first.
  CHECK(r->batch_copy_bytes == 2 * 4096 * 2);
  CHECK(r->activation_bytes == 2 * 8192 + 2 * (8192 + 4096) + 134 * 32 + 3 * 2 * 4096 + 4 * 32);  // 69,952
  CHECK(r->parameters == 2048LL * 12352 + 4 * (4096 + 4096) + 2 * 32 + 128 + 4096LL * 2048);      // 33,718,464
}

TEST_CASE("Attention, and a pattern's MLP layer, have no recurrent mixer", "[recurrent_mixer]") {
  JobModel m = with_hidden(4096);
  CHECK_FALSE(recurrent_mixer(m));
  CHECK_FALSE(has_recurrent_mixer(m));
  m.mamba = {128, 64, 128, 8, 4};
  m.blocks = JobModel::Blocks::Mlp;  // a hybrid pattern's `-` layer
  CHECK_FALSE(recurrent_mixer(m));
  m.blocks = JobModel::Blocks::Mixer;
  CHECK(recurrent_mixer(m));
  m.hybrid_pattern = "M*";  // a pattern model's kinds come from layer_kind_model, one at a time
  CHECK_FALSE(recurrent_mixer(m));
}
