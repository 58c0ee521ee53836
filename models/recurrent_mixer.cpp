#include "models/recurrent_mixer.hpp"

#include "models/gemm_costs.hpp"

namespace stepsim {

namespace {
// A Gated DeltaNet layer's widths, all heads (Megatron-Core's GatedDeltaNet, ssm/gated_delta_net.py;
// Qwen3-Next's Qwen3NextGatedDeltaNet): queries and keys qk wide, values and the output gate v,
// one decay and one write strength per value head; the input projection gives them all, the
// convolution runs over queries, keys and values.
struct GdnDims {
  double qk = 0, v = 0, heads = 0, dk = 0, dv = 0;
  double projected() const { return 2 * qk + 2 * v + 2 * heads; }  // q, k, v, gate z, b, a
  double convolved() const { return 2 * qk + v; }
};

// The gated delta rule's kernels (fla's chunk_gated_delta_rule, which both call), per token and
// value head, forward, in chunks of C = 64 tokens with the queries and keys repeated to the value
// heads (Yang et al. 2025, sec. 3.3; the WY representation of Yang et al. 2024, "Parallelizing
// Linear Transformers with the Delta Rule", sec. 3): the chunk's K K^T (C dk multiply-adds), its
// triangular inverse (C^2 / 3), W and U (C dk + C dv), the state pass (the state read into the
// new values and updated: 2 dk dv), the output (Q S: dk dv; the chunk's Q K^T and its product
// with the new values: C dk + C dv). Full C x C blocks: the kernels do not halve the causal ones.
constexpr double kGdnChunk = 64;
double gdn_core_flops(const GdnDims& x) {
  const double C = kGdnChunk, dk = x.dk, dv = x.dv;
  return 2 * (3 * C * dk + 2 * C * dv + 3 * dk * dv + C * C / 3);
}
// Their HBM traffic, bytes per token and value head: six kernels read the keys (and their W),
// queries, values, U and the new values (2 (6 dk + 3 dv)); they write W, U, the new values and
// the output (2 (dk + 3 dv)); the chunk's K K^T in FP32 and its inverse in BF16 written and read
// (12 C); the state at each chunk's start written once and read once (2 x 2 dk dv / C); the
// decays (FP32) and strengths read by five kernels, the decays' cumulative sum written (28).
double gdn_core_bytes(const GdnDims& x) {
  const double C = kGdnChunk, dk = x.dk, dv = x.dv;
  return 2 * (6 * dk + 3 * dv) + 2 * (dk + 3 * dv) + 12 * C + 4 * dk * dv / C + 28;
}
// The memory-bound kernels around the rule, bytes per token, all heads, as Megatron-Core's
// GatedDeltaNet.forward runs them: queries, keys and values copied channel-first for the
// convolution (.contiguous() of the transposed projection), which (with its SiLU) reads and
// writes them; queries and keys copied out of its transposed output and L2-normed (fla's l2norm:
// read and write both), then repeated to the value heads where these are more (Qwen3-Next: 16 to
// 32; read qk, write heads x dk each); the values and the output gate copied out of their strided
// views; the decays (FP32) and strengths from the projected b and a (read 2 + 2, write 4 + 2 per
// head); the gated RMSNorm reads the output and the gate and writes their product.
double gdn_memory_bytes(const GdnDims& x) {
  double b =
      2 * 2 * x.convolved() * kAct + 2 * 2 * 2 * x.qk * kAct + 2 * 2 * x.v * kAct + 10 * x.heads + 3 * x.v * kAct;
  if (x.heads * x.dk > x.qk) b += 2 * (x.qk + x.heads * x.dk) * kAct;
  return b;
}
// Kept for the backward: the convolution's input (queries, keys, values), what the delta rule's
// kernels save (queries and keys repeated to the value heads, values, the decays in FP32, the
// strengths, the chunks' inverted K K^T: 2 x 64 per head), the gate, the projected b and a, the
// rule's output and the norm's (the output projection's input).
double gdn_activation_bytes(const GdnDims& x) {
  return 2 * x.convolved() + 2 * (2 * x.heads * x.dk + x.v) + (4 + 2 + 2 * kGdnChunk) * x.heads + 2 * x.v +
         4 * x.heads + 2 * x.v + 2 * x.v;
}

RecurrentMixer gated_deltanet(const JobModel& m) {
  const auto& a = m.linear;
  const GdnDims x{static_cast<double>(a.key_heads) * a.key_head_dim,
                  static_cast<double>(a.value_heads) * a.value_head_dim, static_cast<double>(a.value_heads),
                  static_cast<double>(a.key_head_dim), static_cast<double>(a.value_head_dim)};
  RecurrentMixer r;
  r.projected = x.projected();
  r.inner = x.v;
  r.heads = x.heads;
  r.core_flops = gdn_core_flops(x);
  r.core_bytes = gdn_core_bytes(x);
  r.memory_bytes = gdn_memory_bytes(x);
  // From two sequences a micro-batch, the normed output turned back sequence-first is a copy.
  r.batch_copy_bytes = 2 * x.v * kAct;
  r.activation_bytes = gdn_activation_bytes(x);
  // The input projection, the convolution's taps, a decay's two parameters per value head
  // (A_log, dt_bias), the gated norm's weight (one head's, shared) and the output projection.
  const std::int64_t h = m.shape.hidden, qk = std::int64_t{a.key_heads} * a.key_head_dim,
                     v = std::int64_t{a.value_heads} * a.value_head_dim;
  r.parameters = h * (2 * qk + 2 * v + 2 * a.value_heads) + a.conv_kernel * (2 * qk + v) + 2 * a.value_heads +
                 a.value_head_dim + v * h;
  return r;
}

// A Mamba-2 mixer's widths, all heads (Megatron-Core's MambaMixer): the inner width (heads x
// head_dim) of the gate z and the inputs x, B and C (groups x state each), a step size per head;
// the input projection gives them all (z, x, B, C, dt), the convolution runs over x, B and C.
struct MambaDims {
  double inner = 0, bc = 0, heads = 0, head_dim = 0, state = 0, groups = 0;
  double projected() const { return 2 * inner + bc + heads; }
  double convolved() const { return inner + bc; }
};

// The SSD scan's kernels (mamba_ssm's mamba_chunk_scan_combined, which Megatron-Core's mixer
// calls), per token and head, forward, in chunks of Q = 128 tokens (Megatron-Core's chunk_size;
// Dao and Gu 2024 sec. 6, the SSD algorithm): the chunk's C B^T (Q N multiply-adds, once per group
// of H / G heads), its masked product with x (Q P), the chunk's state (B^T x: N P) and the output
// from the states before it (C h: N P); P the head dimension, N the state. Full Q x Q blocks.
constexpr double kSsdChunk = 128;
double ssd_core_flops(const MambaDims& x) {
  const double Q = kSsdChunk, P = x.head_dim, N = x.state, share = x.groups / x.heads;
  return 2 * (Q * N * share + Q * P + 2 * N * P);
}
// Their HBM traffic, bytes per token and head, counted kernel by kernel (mamba_ssm's
// ssd_combined.py, mamba_split_conv1d_scan_combined as Megatron-Core calls it: the gate z applied
// in the scan, the norm after; r = G / H): forward, the step sizes' cumulative sum (read dt, write
// it and the decays in FP32: 10); the chunk states (read x, B and the decays, write FP32 states:
// 2 P + 2 N r + 8 + 4 P N / Q), passed (read FP32, write BF16: 6 P N / Q); C B^T (read B and C,
// write the FP32 Q x Q block: 4 N r + 4 Q r); the scan (read C B^T, x, C, z, the BF16 states and
// the decays, write the gated output and the output before the gate, which the backward keeps:
// 4 Q r + 8 P + 2 N r + 2 P N / Q + 8).
double ssd_core_bytes(const MambaDims& x) {
  const double Q = kSsdChunk, P = x.head_dim, N = x.state, r = x.groups / x.heads;
  return 26 + 10 * P + 8 * N * r + 8 * Q * r + 12 * P * N / Q;
}
// Backward: the convolution rerun (read and write x, B and C: 4 P + 8 N r), the cumulative sum,
// C B^T and the states recomputed (the states passed in FP32), the gate's gradient (read dout, the
// output before the gate and z, write dz and the gated dout: 10 P), the states' gradient and its
// passing, then dx, dB, dC, d(C B^T) and the decays' gradient, each kernel reading x, dout, B or C
// again (x, B and dout five times, C four): 160 + 36 P + 62 N r + 32 Q r + 34 P N / Q, 3.2x the
// forward at Nemotron-H's widths (where FlashAttention's backward is taken as 2.5x its forward).
double ssd_core_backward_bytes(const MambaDims& x) {
  const double Q = kSsdChunk, P = x.head_dim, N = x.state, r = x.groups / x.heads;
  return 160 + 36 * P + 62 * N * r + 32 * Q * r + 34 * P * N / Q;
}

RecurrentMixer mamba2(const JobModel& m) {
  const auto& a = m.mamba;
  const double heads = a.heads, groups = a.groups, state = a.state;
  const MambaDims x{heads * a.head_dim, 2 * groups * state, heads, static_cast<double>(a.head_dim), state, groups};
  RecurrentMixer r;
  r.projected = x.projected();
  r.inner = x.inner;
  r.heads = x.heads;
  r.core_flops = ssd_core_flops(x);
  r.core_bytes = ssd_core_bytes(x);
  r.core_backward_bytes = ssd_core_backward_bytes(x);
  // The memory-bound kernels, bytes per token: the causal convolution with its SiLU
  // (causal_conv1d: reads and writes x, B and C); the RMSNorm by group of the gated output
  // (Megatron-Core's norm after the fused scan, which applies the gate, the step sizes' softplus
  // and the D skip).
  r.memory_bytes = 2 * x.convolved() * kAct + 2 * x.inner * kAct;
  // Megatron-Core's _ssm_training turns the projected input from (s, b, .) to (b, s, .) before
  // the scan and the output back after it, each .contiguous(): a view already contiguous at one
  // sequence, a copy (read and write) of each from two.
  r.batch_copy_bytes = 2 * (x.projected() + x.inner) * kAct;
  // Kept under Megatron-Core's fused path (mamba_split_conv1d_scan_combined, which reruns the
  // convolution in its backward): the projected z, x, B, C and dt, the scan's output before the
  // gate, the norm's input (the gated output) and its output (the output projection's input).
  r.activation_bytes = 2 * x.projected() + 3 * 2 * x.inner;
  // The input projection, the convolution's taps and bias, a head's A_log, D and dt_bias, the
  // gated norm's weight and the output projection (Megatron-Core's MambaMixer: no linear bias).
  const std::int64_t h = m.shape.hidden, inner = std::int64_t{a.heads} * a.head_dim,
                     bc = 2 * std::int64_t{a.groups} * a.state;
  r.parameters = h * (2 * inner + bc + a.heads) + (a.conv_kernel + 1) * (inner + bc) + 3 * a.heads + inner + inner * h;
  return r;
}
}  // namespace

std::optional<RecurrentMixer> recurrent_mixer(const JobModel& m) {
  if (m.every_layer_linear()) return gated_deltanet(m);
  if (m.every_layer_mamba()) return mamba2(m);
  return std::nullopt;
}

bool has_recurrent_mixer(const JobModel& m) { return m.every_layer_linear() || m.every_layer_mamba(); }

}  // namespace stepsim
