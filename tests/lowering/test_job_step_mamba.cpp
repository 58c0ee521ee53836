// Mamba-2 hybrids (docs/attention.md "Mamba-2 hybrids"): Megatron-Core's hybrid layer pattern, each layer
// one block (Mamba-2 mixer, attention, MLP, MoE), as Nemotron-H-56B has them: the kinds a pattern
// gives, the mixer's GEMMs, parameters, the SSD scan's FLOPs and bytes, memory-bound kernels,
// activations, CP all-to-all, how a chunk sums the kinds, the step's FLOPs, and the refusals.
#include <catch2/catch.hpp>

#include "job_step_fixtures.hpp"
#include "models/layer_costs.hpp"
#include "models/layout.hpp"
#include "models/model_limits.hpp"

using namespace stepsim;
using namespace stepsim::job_step_fixtures;

namespace {
// Nemotron-H-56B (scenarios/models/nemotron-h-56b.yaml).
JobModel nemotron_h_56b() {
  JobModel m;
  m.shape = decoder("nemotron-h-56b", 118, 8192, 32768, 64, 8, 128, 131072);
  m.seq = 8192;
  m.dropout = false;
  m.gated_mlp = false;
  m.squared_relu = true;
  m.mamba = {256, 64, 256, 8, 4};
  m.hybrid_pattern =
      "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-"
      "M-M-M-M-";
  return m;
}
}  // namespace

TEST_CASE("Mamba-2: a pattern's kinds, the mixer's GEMMs, parameters, the SSD scan's FLOPs and bytes, its kernels",
          "[job_step][mamba]") {
  const JobModel m = nemotron_h_56b();
  REQUIRE_FALSE(check_job_model(m));
  CHECK(pattern_layers_in(m, 'M', 0, 118) == 54);
  CHECK(pattern_layers_in(m, '*', 0, 118) == 10);
  CHECK(pattern_layers_in(m, '-', 0, 118) == 54);
  CHECK(pattern_layers_in(m, '*', 0, 8) == 1);  // "M-M-M-M*": the eighth layer attends
  // A dense model: every layer of the dense kind; each symbol its own block.
  CHECK(layer_kind(m, 0) == (kKindDense | kKindMamba | kKindMixerOnly));
  CHECK(layer_kind(m, 1) == (kKindDense | kKindMlpOnly));
  CHECK(layer_kind(m, 7) == (kKindDense | kKindMixerOnly));
  const JobModel mamba = layer_kind_model(m, layer_kind(m, 0)), attn = layer_kind_model(m, layer_kind(m, 7)),
                 mlp = layer_kind_model(m, layer_kind(m, 1));
  CHECK(mamba.every_layer_mamba());
  CHECK_FALSE(mamba.has_mlp());
  CHECK_FALSE(attn.every_layer_mamba());
  CHECK_FALSE(attn.has_mlp());
  CHECK_FALSE(mlp.has_mixer());
  JobLayout l;
  l.tp = 8;
  l.global_batch = 1;
  const LayerWork w = layer_work(mamba, l), a = layer_work(attn, l), f = layer_work(mlp, l);
  const double T = 8192, h = 8192;
  // The input projection gives z and x (256 x 64 each), B and C (8 x 256 each), dt (256): 37,120
  // columns, split by TP; the output projection reads the 16,384 of the scan. One TP collective a
  // block, so one a layer.
  REQUIRE(w.gemms.size() == 2);
  CHECK(w.gemms[0].n == 37120.0 / 8);
  CHECK(w.gemms[0].k == h);
  CHECK(w.gemms[1].n == h);
  CHECK(w.gemms[1].k == 16384.0 / 8);
  REQUIRE(f.gemms.size() == 2);
  CHECK(f.gemms[0].n == 32768.0 / 8);  // squared ReLU: two matrices
  CHECK(a.gemms.size() == 2);
  CHECK(w.tp_collectives == 1);
  CHECK(a.tp_collectives == 1);
  CHECK(f.tp_collectives == 1);
  // The SSD scan per token and head (Q 128, P 64, N 256, 8 groups of 32 heads, r = 1/32): 2 (Q N r
  // + Q P + 2 N P) = 83,968 FLOPs; forward 26 + 10 P + 8 N r + 8 Q r + 12 P N / Q = 2,298 bytes
  // (the chunk states 1,536 of them), backward 160 + 36 P + 62 N r + 32 Q r + 34 P N / Q = 7,440
  // (3.2x); 32 of the 256 heads on this GPU.
  CHECK(w.attention_flops == T * 32 * 83968);
  CHECK(w.attention_bytes == T * 32 * 2298);
  CHECK(w.attention_backward_bytes == T * 32 * 7440);
  CHECK(f.attention_flops == 0);
  CHECK(a.attention_backward_bytes == 0);
  const ClusterSpec h100 = *find_cluster_preset("h100-sxm");
  const LayerPasses pw = layer_passes(mamba, l, h100);
  const double hbm = 3.35e12 * h100.accelerator.efficiency.memory;
  CHECK(pw.forward.attention == Approx(T * 32 * 2298 / hbm).epsilon(1e-12));
  CHECK(pw.backward_input.attention == Approx(T * 32 * 7440 / hbm).epsilon(1e-12));
  // Memory-bound, per token, without SP: one norm (2 x 2 h) and one residual add (3 x 2 h) a
  // layer; the Mamba layer's convolution over x, B and C (2 x 2 x 20,480) and the norm of its gated
  // output (2 x 2 x 16,384) split by TP; the MLP layer's squared ReLU, two kernels each reading and writing the
  // 32,768 / 8 (2 x 2 x 2 x 4,096; GeLU's one kernel half that).
  CHECK(w.memory_bytes == Approx(T * (10 * h + (4 * 20480.0 + 4 * 16384) / 8)).epsilon(1e-12));
  CHECK(f.memory_bytes == Approx(T * (10 * h + 8 * 32768.0 / 8)).epsilon(1e-12));
  // Two sequences a micro-batch: the projected input (37,120 / 8) and the scan's output
  // (16,384 / 8) each copied to and from the batch-first layout (read + write, 2 B), a token;
  // the MLP layer has none.
  JobLayout two = l;
  two.micro_batch = 2;
  CHECK(layer_work(mamba, two).memory_bytes ==
        Approx(2 * T * (10 * h + (4 * 20480.0 + 4 * 16384) / 8 + 4 * (37120.0 + 16384) / 8)).epsilon(1e-12));
  CHECK(layer_work(mlp, two).memory_bytes == Approx(2 * f.memory_bytes).epsilon(1e-12));
  JobModel gelu = mlp;
  gelu.squared_relu = false;
  CHECK(layer_work(gelu, l).memory_bytes == Approx(T * (10 * h + 4 * 32768.0 / 8)).epsilon(1e-12));
  // Parameters: in_proj 8,192 x 37,120, the convolution's 4 taps and bias over 20,480 channels,
  // A_log, D and dt_bias per head, the norm's 16,384, out_proj 16,384 x 8,192, the layer's norm:
  // 438,432,512; attention 8,192 x 10,240 + 8,192 x 8,192 + a norm: 151,003,136; the MLP 2 x
  // 8,192 x 32,768 + a norm: 536,879,104. With the untied embedding and head: 56.3B.
  CHECK(w.parameters == 438432512 / 8);
  CHECK(total_parameters(m) ==
        54 * std::int64_t{438432512} + 10 * std::int64_t{151003136} + 54 * std::int64_t{536879104} +
            2 * std::int64_t{131072} * 8192 + 8192);
  CHECK(total_parameters(m) == 56324350464);
}

TEST_CASE("Mamba-2: activations, CP by heads, a chunk of three kinds, the step's FLOPs", "[job_step][mamba]") {
  const JobModel m = nemotron_h_56b();
  const JobModel mamba = layer_kind_model(m, layer_kind(m, 0)), attn = layer_kind_model(m, layer_kind(m, 7)),
                 mlp = layer_kind_model(m, layer_kind(m, 1));
  JobLayout l;
  l.global_batch = 1;
  const double T = 8192, h = 8192;
  // Per token: the block's input to its norm and the norm's output (2 + 2 h); inside, the Mamba
  // layer keeps the projected z, x, B, C, dt (2 x 37,120), the scan's output before and after the
  // gate and the norm's (3 x 2 x 16,384); the attention layer Q, K, V and the projection's input (2 x 18,432); the MLP
  // its two inner arrays (4 x 32,768).
  CHECK(static_cast<double>(layer_activation_bytes(mamba, l)) == Approx(T * (4 * h + 2 * 37120 + 6 * 16384)).margin(1));
  CHECK(static_cast<double>(layer_activation_bytes(attn, l)) == Approx(T * (4 * h + 2 * 18432)).margin(1));
  CHECK(static_cast<double>(layer_activation_bytes(mlp, l)) == Approx(T * (4 * h + 4 * 32768)).margin(1));
  // CP 2 (p2p): the attention layers ring K and V, the Mamba layers exchange heads (Megatron-Core's
  // MambaContextParallel): the projected 37,120 a token there, the scan's 16,384 back; the MLP
  // layers nothing.
  JobLayout cp = l;
  cp.cp = 2;
  const LayerWork w = layer_work(mamba, cp), a = layer_work(attn, cp), f = layer_work(mlp, cp);
  CHECK(w.cp_heads);
  CHECK(w.cp_q_bytes == T / 2 * 37120 * 2);
  CHECK(w.cp_o_bytes == T / 2 * 16384 * 2);
  CHECK_FALSE(a.cp_heads);
  CHECK(a.cp_bytes == T / 2 * 2048 * 2);
  CHECK(f.cp_bytes + f.cp_q_bytes + f.cp_o_bytes == 0);
  // Two stages of 59 layers: the first 27 Mamba, 5 attention and 27 MLP, as is the second.
  const ClusterSpec c = *find_cluster_preset("h100-sxm");
  JobLayout pl = l;
  pl.pp = 2;
  pl.global_batch = 4;
  const auto chunks = chunk_costs(m, pl, c);
  REQUIRE(chunks.size() == 2);
  CHECK(pattern_layers_in(m, 'M', 0, 59) == 27);
  CHECK(pattern_layers_in(m, '*', 0, 59) == 5);
  const LayerPasses pm = layer_passes(mamba, pl, c), pa = layer_passes(attn, pl, c), pf = layer_passes(mlp, pl, c);
  CHECK(chunks[0].forward.gemm == Approx(27 * pm.forward.gemm + 5 * pa.forward.gemm + 27 * pf.forward.gemm));
  CHECK(chunks[0].activation == 27 * pm.activation + 5 * pa.activation + 27 * pf.activation);
  // Model FLOPs a sequence, forward: a Mamba layer's projections and scan, an attention layer's
  // GEMMs and causal core (s (s + 1) / 2 pairs), an MLP's two GEMMs, the LM head; x 3 for the
  // step: 2.777e15 a sequence, where Megatron-LM's hybrid count gives 2.787e15 (its scan term 7 s
  // d_in N) and NVIDIA's benchmark README 2.816e15 (attention unhalved).
  const double s = 8192;
  const double mamba_fwd = 2 * s * h * 37120 + 2 * s * 16384 * h + s * 256 * 83968;
  const double attn_fwd = 2 * s * h * 10240 + 2 * s * 8192 * h + 2 * s * (s + 1) / 2 * (8192 + 8192);
  const double mlp_fwd = 2 * 2 * s * h * 32768, head = 2 * s * h * 131072;
  const double per_seq = 3 * (54 * mamba_fwd + 10 * attn_fwd + 54 * mlp_fwd + head);
  CHECK(step_flops(m, pl).model == Approx(4 * per_seq).epsilon(1e-12));
  CHECK(per_seq == Approx(2.777e15).epsilon(1e-3));
  // Full recompute reruns every layer's forward of its own kind: the forward but the LM head.
  JobLayout full = pl;
  full.recompute = JobRecompute::Full;
  CHECK(step_flops(m, full).hardware - step_flops(m, pl).hardware == Approx(4 * (per_seq / 3 - head)).epsilon(1e-12));
}

TEST_CASE("Mamba-2: heads and groups split by TP, heads by TP x CP; the pattern's limits; op recompute refused",
          "[job_step][mamba][errors]") {
  JobModel m = nemotron_h_56b();
  JobLayout l;
  l.tp = 8;
  l.global_batch = 1;
  // With 4 groups: the attention's 64 and 8 heads split over tp 8, the groups do not.
  JobModel four = m;
  four.mamba.groups = 4;
  auto p = check_layout(four, l, 8);
  REQUIRE(p);
  CHECK(p->key == "tp");
  CHECK(p->message ==
        "tp 8 and cp 1 do not split the 256 Mamba-2 heads and 4 groups (would fit: tp among 1, 2, 4, tp x cp "
        "among 1, 2, 4, 8, 16, 32, 64)");
  l.cp = 64;
  l.global_batch = 1;
  p = check_layout(m, l, 512);
  REQUIRE(p);
  CHECK(p->key == "cp");
  l.cp = 2;
  CHECK_FALSE(check_layout(m, l, 16));
  l.recompute = JobRecompute::Op;
  p = check_layout(m, l, 16);
  REQUIRE(p);
  CHECK(p->key == "recompute");
  const auto problem = [](const JobModel& bad) {
    const auto q = check_job_model(bad);
    REQUIRE(q);
    return q->key + ": " + q->message;
  };
  JobModel bad = m;
  bad.hybrid_pattern.pop_back();
  CHECK(problem(bad) ==
        "hybrid_override_pattern: 117 symbols for the 118 layers (one a layer, as Megatron-Core counts them)");
  bad = m;
  bad.hybrid_pattern[3] = 'A';
  CHECK(problem(bad) ==
        "hybrid_override_pattern: 'A' at position 4 is none of M (Mamba-2), * (attention), - (MLP), E (MoE)");
  bad = m;
  bad.hybrid_pattern[1] = 'E';
  CHECK(problem(bad) == "hybrid_override_pattern: has E layers: needs experts");
  bad = m;
  bad.mamba = {};
  CHECK(problem(bad) == "hybrid_override_pattern: has M layers: needs mamba");
  bad = m;
  bad.mamba.groups = 3;
  CHECK(problem(bad) ==
        "n_groups: 3 groups do not divide the 256 heads (Megatron-Core's MambaMixer shares each group's B and C "
        "among its heads)");
  bad = m;
  bad.mtp_layers = 1;
  CHECK(problem(bad) ==
        "hybrid_override_pattern: beside mla, linear_attention, sliding_window, dense_layers or mtp_layers is not "
        "modelled");
  bad = m;
  bad.hybrid_pattern.clear();
  bad.sliding_window = 4096;
  CHECK(problem(bad) == "mamba: mamba beside mla, linear_attention or sliding_window is not modelled");
}

TEST_CASE("Mamba-2: a pattern's MoE layers (Nemotron 3 Nano), their parameters and exchanges", "[job_step][mamba]") {
  // Nemotron 3 Nano 30B-A3B (scenarios/models/nemotron-3-nano-30b-a3b.yaml): 23 Mamba-2, 6
  // attention and 23 MoE layers; no dense MLP.
  JobModel m;
  m.shape = decoder("nemotron-3-nano-30b-a3b", 52, 2688, 1856, 32, 2, 128, 131072);
  m.seq = 4096;
  m.dropout = false;
  m.gated_mlp = false;
  m.experts = 128;
  m.top_k = 6;
  m.expert_ffn = 1856;
  m.shared_expert_ffn = 3712;
  m.mamba = {64, 64, 128, 8, 4};
  m.hybrid_pattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME";
  REQUIRE_FALSE(check_job_model(m));
  CHECK(pattern_layers_in(m, 'E', 0, 52) == 23);
  CHECK(dense_layers_in(m, 0, 52) == 0);
  CHECK(layer_kind(m, 1) == kKindMlpOnly);
  CHECK(layer_kind(m, 0) == (kKindMamba | kKindMixerOnly));
  // Parameters: a Mamba layer 2,688 x 10,304 + 5 x 6,144 + 3 x 64 + 4,096 + 4,096 x 2,688 + a norm
  // = 38,744,896; attention 23,399,040; an MoE layer 128 experts of 2 x 2,688 x 1,856, the router,
  // the shared expert and a norm = 1,297,468,032: 31.58B, the technical report's 31.6B.
  CHECK(total_parameters(m) == 23 * std::int64_t{38744896} + 6 * std::int64_t{23399040} +
                                   23 * std::int64_t{1297468032} + 2 * std::int64_t{131072} * 2688 + 2688);
  // An MoE layer at TP 2, EP 4: its shared expert's collective (the attention block's is another
  // layer's), its experts' exchange, the host's waits; a Mamba layer none of them.
  JobLayout l;
  l.tp = 2;
  l.dp = 4;
  l.ep = 4;
  l.global_batch = 4;
  const JobModel moe = layer_kind_model(m, layer_kind(m, 1)), mamba = layer_kind_model(m, layer_kind(m, 0));
  const LayerWork e = layer_work(moe, l), w = layer_work(mamba, l);
  CHECK(e.tp_collectives == 1);
  CHECK(e.ep_tokens == 4096.0 / 2);
  CHECK(w.ep_tokens == 0);
  CHECK(w.expert_parameters == 0);
  CHECK(e.expert_parameters == std::int64_t{128} * 2 * 2688 * 1856 / 4 / 2);
  const ClusterSpec c = *find_cluster_preset("h100-sxm");
  CHECK(layer_passes(moe, l, c).forward.ep > 0);
  CHECK(layer_passes(mamba, l, c).forward.ep == 0);
  CHECK(layer_passes(mamba, l, c).forward.host == 0);
  // Selective recompute's mlp module needs a dense MLP layer: none here, one once a - joins the
  // pattern (its dense layers are its - layers).
  JobLayout sel;
  sel.recompute = JobRecompute::Selective;
  sel.recompute_modules = kRecomputeMlp;
  const auto p = check_layout(m, sel, 1);
  REQUIRE(p);
  CHECK(p->message == "mlp recomputes a dense layer's MLP: every MLP of this model is MoE (moe or moe_act)");
  JobModel mixed = m;
  mixed.hybrid_pattern[1] = '-';
  CHECK(dense_layers_in(mixed, 0, 52) == 1);
  CHECK(layer_kind(mixed, 1) == (kKindDense | kKindMlpOnly));
  CHECK_FALSE(check_layout(mixed, sel, 1));
}

TEST_CASE("Mamba-2 without a pattern: every layer a Mamba-2 mixer and an MLP", "[job_step][mamba]") {
  JobModel m;
  m.shape = decoder("mamba2-mlp", 24, 2048, 8192, 16, 16, 128, 32000);
  m.seq = 4096;
  m.dropout = false;
  m.gated_mlp = false;
  m.mamba = {64, 64, 128, 1, 4};
  REQUIRE_FALSE(check_job_model(m));
  CHECK(m.every_layer_mamba());
  CHECK(layer_kind(m, 5) == (kKindDense | kKindMamba));
  JobLayout l;
  l.tp = 2;
  l.global_batch = 1;
  const LayerWork w = layer_work(m, l);
  // The mixer's two projections, then the MLP's two GEMMs; a collective a block.
  REQUIRE(w.gemms.size() == 4);
  CHECK(w.gemms[0].n == (2 * 4096.0 + 2 * 128 + 64) / 2);
  CHECK(w.gemms[2].n == 8192.0 / 2);
  CHECK(w.tp_collectives == 2);
  // Parameters: the mixer (2,048 x 8,512 + 5 x 4,352 + 3 x 64 + 4,096 + 4,096 x 2,048) and the MLP
  // (2 x 2,048 x 8,192), with a norm each.
  const std::int64_t mixer = 2048 * 8512 + 5 * 4352 + 3 * 64 + 4096 + 4096 * 2048, mlp = 2 * 2048 * 8192;
  CHECK(total_parameters(m) == 24 * (mixer + mlp + 2 * 2048) + 2 * std::int64_t{32000} * 2048 + 2048);
  // Its Mamba layer is its pattern twin's Mamba-2 layer and MLP layer together: the same GEMMs, and
  // the norms and residual adds of both.
  JobModel twin = m;
  twin.hybrid_pattern = std::string(48, 'M');
  for (std::size_t i = 1; i < twin.hybrid_pattern.size(); i += 2) twin.hybrid_pattern[i] = '-';
  twin.shape.layers = 48;
  const LayerWork a = layer_work(layer_kind_model(twin, layer_kind(twin, 0)), l),
                  b = layer_work(layer_kind_model(twin, layer_kind(twin, 1)), l);
  CHECK(w.gemm_flops == a.gemm_flops + b.gemm_flops);
  CHECK(w.attention_bytes == a.attention_bytes);
  CHECK(w.memory_bytes == Approx(a.memory_bytes + b.memory_bytes).epsilon(1e-12));
  CHECK(w.parameters == a.parameters + b.parameters);
  CHECK(layer_activation_bytes(m, l) == layer_activation_bytes(layer_kind_model(twin, layer_kind(twin, 0)), l) +
                                            layer_activation_bytes(layer_kind_model(twin, layer_kind(twin, 1)), l));
}
