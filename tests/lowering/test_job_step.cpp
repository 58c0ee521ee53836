// Jobs from model + cluster + layout (docs/job.md): the cost model's formulas against their
// sources, layout checks, folding, and the critical path.
#include <catch2/catch.hpp>

#include "sim/critical_path.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "job_step_bound.hpp"
#include "models/layer_costs.hpp"
#include "models/layout.hpp"
#include "schedules/lowering/job/job_step.hpp"
#include "schedules/lowering/search/layout_search.hpp"

using namespace stepsim;

namespace {

// A decoder's shape: layers, hidden, FFN width, query and key/value heads of head_dim, vocabulary.
TransformerConfig decoder(const char* name, int layers, std::int64_t hidden, std::int64_t ffn, int heads, int kv_heads,
                          int head_dim, std::int64_t vocab) {
  return {name, layers, hidden, ffn, heads, kv_heads, head_dim, vocab, /*tied_embeddings=*/false, /*qk_norm=*/true};
}

JobModel gpt3() {
  JobModel m;
  m.shape = decoder("gpt3-175b", 96, 12288, 4 * 12288, 96, 96, 128, 51200);
  m.shape.tied_embeddings = true;
  m.shape.qk_norm = false;
  m.seq = 2048;
  m.gated_mlp = false;
  return m;
}

JobStepSpec megascale(int gpus, std::int64_t gbs) {
  JobStepSpec s;
  s.model = gpt3();
  s.model.shape.heads = s.model.shape.kv_heads = 128;
  s.model.shape.head_dim = 96;
  s.model.shape.vocab = 64000;
  s.cluster = *find_cluster_preset("a100-sxm-80gb");
  JobLayout& l = s.layout;
  l.tp = 8;
  l.pp = 8;
  l.vpp = 6;
  l.dp = gpus / 64;
  l.schedule = "interleaved-1f1b";
  l.micro_batch = 1;
  l.global_batch = gbs;
  l.recompute = JobRecompute::Selective;
  l.sequence_parallel = true;
  l.attention = AttentionKernel::Unfused;
  l.overlap_grad_reduce = false;
  return s;
}

// GPT-3 175B under ZeRO-3 over 64 A100, one sequence each, full recompute (as SC21's DeepSpeed rows).
JobStepSpec gpt3_zero3_64() {
  JobStepSpec s;
  s.model = gpt3();
  s.cluster = *find_cluster_preset("a100-sxm-80gb");
  s.layout.dp = 64;
  s.layout.zero = 3;
  s.layout.global_batch = 64;
  s.layout.recompute = JobRecompute::Full;
  return s;
}

// MegaScale's GPT-3 at TP 8 without a pipeline: dp data-parallel ranks at ZeRO stage `zero`.
JobStepSpec megascale_one_stage(int dp, int zero, std::int64_t gbs) {
  JobStepSpec s = megascale(8 * dp, gbs);
  JobLayout& l = s.layout;
  l.pp = 1;
  l.vpp = 1;
  l.schedule = "1f1b";
  l.dp = dp;
  l.zero = zero;
  return s;
}

}  // namespace

TEST_CASE("hardware FLOPs with full recompute equal SC21's F = 96 B s l h^2 (1 + s/6h + V/16lh)", "[job_step]") {
  JobModel m = gpt3();
  JobLayout l;
  l.global_batch = 1536;
  l.recompute = JobRecompute::Full;
  l.attention = AttentionKernel::Unfused;
  const double B = 1536, s = 2048, L = 96, h = 12288, V = 51200;
  const double F = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
  const StepFlops f = step_flops(m, l);
  // The paper's formula drops the biases and norms, as our count does: equal to rounding.
  CHECK(f.hardware / F == Approx(1.0).epsilon(1e-12));
  // Model FLOPs: 3 passes and causal attention counted as half the square.
  const double model = 72 * B * s * L * h * h * (1 + s / (12 * h) * (s + 1) / s + V / (12 * L * h));
  CHECK(f.model / model == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("activations per layer follow Korthikanti 2022 (sec. 4, Table 2)", "[job_step]") {
  const JobModel m = gpt3();
  const ClusterSpec c = *find_cluster_preset("a100-sxm-80gb");
  JobLayout l;
  l.tp = 8;
  l.micro_batch = 1;
  l.attention = AttentionKernel::Unfused;
  const double sbh = 2048.0 * 12288;
  const double as_h = 5.0 * 96 * 2048 / 12288;
  // TP without SP: s b h (10 + 24/t + 5 a s / (h t)).
  CHECK(static_cast<double>(layer_passes(m, l, c).activation) ==
        Approx(sbh * (10 + 24.0 / 8 + as_h / 8)).epsilon(1e-9));
  l.sequence_parallel = true;  // s b h / t (34 + 5 a s / h)
  CHECK(static_cast<double>(layer_passes(m, l, c).activation) == Approx(sbh / 8 * (34 + as_h)).epsilon(1e-9));
  l.recompute = JobRecompute::Selective;  // 34 s b h / t
  CHECK(static_cast<double>(layer_passes(m, l, c).activation) == Approx(34 * sbh / 8).epsilon(1e-9));
  l.recompute = JobRecompute::Full;  // the layer input: 2 s b h / t
  CHECK(static_cast<double>(layer_passes(m, l, c).activation) == Approx(2 * sbh / 8).epsilon(1e-9));
}

namespace {
// A DeepSeek-V3-shaped MoE layer stack (scenarios/job-moe-dualpipe-h800.yaml's model, 8 layers):
// per layer attention h (q + 2 kv) + q h = 205,520,896, router h E = 1,835,008, two norms
// 14,336 (dense: 207,370,240), experts E x 3 x h x f = 11,274,289,152; embedding and head
// V h = 926,679,040 each.
// A mixture-of-experts model of `shape`: `experts` routed experts of width `expert_ffn`, top_k
// each, sequences of 4,096 tokens.
JobModel moe_model(TransformerConfig shape, int experts, int top_k, std::int64_t expert_ffn) {
  JobModel m;
  m.shape = std::move(shape);
  m.seq = 4096;
  m.experts = experts;
  m.top_k = top_k;
  m.expert_ffn = expert_ffn;
  return m;
}

JobStepSpec moe(int dp, int ep, int zero) {
  JobStepSpec s;
  s.model = moe_model(decoder("dsv3-shaped", 8, 7168, 18432, 128, 128, 56, 129280), 256, 8, 2048);
  s.cluster = *find_cluster_preset("h800");
  JobLayout& l = s.layout;
  l.pp = 2;
  l.dp = dp;
  l.ep = ep;
  l.zero = zero;
  l.global_batch = 8L * dp;
  l.recompute = JobRecompute::Selective;
  return s;
}
constexpr std::int64_t kMoeDense = 207'370'240, kMoeExperts = 11'274'289'152, kMoeEmbedding = 926'679'040;
}  // namespace

TEST_CASE("activations per layer for other shapes: GQA, SwiGLU, MoE's routed copies", "[job_step]") {
  const ClusterSpec c = *find_cluster_preset("h100-sxm");
  // Llama-3-70B: h 8192, 64 query heads and 8 key/value heads of 128 (q 8192, kv 1024), SwiGLU
  // FFN 28,672, sequence 8,192; TP 8 with SP: s b h / t x (10 + (4q + 4kv + 6 ffn) / h)
  // = s b h / 8 x (10 + 4 + 0.5 + 21) = 35.5 s b h / 8 (GPT's 34: narrower K/V, three arrays).
  JobModel llama;
  llama.shape = decoder("llama3-70b", 80, 8192, 28672, 64, 8, 128, 128256);
  llama.seq = 8192;
  llama.gated_mlp = true;
  JobLayout l;
  l.tp = 8;
  l.sequence_parallel = true;
  const double sbh = 8192.0 * 8192;
  CHECK(static_cast<double>(layer_passes(llama, l, c).activation) == Approx(35.5 * sbh / 8).epsilon(1e-12));
  // Without SP the 10 s b h outside the tensor-parallel region is on every rank.
  l.sequence_parallel = false;
  CHECK(static_cast<double>(layer_passes(llama, l, c).activation) == Approx(sbh * (10 + 25.5 / 8)).epsilon(1e-12));
  // MoE (the DeepSeek-V3-shaped layer, top 8 of expert FFN 2,048, h = q = kv = 7,168): each
  // routed copy keeps its input and output (4h each) and its SwiGLU arrays (6 x 2,048):
  // s b h x (10 + 32 + (8h + 8 x 6 x 2,048) / h) = s b h x 63.714..., at s = 4,096.
  const JobModel moe_model = moe(16, 16, 1).model;
  JobLayout one;
  const double moe_sbh = 4096.0 * 7168;
  CHECK(static_cast<double>(layer_passes(moe_model, one, c).activation) ==
        Approx(moe_sbh * (42 + (8.0 * 7168 + 48 * 2048) / 7168)).epsilon(1e-12));
}

TEST_CASE("chunks in flight on the first device, by schedule", "[job_step]") {
  JobLayout l;
  l.pp = 4;
  l.global_batch = 32;  // m = 32
  const auto in_flight = [&](const char* schedule, int v) {
    l.schedule = schedule;
    l.vpp = v;
    return chunks_in_flight(l);
  };
  CHECK(in_flight("1f1b", 1) == 4);
  CHECK(in_flight("zb-h1", 1) == 4);
  CHECK(in_flight("zb-h2", 1) == 7);
  CHECK(in_flight("fill-drain", 1) == 32);
  CHECK(in_flight("interleaved-1f1b", 3) == 15);  // Megatron: 2 (pp - 1) + (v - 1) pp warm-up + 1
  CHECK(in_flight("dualpipe", 1) == 5);
  CHECK(in_flight("dualpipe-v", 1) == 9);
  l.global_batch = 2;  // m = 2: no more than the micro-batches there are
  CHECK(in_flight("1f1b", 1) == 2);
  CHECK(in_flight("interleaved-1f1b", 3) == 6);
  l.zero = 3;  // the data-parallel lowering: one micro-batch at a time
  l.pp = 1;
  CHECK(in_flight("1f1b", 1) == 1);
}

TEST_CASE("ring collectives: alpha per step plus the ring's bytes over the path", "[job_step]") {
  PathBandwidth p{100e9, 100e9, 5 * kMicrosecond, true};
  // All-reduce of 1 GB among 8: 2 x 7/8 x 1 GB / 100 GB/s = 17.5 ms, plus 14 steps of 5 us.
  CHECK(ring_seconds(Collective::AllReduce, 8, 1e9, p) == Approx(0.0175 + 14 * 5e-6));
  CHECK(ring_seconds(Collective::AllGather, 8, 1e9, p) == Approx(0.00875 + 7 * 5e-6));
  CHECK(ring_seconds(Collective::AllReduce, 1, 1e9, p) == 0);
}

TEST_CASE("groups cross the fabric they really use", "[job_step]") {
  const ClusterSpec c = *find_cluster_preset("a100-sxm-80gb");
  JobLayout l;
  l.tp = 8;
  l.pp = 4;
  l.dp = 4;
  GroupPaths g = group_paths(c, l);
  CHECK_FALSE(g.tp.inter_node);  // TP 8 fills one node: NVSwitch at 300 GB/s x efficiency
  CHECK(g.tp.bytes_per_second == Approx(300e9 * c.accelerator.efficiency.fabric));
  CHECK(g.dp.inter_node);  // DP peers are 8 ranks apart: one per node, over the NICs
  CHECK(g.dp.bytes_per_second == Approx(25e9 * c.accelerator.efficiency.network));
  CHECK(g.pp.inter_node);
  l.tp = 1;
  l.pp = 1;
  l.dp = 8;
  CHECK_FALSE(group_paths(c, l).dp.inter_node);  // eight DP ranks in one node
  // An oversubscribed upper tier: a group spanning more than 4 nodes gets a quarter.
  ClusterSpec o = c;
  o.network.tiers = {{"leaf", 4, 1.0}, {"spine", 0, 4.0}};
  l.tp = 8;
  l.dp = 4;
  CHECK(group_paths(o, l).dp.bytes_per_second == Approx(25e9 * c.accelerator.efficiency.network));
  l.dp = 16;
  CHECK(group_paths(o, l).dp.bytes_per_second == Approx(25e9 / 4 * c.accelerator.efficiency.network));
}

TEST_CASE("ring collectives stripe over the NICs of a group's members on a node", "[job_step][collectives]") {
  // DGX A100: 8 GPUs on NVSwitch (300 GB/s each way), one 25 GB/s NIC per GPU.
  const ClusterSpec c = *find_cluster_preset("a100-sxm-80gb");
  const Efficiency& e = c.accelerator.efficiency;
  const double nic = 25e9 * e.network, fabric = 300e9 * e.fabric;
  JobLayout l;
  l.tp = 8;
  l.dp = 16;
  GroupPaths p = group_paths(c, l);
  CHECK(p.tp.ring_bytes_per_second == Approx(fabric));
  // One DP member per node: each ring's cross-node traffic through that member's NIC.
  CHECK(p.dp.ring_bytes_per_second == Approx(nic));
  // tp 2: four DP members per node, NCCL's rings striped over their four NICs.
  l.tp = 2;
  l.dp = 64;
  p = group_paths(c, l);
  CHECK(p.dp.ring_bytes_per_second == Approx(4 * nic));
  CHECK(p.dp.bytes_per_second == Approx(nic));  // a member's own link
  // tp 1: eight per node; 7/8 of a member's ring traffic crosses the fabric, whichever is slower.
  l.tp = 1;
  l.dp = 128;
  p = group_paths(c, l);
  CHECK(p.dp.ring_bytes_per_second == Approx(std::min(8 * nic, fabric * 8 / 7)));
  // A ring collective at the striped rate; an all-to-all cannot stripe: the member's own NIC.
  CHECK(ring_seconds(Collective::AllGather, 128, 1e9, p.dp) ==
        Approx(127 * 5e-6 + 127.0 / 128 * 1e9 / p.dp.ring_bytes_per_second));
  CHECK(ring_seconds(Collective::AllToAll, 128, 1e9, p.dp) == Approx(127 * 5e-6 + 127.0 / 128 * 1e9 / nic));
  // dp x cp: the data-parallel rings run among every rank holding the same weights.
  l.dp = 64;
  l.cp = 2;
  CHECK(group_paths(c, l).dp.ring_bytes_per_second == Approx(std::min(8 * nic, fabric * 8 / 7)));
  // tp 4, cp 8, dp 1: the 8 CP ranks holding the same weights sit 2 to a node on 4 nodes, so their
  // gradient rings cross nodes although dp is 1.
  l.tp = 4;
  l.cp = 8;
  l.dp = 1;
  CHECK(group_paths(c, l).dp.inter_node);
  CHECK(group_paths(c, l).dp.ring_bytes_per_second == Approx(2 * nic));
  // A framework's cap (dp_bandwidth) bounds the data-parallel rings, nothing else.
  l.tp = 1;
  l.cp = 1;
  l.dp = 128;
  l.dp_bandwidth = 21'300'000'000;
  const GroupPaths capped = group_paths(c, l);
  CHECK(capped.dp.ring_bytes_per_second == Approx(21.3e9));
  CHECK(capped.dp.bytes_per_second == p.dp.bytes_per_second);
  CHECK(capped.tp.ring_bytes_per_second == p.tp.ring_bytes_per_second);
  // RTX 4090 hosts, PCIe only: every byte a card sends crosses its own 32 GB/s lane, whether to a
  // peer through host memory or to a NIC; 8 x 25 GB/s of NICs do not help past that.
  l.dp_bandwidth = 0;
  const ClusterSpec g = *find_cluster_preset("rtx4090");
  const Efficiency& ge = g.accelerator.efficiency;
  CHECK(group_paths(g, l).dp.ring_bytes_per_second == Approx(std::min(8 * 25e9 * ge.network, 32e9 * ge.fabric)));
}

TEST_CASE("layouts that do not divide are named with what would fit", "[job_step]") {
  const JobModel m = gpt3();
  JobLayout l;
  l.tp = 5;
  l.global_batch = 8;
  auto p = check_layout(m, l, 0);
  REQUIRE(p);
  CHECK(p->key == "tp");
  CHECK(p->message.find("would fit: 1, 2, 3, 4, 6, 8") != std::string::npos);
  l.tp = 8;
  l.pp = 7;
  p = check_layout(m, l, 0);
  REQUIRE(p);
  CHECK(p->key == "pp");
  l.pp = 8;
  l.dp = 2;
  p = check_layout(m, l, 256);
  REQUIRE(p);
  CHECK(p->key == "dp");
  CHECK(p->message.find("would fit: dp 4") != std::string::npos);
}

TEST_CASE("symmetric ranks fold: 12,288 GPUs simulate one pipeline in well under a second", "[job_step]") {
  const auto t0 = std::chrono::steady_clock::now();
  const JobStepRun big = run_job_step(megascale(12288, 6144));
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(secs < 1.0);
  CHECK(big.result.simulated_devices == 8);
  CHECK(big.result.gpus == 12288);
  // The same pipeline with 32 micro-batches at DP 4 has the same ops: DP size only changes
  // what the collectives cost.
  const JobStepRun small = run_job_step(megascale(256, 128));
  CHECK(small.result.microbatches == big.result.microbatches);
  CHECK(small.result.ops == big.result.ops);
  CHECK(big.result.exposed_dp > small.result.exposed_dp);
  CHECK(big.result.step_time > small.result.step_time);
}

TEST_CASE("the critical path accounts for the whole step", "[job_step]") {
  const JobStepRun run = run_job_step(megascale(256, 768));
  Time sum = 0;
  for (const auto& x : run.result.critical_by_kind) sum += x.time;
  CHECK(sum == run.result.step_time);
  const auto path = critical_path(run.graph(), run.timeline);
  REQUIRE(!path.empty());
  CHECK(run.timeline.start[path.front().op] == 0);
  CHECK(run.timeline.done(run.graph(), path.back().op) == run.timeline.makespan);
}

TEST_CASE("bubbles grow as micro-batches per pipeline shrink (SC21 sec. 2.2)", "[job_step]") {
  JobStepSpec s = megascale(64, 192);  // one pipeline (dp 1): no data-parallel traffic
  s.layout.vpp = 1;
  s.layout.schedule = "1f1b";
  const double b192 = run_job_step(s).result.bubble;  // m = 192
  s.layout.global_batch = 16;                         // m = 16
  const double b16 = run_job_step(s).result.bubble;
  // 1F1B idles (p - 1) / (m + p - 1) of the step: 7/199 = 3.5 % and 7/23 = 30.4 %, a little
  // more for the unbalanced first and last stages (embedding, LM head).
  CHECK(b192 == Approx(7.0 / 199).margin(0.03));
  CHECK(b16 == Approx(7.0 / 23).margin(0.03));
}

namespace {
// One pipeline of GPT-3 (MegaScale shape) on 64 A100: tp 8, pp 8, dp 1, m = 32 micro-batches.
JobStepSpec one_pipeline(const std::string& schedule) {
  JobStepSpec s = megascale(64, 32);
  s.layout.vpp = 1;
  s.layout.schedule = schedule;
  return s;
}

}  // namespace

TEST_CASE("DualPipe-V in a job: two chunks per device in a V, a smaller bubble than 1F1B", "[job_step][dualpipe]") {
  const JobStepRun v = run_job_step(one_pipeline("dualpipe-v"));
  const JobStepRun one = run_job_step(one_pipeline("1f1b"));
  // 96 layers in 16 chunks of 6; device d holds chunks d and 15 - d.
  REQUIRE(v.plan.stages == 16);
  REQUIRE(v.comm.chunks.size() == 16);
  CHECK(v.comm.chunks[0].layers == 6);
  CHECK(v.comm.device_chunks[0] == std::vector<int>{0, 15});
  CHECK(v.comm.device_chunks[7] == std::vector<int>{7, 8});
  // Bounds: no faster than the busiest device's compute, no slower than 1F1B on the same layout.
  const Time bound = test::device_compute_bound(v);
  CHECK(v.result.step_time >= bound);
  CHECK(v.result.step_time < one.result.step_time);
  // 1F1B idles about (p - 1) / (m + p - 1) = 7 / 39; DualPipe-V about half of that here (its
  // bubble shrinks with W's share of the backward, as in the DeepSeek-V3 report's Table 2:
  // 0.0981 against 1F1B's 0.1946 with every GEMM costed with its own tiling).
  CHECK(one.result.bubble == Approx(7.0 / 39).margin(0.03));
  // (0.0981 while each pair's TP collectives ran after its compute; they now run beside it.)
  CHECK(v.result.bubble == Approx(0.0947).margin(0.002));
  CHECK(v.result.bubble < one.result.bubble * 0.55);
  CHECK(v.result.bubble > 0);
  // One copy of the parameters: device 0 holds the embedding and the LM head (tied, but both
  // ends of the pipeline), so at most one vocabulary matrix more than 1F1B's busiest device.
  const Bytes vocab = 2 * 64000LL * 12288 / 8;
  CHECK(v.result.memory.weights <= one.result.memory.weights + vocab);
  CHECK(v.result.memory.weights >= one.result.memory.weights);
}

TEST_CASE("DualPipe in a job: a pair's collectives run beside its compute, which gives up its share",
          "[job_step][dualpipe]") {
  // DeepSeek-V3 report sec. 3.2.1: each half's communication hides under the other half's compute.
  const JobStepRun run = run_job_step(one_pipeline("dualpipe-v"));
  const PipelineProgram& prog = *run.pipeline;
  const OpGraph& g = prog.graph;
  const Timeline& t = run.timeline;
  const double k = run.spec.cluster.accelerator.efficiency.contention;
  REQUIRE(k > 0);
  int pairs = 0, hidden = 0;
  for (OpId op = 0; op < prog.info.size(); ++op) {
    const PipeOpInfo& x = prog.info[op];
    if (x.kind != PipeOp::Overlap) continue;
    ++pairs;
    const OpId join = prog.end_of_pass(op);
    REQUIRE(join != op);
    REQUIRE(g.op_duration(join) == 0);
    const OpId comm = join - 1;  // the pair's collectives, then its join, on the device's collectives
    REQUIRE(prog.info[comm].kind == PipeOp::Comm);
    const StageCost& f = run.comm.stages[static_cast<std::size_t>(x.stage)];
    const StageCost& b = run.comm.stages[static_cast<std::size_t>(x.stage2())];
    const Time collectives = f.forward_comm + b.backward_comm;
    CHECK(g.op_duration(comm) == collectives);
    // The compute (F and a full or an input backward) is slowed by the contention share of the
    // time the two overlap.
    const auto slowed = [&](Time compute) {
      return compute + static_cast<Time>(std::ceil(k * static_cast<double>(std::min(compute, collectives))));
    };
    CHECK((g.op_duration(op) == slowed(f.forward + b.backward) ||
           g.op_duration(op) == slowed(f.forward + b.backward_input)));
    // Both start when the pair's inputs are there (the collectives may queue behind the
    // previous pair's), and the pair ends when both are done.
    CHECK(t.start[comm] >= t.start[op]);
    CHECK(t.end(g, join) == std::max(t.end(g, op), t.end(g, comm)));
    hidden += t.start[comm] == t.start[op];
  }
  CHECK(pairs > 0);
  CHECK(hidden > pairs / 2);
  // Hidden collectives leave the critical path: less exposed TP than the pairs' collectives add up to.
  Time pair_comm = 0;
  for (OpId op = 0; op < prog.info.size(); ++op)
    if (prog.info[op].kind == PipeOp::Overlap) pair_comm += g.op_duration(prog.end_of_pass(op) - 1);
  CHECK(run.result.exposed_tp < pair_comm / 2);

  // overlap: {pairs: false}: each pair's collectives after its compute, as any action's, and the
  // bubble of that model (0.0981, pinned before the pairs overlapped).
  JobStepSpec serial = one_pipeline("dualpipe-v");
  serial.layout.overlap_pairs = false;
  const JobStepRun after = run_job_step(serial);
  const PipelineProgram& sp = *after.pipeline;
  for (OpId op = 0; op < sp.info.size(); ++op) {
    if (sp.info[op].kind != PipeOp::Overlap) continue;
    const OpId comm = sp.end_of_pass(op);
    REQUIRE(sp.info[comm].kind == PipeOp::Comm);
    CHECK(after.timeline.start[comm] >= after.timeline.end(sp.graph, op));
  }
  CHECK(after.result.bubble == Approx(0.0981).margin(0.002));
  CHECK(after.result.step_time > run.result.step_time);
}

TEST_CASE("DualPipe in a job: a pair's collectives take SMs from its kernels, not from its host waits",
          "[job_step][dualpipe]") {
  // An MoE pass's host waits (moe_host) leave the GPU without kernels: collectives running then
  // slow nothing, so a pair is slowed by contention x min(its kernels, its collectives). EP
  // exchanges made slow here (1/100 of the fabric) outlast the kernels, where that differs from
  // min(compute, collectives).
  JobStepSpec s = moe(2, 2, 1);
  s.layout.schedule = "dualpipe";
  s.cluster.node.fabric_bandwidth /= 100;
  s.cluster.accelerator.efficiency.moe_host = 5e-3;
  const JobStepRun run = run_job_step(s);
  const PipelineProgram& prog = *run.pipeline;
  const OpGraph& g = prog.graph;
  const double k = s.cluster.accelerator.efficiency.contention;
  int pairs = 0, host_matters = 0;
  for (OpId op = 0; op < prog.info.size(); ++op) {
    const PipeOpInfo& x = prog.info[op];
    if (x.kind != PipeOp::Overlap) continue;
    ++pairs;
    const StageCost& f = run.comm.stages[static_cast<std::size_t>(x.stage)];
    const StageCost& b = run.comm.stages[static_cast<std::size_t>(x.stage2())];
    // 4 MoE layers a chunk, 5 ms a pass each.
    CHECK(f.forward_host == 20'000'000);
    CHECK(b.backward_host == 20'000'000);
    const Time comm = f.forward_comm + b.backward_comm, host = f.forward_host + b.backward_host;
    const auto slowed = [&](Time compute) {
      return compute + static_cast<Time>(std::ceil(k * static_cast<double>(std::min(compute - host, comm))));
    };
    const Time full = f.forward + b.backward, input = f.forward + b.backward_input;
    const Time compute = g.op_duration(op) == slowed(full) ? full : input;
    CHECK(g.op_duration(op) == slowed(compute));
    if (comm > compute - host) {
      ++host_matters;
      CHECK(g.op_duration(op) <
            compute + static_cast<Time>(std::ceil(k * static_cast<double>(std::min(compute, comm)))));
    }
  }
  CHECK(pairs > 0);
  CHECK(host_matters > 0);
}

TEST_CASE("the DP reduction under a backward slows its kernels, not its host waits", "[job_step]") {
  // With the gradients reduced over a slow network, each reduction outlasts the kernels of the
  // backward it overlaps: the contention is k x those kernels, whatever the host adds to the op.
  JobStepSpec s = moe(16, 8, 1);
  s.cluster.network.nic_bandwidth /= 100;
  const JobStepRun plain = run_job_step(s);
  s.cluster.accelerator.efficiency.moe_host = 50e-3;
  const JobStepRun waits = run_job_step(s);
  REQUIRE(waits.comm.stages[0].backward_host > 0);
  const auto dp_ops = [](const JobStepRun& r) {
    std::vector<Time> d;
    for (OpId op = 0; op < r.graph().op_count(); ++op)
      if (r.kinds[op] == JobOpKind::DpComm) d.push_back(r.graph().op_duration(op));
    return d;
  };
  const std::vector<Time> a = dp_ops(plain), b = dp_ops(waits);
  REQUIRE(a.size() >= 2);
  CHECK(a == b);
  // ... while the host waits lengthen the step, and each reduction is longer than any pass's kernels.
  CHECK(waits.result.step_time > plain.result.step_time);
  Time kernels = 0;
  for (const StageCost& c : waits.comm.stages) kernels = std::max(kernels, c.backward - c.backward_host);
  CHECK(*std::min_element(a.begin(), a.end()) > kernels);
}

TEST_CASE("the search's compute bound is below every schedule's step, and close to it", "[job_step][search]") {
  // A bound above the step prunes layouts faster than the best found: DualPipe's used to count
  // both copies of a stage running every micro-batch.
  for (const std::string schedule : {"1f1b", "zb-h1", "dualpipe", "dualpipe-v"}) {
    INFO(schedule);
    const JobStepSpec spec = one_pipeline(schedule);
    const JobStepRun run = run_job_step(spec);
    const Time bound = compute_bound(spec);
    CHECK(bound <= run.result.step_time);
    CHECK(static_cast<double>(bound) > 0.6 * static_cast<double>(run.result.step_time));
  }
}

TEST_CASE("DualPipe in a job: two weight copies per device, counted in memory", "[job_step][dualpipe]") {
  const JobStepRun dual = run_job_step(one_pipeline("dualpipe"));
  const JobStepRun one = run_job_step(one_pipeline("1f1b"));
  CHECK(dual.plan.stages == 8);
  CHECK(dual.comm.device_chunks[0] == std::vector<int>{0, 7});
  CHECK(dual.comm.device_chunks[5] == std::vector<int>{2, 5});
  // DeepSeek-V3 report sec. 3.2.1 (Table 2): DualPipe keeps 2x the parameters of 1F1B.
  CHECK(dual.result.memory.weights == 2 * one.result.memory.weights);
  CHECK(dual.result.memory.gradients == 2 * one.result.memory.gradients);
  CHECK(dual.result.memory.optimizer == 2 * one.result.memory.optimizer);
  // The two copies of each stage reduce their gradients together: DP traffic even at dp 1.
  CHECK(one.result.exposed_dp == 0);
  CHECK(dual.result.exposed_dp > 0);
  CHECK(dual.result.step_time >= test::device_compute_bound(dual));
  CHECK(dual.result.bubble < one.result.bubble);
}

TEST_CASE("CP attention is costed from the most loaded rank's causal pairs", "[job_step][cp]") {
  JobModel m = gpt3();
  m.seq = 131072;
  JobLayout l;
  l.tp = 8;
  l.cp = 4;
  const double q = 96.0 * 128, T = 131072.0 / 4;
  // Balanced chunks: s (s + 1) / (2 cp) pairs per rank, a mean context of (s + 1) / 2 keys.
  const LayerWork bal = layer_work(m, l);
  CHECK(bal.attention_flops == 4 * T * (131072.0 + 1) / 2 * q / 8);
  // Contiguous: the last rank's quarter holds 7/16 of the pairs, 1.75x the balanced share.
  l.cp_balanced = false;
  const LayerWork con = layer_work(m, l);
  CHECK(con.attention_flops / bal.attention_flops == Approx(1.75).epsilon(1e-4));
  CHECK(con.gemm_flops == bal.gemm_flops);
}

TEST_CASE("MoE: ZeRO shards an expert's state over the ranks that hold that expert (dp x cp / ep)", "[job_step]") {
  // Device 0 of pp 2 holds 4 layers and the embedding; device 1 the other 4 and the head: the
  // same counts. dense 4 x 207,370,240 + 926,679,040 = 1,756,160,000; experts per GPU
  // 4 x 11,274,289,152 / ep.
  const std::int64_t dense = 4 * kMoeDense + kMoeEmbedding;
  for (const auto& [dp, ep] : {std::pair{16, 16}, std::pair{16, 4}, std::pair{16, 1}}) {
    INFO("dp " << dp << " ep " << ep);
    const std::int64_t experts = 4 * kMoeExperts / ep;
    const double dense_shard = static_cast<double>(dense) / dp, expert_shard = static_cast<double>(experts) / (dp / ep);
    const JobMemory z1 = run_job_step(moe(dp, ep, 1)).result.memory;
    CHECK(z1.weights == 2 * (dense + experts));
    CHECK(z1.gradients == 4 * (dense + experts));
    CHECK(static_cast<double>(z1.optimizer) == Approx(12 * (dense_shard + expert_shard)).epsilon(1e-12));
    const JobMemory z2 = run_job_step(moe(dp, ep, 2)).result.memory;
    CHECK(static_cast<double>(z2.gradients) == Approx(4 * (dense_shard + expert_shard)).epsilon(1e-12));
  }
  // ep = dp: every expert on one rank of the group, nothing to shard: 12 B x 1,756,160,000 / 16
  // = 1,317,120,000 B dense and 12 B x 4 x 11,274,289,152 / 16 = 33,822,867,456 B of experts
  // (the dense share alone plus 2,113,929,216 B, when experts were divided by dp too).
  CHECK(run_job_step(moe(16, 16, 1)).result.memory.optimizer == 35'139'987'456);
}

TEST_CASE("MoE: expert gradients are reduced among the expert's replicas only", "[job_step]") {
  // With ep = dp no other rank holds a GPU's experts: the chunk's reduction is the dense part's
  // ring over dp alone; with ep 1 the experts' ring is over dp too, on the same path.
  const JobStepSpec alone = moe(16, 16, 1), shared = moe(16, 1, 1);
  const JobCommPlan a = plan_job_comm(alone), b = plan_job_comm(shared);
  const double dense = 4 * kMoeDense + kMoeEmbedding;
  const auto ring = [](int n, double bytes, const PathBandwidth& p) {
    return ring_seconds(Collective::ReduceScatter, n, bytes, p);
  };
  const auto ns = [](double s) { return static_cast<Time>(std::ceil(s * 1e9)); };
  CHECK(a.dp_reduce[0][0] == ns(ring(16, 4 * dense, a.paths.dp)));
  CHECK(b.dp_reduce[0][0] == ns(ring(16, 4 * dense, b.paths.dp) + ring(16, 4.0 * 4 * kMoeExperts, b.paths.edp)));
  // ep 4 of dp 16: groups of 4 data-parallel ranks apart, 4 of them.
  const JobCommPlan c = plan_job_comm(moe(16, 4, 1));
  CHECK(c.dp_reduce[0][0] == ns(ring(16, 4 * dense, c.paths.dp) + ring(4, 4.0 * kMoeExperts, c.paths.edp)));
  // The optimizer reads and writes 30 B per parameter of the GPU's shard.
  const auto& h800 = alone.cluster.accelerator;
  const double shard = dense / 16 + 4.0 * kMoeExperts / 16;
  CHECK(a.optimizer[0] == ns(shard * 30 / (static_cast<double>(h800.hbm_bandwidth) * h800.efficiency.memory)));
}

TEST_CASE("MoE: the token exchange's bytes go over NVLink or the network by where their experts are", "[job_step]") {
  // 4,096 tokens of h 7,168 (BF16 rows of 14,336 B), top 8 of 256 experts over ep 64 on nodes
  // of 8 (8 EP nodes, 32 experts each); 200 GB/s inside a node, 50 GB/s out of it, no latency.
  JobModel m = moe(64, 64, 1).model;
  JobLayout l;
  l.ep = 64;
  GroupPaths p;
  p.ep = {50e9, 50e9, 0, true};
  p.ep_intra = {200e9, 200e9, 0, false};
  p.ep_per_node = 8;
  // All-to-all: 7/64 of the 8 copies to the node's other members, 56/64 out of it:
  // 4,096 x 8 x 14,336 x 56/64 = 411,041,792 B at 50 GB/s = 8.221 ms (the NVLink share,
  // 51,380,224 B, takes 0.257 ms beside it). Before, all 63/64 went at the network's rate.
  CHECK(ep_leg_seconds(m, l, p, 4096, 2) == Approx(411'041'792 / 50e9).epsilon(1e-12));
  // Per node (DeepEP): once to each remote node holding one of the 8 experts. A node misses a
  // token with probability (224 x 223 x ... x 217) / (256 x 255 x ... x 249) = 0.338168:
  // 7 x 0.661832 = 4.632821 remote nodes, 272,040,406 B = 5.441 ms; inside each node once to
  // every other GPU holding one of them (DeepEP's is_token_in_rank), a GPU of 4 experts missed
  // with probability (252 x ... x 245) / (256 x ... x 249) = 0.880066: 8 nodes x 7 x 0.119934,
  // 394,381,764 B at 200 GB/s = 1.972 ms beside it.
  l.ep_dispatch = EpDispatch::PerNode;
  CHECK(ep_leg_seconds(m, l, p, 4096, 2) == Approx(4096 * 4.63282050 * 14336 / 50e9).epsilon(1e-8));
  // Node-limited to 4 (DeepSeek-V3): the 8 experts from the 128 of 4 nodes, each missed with
  // probability (96 x ... x 89) / (128 x ... x 121) = 0.092747; 4 x 7/8 of them remote:
  // 3.175385 nodes, 3.729 ms (inside: 4 x 7 x 0.229980 GPUs, 1.891 ms). In FP8 (1 + 4/128 B per
  // element) both shares shrink: 1.923 ms out, 0.975 ms inside.
  m.node_limit = 4;
  CHECK(ep_leg_seconds(m, l, p, 4096, 2) == Approx(4096 * 3.17538456 * 14336 / 50e9).epsilon(1e-8));
  CHECK(ep_leg_seconds(m, l, p, 4096, 1 + 4.0 / 128) ==
        Approx(4096 * 3.17538456 * 7168 * (1 + 4.0 / 128) / 50e9).epsilon(1e-8));
  // A limit of one node: every token to one node, 7/8 of the time a remote one: 1.028 ms out;
  // there to each other GPU holding one of the 8 of its 32 experts, a GPU of 4 missed with
  // probability (24 x 23 x 22 x 21) / (32 x 31 x 30 x 29) = 0.295495: 7 x 0.704505 copies, not
  // the 7 of the top_k's (the all-to-all's), 289,581,000 B at 200 GB/s = 1.448 ms sets the time.
  m.node_limit = 1;
  CHECK(ep_leg_seconds(m, l, p, 4096, 2) == Approx(4096 * 7 * 0.70450501 * 14336 / 200e9).epsilon(1e-8));
  p.ep_intra.bytes_per_second = 400e9;
  CHECK(ep_leg_seconds(m, l, p, 4096, 2) == Approx(4096 * 0.875 * 14336 / 50e9).epsilon(1e-12));
  p.ep_intra.bytes_per_second = 200e9;
  // Inside one node: per node, once to each GPU holding one of the token's experts, a GPU of 32
  // missed with probability 0.338168: 7 x 0.661832 copies, 272,040,406 B at 200 GB/s =
  // 1.360 ms; the all-to-all sends all 7/8 of the 8 copies, 411,041,792 B = 2.055 ms.
  l.ep = 8;
  p.ep = p.ep_intra;
  CHECK(ep_leg_seconds(m, l, p, 4096, 2) == Approx(4096 * 7 * 0.66183150 * 14336 / 200e9).epsilon(1e-8));
  l.ep_dispatch = EpDispatch::AllToAll;
  CHECK(ep_leg_seconds(m, l, p, 4096, 2) == Approx(411'041'792 / 200e9).epsilon(1e-12));
  // Latency: ep - 1 steps of the path's.
  p.ep.step_latency = 5 * kMicrosecond;
  CHECK(ep_leg_seconds(m, l, p, 4096, 2) == Approx(411'041'792 / 200e9 + 7 * 5e-6).epsilon(1e-12));
}

TEST_CASE("MoE block alone: the layer's MoE parts, as Megatron-LM's moe_perf benchmark times them", "[job_step]") {
  // Mixtral-like (the benchmark's proxy): 4,096 tokens per GPU of h 4,096, 8 experts of 14,336,
  // top 2, GeLU, EP 8 on one node. An accelerator of 1 PFLOP/s and 2 TB/s at efficiency 1, its
  // GEMMs untiled; NVLink 400 GB/s at efficiency 1 without latency.
  JobModel m = moe_model(decoder("mixtral-like", 1, 4096, 14336, 8, 8, 512, 32000), 8, 2, 14336);
  m.gated_mlp = false;
  ClusterSpec c = *find_cluster_preset("h100-sxm");
  c.accelerator.peak_bf16 = 1e15;
  c.accelerator.hbm_bandwidth = 2'000'000'000'000;
  c.accelerator.efficiency = {1, 1, 1, 1, 1, 0};
  c.accelerator.tiling.sms = 0;
  c.node.fabric_bandwidth = 400'000'000'000;
  c.node.fabric_latency = 0;
  JobLayout l;
  l.dp = 8;
  l.ep = 8;
  l.global_batch = 8;
  const LayerPasses b = moe_block_passes(m, l, c);
  // Each expert's 8,192 rows (4,096 x 2 x 8 / 8) through h -> 14,336 -> h: 2 x 2 x 8,192 x
  // 14,336 x 4,096 FLOPs = 1.924 ms, compute-bound; the router (4,096 x 4,096 by 8 columns)
  // reads its 33,685,504 B: 16.8 us.
  const double experts = 4.0 * 8192 * 14336 * 4096 / 1e15, router = 33'685'504 / 2e12;
  CHECK(b.forward.gemm == Approx(experts + router).epsilon(1e-9));
  CHECK(b.backward_weight.gemm == Approx(experts + router).epsilon(1e-9));
  // Memory-bound: GeLU reads and writes 8,192 x 14,336 BF16 (469,762,048 B); the permute and
  // unpermute (3 top_k + 1) rows of 8,192 B per token (234,881,024 B); 1.5x backward.
  CHECK(b.forward.memory == Approx((469'762'048 + 234'881'024) / 2e12).epsilon(1e-12));
  CHECK(b.backward_input.memory == Approx(1.5 * (469'762'048 + 234'881'024) / 2e12).epsilon(1e-12));
  // Dispatch and combine: 7/8 of the 8,192 copies of 8,192 B each, 58,720,256 B per leg over
  // NVLink, each way in both passes; no attention, no TP.
  CHECK(b.forward.ep == Approx(2 * 58'720'256 / 400e9).epsilon(1e-12));
  CHECK(b.backward_input.ep == b.forward.ep);
  CHECK(b.forward.attention == 0);
  CHECK(b.forward.tp == 0);
  // The block is the layer less its attention block: every MoE GEMM and exchange is the layer's.
  const LayerPasses layer = layer_passes(m, l, c);
  CHECK(layer.forward.ep == b.forward.ep);
  CHECK(layer.forward.gemm > b.forward.gemm);
  CHECK(layer.forward.memory > b.forward.memory);
  // TP 2 with SP (unfolded): the block's one all-gather + reduce-scatter pair of the layer's two.
  l.tp = 2;
  l.dp = 4;
  l.ep = 4;
  l.sequence_parallel = true;
  const LayerPasses tp2 = moe_block_passes(m, l, c);
  CHECK(tp2.forward.tp == Approx(layer_passes(m, l, c).forward.tp / 2).epsilon(1e-12));
  CHECK(tp2.forward.tp > 0);
  // A dense model has no MoE block.
  m.experts = 0;
  const LayerPasses none = moe_block_passes(m, l, c);
  CHECK(none.forward.compute() + none.forward.comm() + none.backward_input.compute() == 0);
}

TEST_CASE("MoE: the host time each pass of the block exposes", "[job_step]") {
  // 1.5 ms a pass: once forward and once backward (the weight gradient's pass waits on nothing),
  // twice backward when the backward reruns the block (full recompute, the `moe` module); not in
  // the block alone (the benchmark hides it), not in a dense layer.
  JobModel m = moe_model(decoder("mixtral-like", 1, 4096, 14336, 8, 8, 512, 32000), 8, 2, 14336);
  ClusterSpec c = *find_cluster_preset("h100-sxm");
  JobLayout l;
  l.dp = 8;
  l.ep = 8;
  l.global_batch = 8;
  const LayerPasses before = layer_passes(m, l, c);
  c.accelerator.efficiency.moe_host = 1.5e-3;
  const LayerPasses with = layer_passes(m, l, c);
  CHECK(with.forward.compute() - before.forward.compute() == Approx(1.5e-3).epsilon(1e-9));
  CHECK(with.backward_input.compute() - before.backward_input.compute() == Approx(1.5e-3).epsilon(1e-9));
  CHECK(with.backward_weight.compute() == before.backward_weight.compute());
  CHECK(with.forward.host == 1.5e-3);
  CHECK(moe_block_passes(m, l, c).forward.host == 0);
  l.recompute = JobRecompute::Selective;
  l.recompute_modules = kRecomputeMoe;
  CHECK(layer_passes(m, l, c).backward_input.host == Approx(3e-3));
  l.recompute = JobRecompute::Full;
  l.recompute_modules = 0;
  CHECK(layer_passes(m, l, c).backward_input.host == Approx(3e-3));
  l.recompute = JobRecompute::None;
  m.experts = 0;
  CHECK(layer_passes(m, l, c).forward.host == 0);
}

TEST_CASE("MoE: device-limited routing and fused token shuffles", "[job_step]") {
  // DeepSeek-like: 32 experts of 2,048 over ep 8 in one node (4 a GPU), top 8. Unlimited, a GPU
  // misses a token with probability (24 x 23 x 22 x 21) / (32 x 31 x 30 x 29) = 0.295495: the
  // token reaches 8 x 0.704505 = 5.636 ranks. Limited to 4 devices (the router's 8 groups of 4
  // experts, 4 chosen): each GPU with 4/8, 4 ranks.
  JobModel m = moe_model(decoder("dsv3-like", 1, 7168, 18432, 8, 8, 896, 32000), 32, 8, 2048);
  TokenReceipt r = per_node_receipt(m, 8, 8);
  CHECK(r.gpu == Approx(0.70450501).epsilon(1e-8));
  CHECK(r.ranks() == Approx(8 * 0.70450501).epsilon(1e-8));
  m.device_limit = 4;
  r = per_node_receipt(m, 8, 8);
  CHECK(r.gpu == 0.5);
  CHECK(r.node == 1);
  CHECK(r.ranks() == 4);
  // Over 16 ranks on 2 nodes, 3 devices: a GPU with 3/16; a node missed when none of its 8 GPUs
  // is drawn, (8 x 7 x 6) / (16 x 15 x 14) = 0.1.
  m.device_limit = 3;
  r = per_node_receipt(m, 16, 8);
  CHECK(r.gpu == Approx(3.0 / 16).epsilon(1e-12));
  CHECK(r.node == Approx(0.9).epsilon(1e-12));
  CHECK(r.ranks() == Approx(3).epsilon(1e-12));
  // Over 12 ranks, 8 and 4 on two nodes: the token reaches 3 of the 12, not 3/12 of 16.
  r = per_node_receipt(m, 12, 8);
  CHECK(r.ranks() == Approx(3).epsilon(1e-12));
  m.device_limit = 0;
  r = per_node_receipt(m, 12, 8);  // 32 experts over 12 ranks, unlimited: 12 x P(a GPU is drawn)
  CHECK(r.ranks() == Approx(12 * r.gpu).epsilon(1e-12));
  m.device_limit = 3;
  // The exchange in one node at 200 GB/s: 7 x 4/8 copies of the 4,096 tokens' 14,336 B rows
  // (3.5 x 58,720,256 B = 205,520,896 B) against the unlimited draw's 7 x 0.704505.
  JobLayout l;
  l.dp = 8;
  l.ep = 8;
  l.global_batch = 8;
  l.ep_dispatch = EpDispatch::PerNode;
  GroupPaths p;
  p.ep = p.ep_intra = {200e9, 200e9, 0, false};
  p.ep_per_node = 8;
  m.device_limit = 4;
  CHECK(ep_leg_seconds(m, l, p, 4096, 2) == Approx(205'520'896 / 200e9).epsilon(1e-12));
  // The shuffles of one layer's 4,096 tokens (rows of 14,336 B), unfused (3 x 8 + 1 rows a
  // token), fused with DeepEP (from the 4 rows received a token to its 8 copies and back: 2 x 12)
  // and fused with the all-to-all (the 4,096 rows to their copies and back, 2 x 9; with 4
  // experts a GPU the received rows sorted by expert and back, 4 x 8 more).
  // Backward: unfused 1.5 x the forward, as any memory-bound kernel; fused each kernel's transpose
  // (as many bytes) and the unpermute's 8 copies read again for the probabilities' gradient.
  const double row = 4096.0 * 14336;
  CHECK(layer_work(m, l, 1, 8).permute_bytes == Approx(25 * row).epsilon(1e-12));
  CHECK(layer_work(m, l, 1, 8).permute_backward_bytes == Approx(37.5 * row).epsilon(1e-12));
  l.permute_fusion = true;
  CHECK(layer_work(m, l, 1, 8).permute_bytes == Approx(24 * row).epsilon(1e-12));
  CHECK(layer_work(m, l, 1, 8).permute_backward_bytes == Approx(32 * row).epsilon(1e-12));
  m.device_limit = 0;
  CHECK(layer_work(m, l, 1, 8).permute_bytes == Approx(2 * (8 * 0.70450501 + 8) * row).epsilon(1e-8));
  l.ep_dispatch = EpDispatch::AllToAll;
  CHECK(layer_work(m, l, 1, 8).permute_bytes == Approx((18 + 32) * row).epsilon(1e-12));
  CHECK(layer_work(m, l, 1, 8).permute_backward_bytes == Approx((26 + 32) * row).epsilon(1e-12));
  // The input-gradient pass costs them so: at 2 TB/s and efficiency 1, 58 rows where 1.5 x 50 were.
  ClusterSpec c = *find_cluster_preset("h100-sxm");
  c.accelerator.hbm_bandwidth = 2'000'000'000'000;
  c.accelerator.efficiency = {1, 1, 1, 1, 1, 0};
  const double fused = layer_passes(m, l, c).backward_input.memory;
  l.permute_fusion = false;
  const double unfused = layer_passes(m, l, c).backward_input.memory;
  CHECK(unfused - fused == Approx((1.5 * (25 + 32) - 58) * row / 2e12).epsilon(1e-9));
}

TEST_CASE("MoE: an EP group spanning nodes has its members per node from the layout", "[job_step]") {
  const ClusterSpec c = *find_cluster_preset("h800");
  JobLayout l;
  l.dp = 64;
  l.ep = 64;
  GroupPaths g = group_paths(c, l);
  CHECK(g.ep.inter_node);
  CHECK(g.ep_per_node == 8);
  CHECK_FALSE(g.ep_intra.inter_node);
  CHECK(g.ep_intra.bytes_per_second == Approx(200e9 * c.accelerator.efficiency.fabric));
  l.tp = 2;  // EP members two GPUs apart: four on a node
  CHECK(group_paths(c, l).ep_per_node == 4);
  l.tp = 8;  // a whole node per member
  CHECK(group_paths(c, l).ep_per_node == 1);
  l.tp = 1;
  l.ep = 4;  // the group inside one node
  CHECK(group_paths(c, l).ep_per_node == 4);
  CHECK_FALSE(group_paths(c, l).ep.inter_node);
}

TEST_CASE("MoE: a shared expert is a dense MLP every token goes through", "[job_step]") {
  // DeepSeek-V3's one shared expert of 2,048 on the 8-layer shape: 3 x 7,168 x 2,048 =
  // 44,040,192 more parameters per layer, held as dense ones (replicated over dp, not ep).
  const JobStepSpec base = moe(16, 16, 1);
  JobModel shared = base.model;
  shared.shared_expert_ffn = 2048;
  CHECK(total_parameters(shared) - total_parameters(base.model) == 8 * 44'040'192);
  JobLayout l = base.layout;
  const LayerWork a = layer_work(base.model, l), b = layer_work(shared, l);
  CHECK(b.expert_parameters == a.expert_parameters);
  CHECK(b.parameters - a.parameters == 44'040'192);
  // Forward GEMMs: T x 4,096 x 7,168 in (gate and up), T x 7,168 x 2,048 out, T = 4,096 tokens:
  // 2 x 4,096 x 7,168 x 2,048 x 3 = 360,777,252,864 FLOPs more.
  CHECK(b.gemm_flops - a.gemm_flops == Approx(360'777'252'864.0).epsilon(1e-12));
  // Kept activations without recompute: its gate and up outputs and their product, 3 x 2 B x
  // 2,048 per token: 4,096 x 12,288 = 50,331,648 B per layer.
  l.recompute = JobRecompute::None;
  CHECK(layer_activation_bytes(shared, l) - layer_activation_bytes(base.model, l) == 50'331'648);
  // Split by TP as a dense MLP: at tp 2 each GPU holds and computes half.
  l.tp = 2;
  CHECK(layer_work(shared, l).parameters - layer_work(base.model, l).parameters == 44'040'192 / 2);
  CHECK(layer_work(shared, l).gemm_flops - layer_work(base.model, l).gemm_flops ==
        Approx(360'777'252'864.0 / 2).epsilon(1e-12));
}

TEST_CASE("MoE: dense first layers cost as dense layers, in the first chunks", "[job_step]") {
  // The 8-layer shape with its first 2 layers dense (MLP of 18,432): a dense layer holds
  // 4 x 7,168^2 + 2 x 7,168 + 3 x 7,168 x 18,432 = 601,896,960 parameters, an MoE layer
  // 207,370,240 + 11,274,289,152.
  JobStepSpec s = moe(16, 16, 1);
  const JobModel base = s.model;
  s.model.dense_layers = 2;
  CHECK(total_parameters(s.model) - total_parameters(base) == 2 * (601'896'960 - std::int64_t{11'481'659'392}));
  // pp 2: chunk 0 holds layers 0-3 (two dense), chunk 1 layers 4-7; each GPU 1/16 of the experts.
  const auto before = chunk_costs(base, s.layout, s.cluster), after = chunk_costs(s.model, s.layout, s.cluster);
  CHECK(after[0].expert_parameters == 2 * std::int64_t{704'643'072});
  CHECK(after[1].expert_parameters == 4 * std::int64_t{704'643'072});
  CHECK(after[0].parameters - before[0].parameters == 2 * (601'896'960 - 207'370'240 - 704'643'072));
  CHECK(after[1].parameters == before[1].parameters);
  // Dense layers exchange no tokens: chunk 0 has two layers' all-to-alls, chunk 1 four.
  CHECK(after[0].forward.ep == Approx(before[0].forward.ep / 2).epsilon(1e-12));
  CHECK(after[1].forward.ep == before[1].forward.ep);
  // Model FLOPs: 2 layers' GEMMs at the dense MLP's width instead of the routed and router ones.
  JobLayout one = s.layout;
  one.ep = 1;
  const double dense_gemm = layer_work(dense_layer_model(s.model), one).gemm_flops;
  const double moe_gemm = layer_work(base, one).gemm_flops;
  CHECK(step_flops(s.model, s.layout).model - step_flops(base, s.layout).model ==
        Approx(3.0 * static_cast<double>(s.layout.global_batch) * 2 * (dense_gemm - moe_gemm)).epsilon(1e-9));
  // ZeRO-3 gathers each layer's own weights: a dense layer 15/16 x 2 B x 601,896,960, an MoE
  // layer (ep = dp: its experts on no other rank) 15/16 x 2 B x 207,370,240.
  s.layout.pp = 1;
  s.layout.zero = 3;
  const JobStepRun run = run_job_step(s);
  const auto& units = run.fsdp_plan.units;
  REQUIRE(units.size() == 10);  // embedding, 8 layers, head
  CHECK(units[1].gather_bytes == 1'128'556'800);
  CHECK(units[2].gather_bytes == 1'128'556'800);
  CHECK(units[3].gather_bytes == 388'819'200);
  CHECK(units[1].forward < units[3].forward);
}

TEST_CASE("ZeRO-3 regather: a recomputed layer's weights gathered again before its backward", "[job_step]") {
  JobStepSpec s = gpt3_zero3_64();
  const JobStepRun kept = run_job_step(s);
  s.layout.zero3_fetch = Zero3Fetch::Module;  // DeepSpeed's hooks fetch again for the rerun forward
  const JobStepRun again = run_job_step(s);
  const auto& u = again.fsdp_plan.units;
  REQUIRE(u.size() == 98);         // embedding, 96 layers, head
  CHECK(u.front().regather == 0);  // the embedding and head are not recomputed
  CHECK(u.back().regather == 0);
  // Every module but the layer's last, the MLP's output projection (4 h^2 of the layer's 12 h^2
  // and its norms), whose backward follows its rerun at once: two thirds of the layer's gather.
  const double h = 12288, layer = static_cast<double>(layer_work(s.model, s.layout).parameters);
  CHECK(layer == Approx(12 * h * h).epsilon(1e-3));
  Bytes extra = 0;
  for (std::size_t i = 1; i + 1 < u.size(); ++i) {
    CHECK(static_cast<double>(u[i].regather_bytes) / static_cast<double>(u[i].gather_bytes) ==
          Approx((layer - 4 * h * h) / layer).epsilon(1e-6));
    CHECK(u[i].regather > 0);
    extra += u[i].regather_bytes;
  }
  // Per card and step: that much more per micro-batch, on the same link.
  CHECK(again.fsdp->bytes_per_card - kept.fsdp->bytes_per_card == extra * s.layout.microbatches());
  CHECK(again.result.step_time > kept.result.step_time);
  // Gathered by module, a GPU holds the MLP's two projections (8 h^2 weights, 2 B each) and the
  // largest one's gradients (4 h^2, FP32 here), where by layer it holds two layers (24 h^2 of
  // them) and one layer's gradients (12 h^2): 64 h^2 bytes fewer, nothing else changed.
  CHECK(kept.result.memory.buffers - again.result.memory.buffers == Approx(2 * (2 * layer - 8 * h * h) + 4 * (layer - 4 * h * h)));
  CHECK(kept.result.memory.buffers - again.result.memory.buffers == Approx(64 * h * h).epsilon(1e-3));
  CHECK(kept.result.memory.total() - again.result.memory.total() == kept.result.memory.buffers - again.result.memory.buffers);
  // Only the first two layers recomputed: the others gather once before their backward.
  s.layout.recompute_layers = 2;
  const JobStepRun some = run_job_step(s);
  CHECK(some.fsdp_plan.units[2].regather > 0);
  CHECK(some.fsdp_plan.units[3].regather == 0);
  // An MoE layer's modules have no single last one: its whole weights are gathered again.
  JobStepSpec m = moe(16, 16, 1);
  m.layout.pp = 1;
  m.layout.zero = 3;
  m.layout.recompute = JobRecompute::Full;
  m.layout.zero3_fetch = Zero3Fetch::Module;
  const JobStepRun moe_run = run_job_step(m);
  CHECK(moe_run.fsdp_plan.units[3].regather_bytes == moe_run.fsdp_plan.units[3].gather_bytes);
  // A framework's setting, so it stays set when a search tries zero 0-2: those layouts keep their
  // weights whole and gather nothing.
  JobStepSpec z1 = m;
  z1.layout.zero = 1;
  CHECK_FALSE(check_layout(z1.model, z1.layout, 0));
  z1.layout.zero3_fetch = Zero3Fetch::Layer;
  const Time without = run_job_step(z1).result.step_time;
  z1.layout.zero3_fetch = Zero3Fetch::Module;
  CHECK(run_job_step(z1).result.step_time == without);
}

TEST_CASE("ZeRO-3 keeping the gathered weights: one gather a layer, the whole model held", "[job_step]") {
  // FSDP reshards each layer after its forward and gathers it again for its backward;
  // reshard_after_forward=False keeps it.
  JobStepSpec s = gpt3_zero3_64();
  s.layout.zero3_fetch = Zero3Fetch::Module;  // no regather either, once kept
  const JobStepRun again = run_job_step(s);
  s.layout.keep_gathered = true;
  const JobStepRun kept = run_job_step(s);
  const auto gathers = [](const JobStepRun& r) {
    return std::count_if(r.fsdp->info.begin(), r.fsdp->info.end(),
                         [](const DpOpInfo& x) { return x.kind == DpOp::Gather; });
  };
  CHECK(gathers(again) == 2 * 98);  // 98 units (embedding, 96 layers, head): before each forward and backward
  CHECK(gathers(kept) == 98);       // before each forward only
  // The bytes: each layer's gather once, no regather.
  Bytes once = 0;
  for (const auto& u : kept.fsdp_plan.units) once += u.gather_bytes + u.reduce_bytes;
  CHECK(kept.fsdp->bytes_per_card == once);
  CHECK(kept.result.step_time < again.result.step_time);
  // Memory: every layer's weights gathered (2 B a parameter of the GPU's: 175B at TP 1) and one
  // layer's gradients (FP32), where gathering by module held the MLP's two projections (8 h^2)
  // and the largest one's gradients (4 h^2); the shards as they were.
  const double params = static_cast<double>(total_parameters(s.model));
  const double layer = static_cast<double>(layer_work(s.model, s.layout).parameters);
  const JobMemory& a = again.result.memory;
  const JobMemory& b = kept.result.memory;
  CHECK(b.weights == a.weights);
  CHECK(b.gradients == a.gradients);
  CHECK(b.optimizer == a.optimizer);
  CHECK(static_cast<double>(b.buffers - a.buffers) ==
        Approx(2 * params + 4 * layer - (2 * 8 * 12288.0 * 12288 + 4 * 4 * 12288.0 * 12288)).epsilon(1e-6));
  // A framework's setting: zero 0-2, which gather nothing per layer, ignore it.
  JobStepSpec z1 = s;
  z1.layout.zero = 1;
  z1.layout.dp = 8;
  z1.layout.tp = 8;
  const JobStepRun with = run_job_step(z1);
  z1.layout.keep_gathered = false;
  CHECK(run_job_step(z1).result.step_time == with.result.step_time);
  CHECK(run_job_step(z1).result.memory.total() == with.result.memory.total());
}

TEST_CASE("uneven chunks: the pipeline's ends set, the other chunks an equal share", "[job_step]") {
  JobLayout l;
  l.tp = 8;
  l.pp = 16;
  l.vpp = 8;
  l.schedule = "interleaved-1f1b";
  l.first_chunk_layers = l.last_chunk_layers = 0;  // Llama 3 405B (paper sec. 3.3.2)
  std::vector<int> n = chunk_layer_counts(126, l);
  REQUIRE(n.size() == 128);
  CHECK(n.front() == 0);
  CHECK(n.back() == 0);
  CHECK(std::count(n.begin(), n.end(), 1) == 126);
  CHECK_FALSE(check_layer_split(126, l));
  l.vpp = 1;
  l.schedule = "1f1b";
  l.first_chunk_layers = l.last_chunk_layers = 7;
  n = chunk_layer_counts(126, l);
  CHECK(n == std::vector<int>{7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7});
  l.last_chunk_layers = -1;  // only the first set: 119 over 15 chunks does not share evenly
  auto p = check_layer_split(126, l);
  REQUIRE(p);
  CHECK(p->key == "first_chunk_layers");
  CHECK(p->message ==
        "the 126 layers less 7 at the ends leave 119 for the other 15 chunks: not an equal share (would fit: ends "
        "holding 6, 21, 36, 51, 66, 81, 96, 111 layers together)");
  l.first_chunk_layers = 6;
  CHECK(chunk_layer_counts(126, l) == std::vector<int>{6, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8});
  l.first_chunk_layers = 120;
  p = check_layer_split(126, l);
  REQUIRE(p);
  CHECK(p->message == "120 of the 126 layers at the ends leave 6 for the other 15 chunks: fewer than one each");
  l.pp = 2;
  l.first_chunk_layers = l.last_chunk_layers = 50;
  p = check_layer_split(96, l);
  REQUIRE(p);
  CHECK(p->message == "the two chunks hold 50 + 50 layers but the model has 96");
  l.pp = 1;
  p = check_layer_split(96, l);
  REQUIRE(p);
  CHECK(p->message == "sets a pipeline end's layers but the model is one chunk (pp x virtual_stages = 1)");

  // A chunk of no layers holds the embedding (or the head) alone; the middle devices do all the
  // layers' work, so the step is slower than the even split of the same model and cluster.
  JobStepSpec s = megascale(256, 128);
  s.layout.vpp = 1;
  s.layout.schedule = "1f1b";
  const JobStepRun even = run_job_step(s);
  s.layout.first_chunk_layers = s.layout.last_chunk_layers = 0;
  const auto chunks = chunk_costs(s.model, s.layout, s.cluster);
  REQUIRE(chunks.size() == 8);
  CHECK(chunks[0].layers == 0);
  CHECK(chunks[1].layers == 16);
  CHECK(chunks[7].layers == 0);
  CHECK(chunks[0].forward.gemm == 0);
  CHECK(chunks[0].parameters == 64000 * 12288 / 8);  // the embedding's share
  CHECK(chunks[7].parameters == 64000 * 12288 / 8);  // the head (tied, on another device: its own copy)
  const JobStepRun ends = run_job_step(s);
  CHECK(ends.result.step_time > even.result.step_time);
  // Model FLOPs do not depend on the split: MFU falls as the step grows.
  CHECK(ends.result.mfu * static_cast<double>(ends.result.step_time) ==
        Approx(even.result.mfu * static_cast<double>(even.result.step_time)).epsilon(1e-9));
}

TEST_CASE("MLA: DeepSeek-V3's latent attention, weights, GEMMs and attention core", "[job_step][mla]") {
  // DeepSeek-V3 (config.json; report sec. 2.1.1): 61 layers, the first 3 dense, MLA with a
  // 1,536-wide query latent and a 512-wide key/value latent, heads of 128 + 64 (RoPE) for queries
  // and keys and 128 for values, one shared expert: 671B parameters (report sec. 1), MTP apart.
  JobStepSpec s = moe(16, 16, 1);
  JobModel& m = s.model;
  m.shape.layers = 61;
  m.dense_layers = 3;
  m.shared_expert_ffn = 2048;
  m.mla = {1536, 512, 128, 64, 128};
  CHECK(total_parameters(m) == 671'026'404'352);
  // With its multi-token prediction module (sec. 2.2): one more MoE layer (11,507,286,016), the
  // 2h x h projection and two norms; the embedding and head are shared.
  JobModel with_mtp = m;
  with_mtp.mtp_layers = 1;
  CHECK(total_parameters(with_mtp) - total_parameters(m) == 11'507'286'016 + 2 * 7168 * 7168 + 2 * 7168);
  {
    // On the last chunk: the module's layer, projection (split by TP), norms and a copy of the
    // embedding; its forward adds a layer's, the projection's and the LM head's work.
    JobLayout pl;
    pl.pp = 2;
    pl.dp = 16;
    pl.ep = 16;
    pl.global_batch = 32;
    const auto a = chunk_costs(m, pl, s.cluster), b = chunk_costs(with_mtp, pl, s.cluster);
    const ChunkCost layer = LayerStack(m, pl, s.cluster).layers(60, 1);
    CHECK(b[0].parameters == a[0].parameters);
    CHECK(b[1].parameters - a[1].parameters == layer.parameters + 2 * 7168 * 7168 + 2 * 7168 + 129280 * 7168);
    CHECK(b[1].forward.compute() - a[1].forward.compute() > layer.forward.compute());
    const StepFlops fa = step_flops(m, pl), fb = step_flops(with_mtp, pl);
    const double per_seq = layer_work(m, pl).gemm_flops + layer_work(m, pl).attention_flops +
                           2.0 * 4096 * 2 * 7168 * 7168 + 2.0 * 4096 * 7168 * 129280;
    CHECK(fb.model - fa.model == Approx(3 * 32 * per_seq).epsilon(1e-9));
  }
  // One layer's attention weights: W_DQ 7,168 x 1,536 + its norm + W_UQ 1,536 x 128 x 192 = 48,760,320;
  // W_DKV and W_KR 7,168 x 576 + the norm + W_UK, W_UV 512 x 128 x 256 = 20,906,496; W_O 16,384 x
  // 7,168 = 117,440,512. At TP 2 each GPU holds the down-projections whole (15,140,864) and half
  // of the rest (171,966,464 / 2).
  JobModel dense = dense_layer_model(m);
  JobLayout l;
  l.micro_batch = 1;
  const LayerWork one = layer_work(dense, l);
  const std::int64_t mlp = 3 * std::int64_t{7168} * 18432, norms = 2 * 7168;
  CHECK(one.parameters == 48'760'320 + 20'906'496 + 117'440'512 + mlp + norms);
  l.tp = 2;
  const LayerWork two = layer_work(dense, l);
  CHECK(two.parameters == 15'140'864 + 171'966'464 / 2 + (mlp + norms) / 2);
  // GEMMs, forward, 4,096 tokens at TP 2: W_DQ whole, W_UQ by heads, W_DKV + W_KR whole, W_UK +
  // W_UV by heads, W_O split along K; then the MLP.
  REQUIRE(two.gemms.size() == 7);
  CHECK(two.gemms[0].n == 1536);
  CHECK(two.gemms[1].n == 128 * 192 / 2);
  CHECK(two.gemms[1].k == 1536);
  CHECK(two.gemms[2].n == 576);
  CHECK(two.gemms[3].n == 128 * 256 / 2);
  CHECK(two.gemms[3].k == 512);
  CHECK(two.gemms[4].k == 128 * 128 / 2);
  // Attention core: QK^T over 128 x 192, AV over 128 x 128, causal pairs s (s + 1) / 2 per sequence.
  CHECK(one.attention_flops == Approx(2.0 * 4096 * 4097 / 2 * (128 * 192 + 128 * 128)).epsilon(1e-12));
  // Without MLA (q = k = v = 128 x 56), a quarter of MLA's attention core FLOPs per query width.
  JobModel mha = dense;
  mha.mla = {};
  CHECK(layer_work(mha, l).attention_flops * 40960 / (2 * 7168) == Approx(two.attention_flops).epsilon(1e-12));
  // Activations: Q, K (192-wide heads), V and W_O's input (128-wide) inside TP, the latents
  // (1,536 + 512 + 64) whole on every rank: the difference to MHA at TP 1, in bytes per token.
  JobLayout t1;
  const double per_token_mla = static_cast<double>(layer_activation_bytes(dense, t1)) / 4096;
  const double per_token_mha = static_cast<double>(layer_activation_bytes(mha, t1)) / 4096;
  CHECK(per_token_mla - per_token_mha ==
        Approx(2.0 * (24576 + 24576 + 16384 + 16384) + 2.0 * 2112 - 2.0 * 4 * 7168).epsilon(1e-9));
}

TEST_CASE("partial recompute: the first N layers of each chunk recomputed whole, the others kept",
          "[job_step][recompute]") {
  JobStepSpec s = megascale(256, 128);  // 96 layers, tp 8 pp 8 v 6: chunks of 2 layers
  s.layout.vpp = 1;
  s.layout.schedule = "1f1b";  // chunks of 12 layers
  JobLayout& l = s.layout;
  l.recompute = JobRecompute::Full;
  l.recompute_layers = 5;
  const std::vector<bool> r = recomputed_layers(96, l);
  CHECK(std::count(r.begin(), r.end(), true) == 8 * 5);
  CHECK(r[4]);
  CHECK_FALSE(r[5]);
  CHECK(r[12]);
  CHECK_FALSE(r[95]);
  // Each chunk: 5 layers as under full recompute, 7 as without.
  JobLayout full = l, none = l;
  full.recompute_layers = -1;
  none.recompute = JobRecompute::None;
  none.recompute_layers = -1;
  const auto part = chunk_costs(s.model, l, s.cluster), all = chunk_costs(s.model, full, s.cluster),
             kept = chunk_costs(s.model, none, s.cluster);
  const double per_full = static_cast<double>(layer_activation_bytes(s.model, full));
  const double per_kept = static_cast<double>(layer_activation_bytes(s.model, none));
  CHECK(static_cast<double>(part[3].activation) == Approx(5 * per_full + 7 * per_kept).epsilon(1e-12));
  CHECK(part[3].backward_input.compute() ==
        Approx((5 * all[3].backward_input.compute() + 7 * kept[3].backward_input.compute()) / 12).epsilon(1e-12));
  // Hardware FLOPs: 40 of the 96 layers' forward again.
  const StepFlops f_part = step_flops(s.model, l), f_full = step_flops(s.model, full),
                  f_none = step_flops(s.model, none);
  CHECK(f_part.model == f_none.model);
  CHECK(f_part.hardware - f_none.hardware == Approx((f_full.hardware - f_none.hardware) * 40 / 96).epsilon(1e-9));
  // recompute_layers 0 keeps every layer's activations and needs no buffer for a rebuilt one.
  l.recompute_layers = 0;
  const auto zero = chunk_costs(s.model, l, s.cluster);
  CHECK(zero[3].activation == kept[3].activation);
  CHECK(job_memory(s.model, l, zero).buffers == job_memory(s.model, none, kept).buffers);
}

namespace {
// scenarios/job-moe-routing-256xh100.yaml: Qwen3-235B-A22B on 256 H100, pp 4, dp 64, ep 8.
JobStepSpec qwen3_235b_routing() {
  JobStepSpec s;
  JobModel& m = s.model;
  m = moe_model(decoder("qwen3-235b-a22b", 94, 4096, 12288, 64, 4, 128, 151936), 128, 8, 1536);
  m.routing.kind = MoeRoutingSpec::Kind::Hot;
  m.routing.hot_fraction = 0.5;
  m.routing.hot_load = 1.5;
  s.cluster = *find_cluster_preset("h100-sxm");
  JobLayout& l = s.layout;
  l.pp = 4;
  l.first_chunk_layers = l.last_chunk_layers = 23;
  l.dp = 64;
  l.ep = 8;
  l.zero = 1;
  l.global_batch = 1024;
  l.recompute = JobRecompute::Full;
  return s;
}

// The same at TP 4 with sequence parallelism (16-way DP), routed evenly.
JobStepSpec qwen3_235b_tp4() {
  JobStepSpec s = qwen3_235b_routing();
  s.model.routing = {};
  s.layout.tp = 4;
  s.layout.dp = 16;
  s.layout.sequence_parallel = true;
  return s;
}
}  // namespace

TEST_CASE("MoE token permute and unpermute: memory-bound bytes per GPU, and what recompute reruns", "[job_step][moe]") {
  // Qwen3-235B-A22B, 4,096 tokens, top 8, h 4,096: the permute reads and writes 8 rows per token,
  // the unpermute reads 8 and writes 1: 25 rows of 2 h bytes per token the dispatcher holds.
  // Megatron-Core's all-to-all dispatcher (ep 8, 16 experts per GPU) also sorts the 8 received
  // rows per token by expert and back: 32 more; DeepEP's receive needs no sort.
  JobStepSpec s = qwen3_235b_tp4();
  const double row = 4096.0 * 2;
  JobLayout folded = s.layout, unfolded = s.layout, per_node = s.layout;
  folded.expert_tp = 1;
  per_node.ep_dispatch = EpDispatch::PerNode;
  // Not folded, each TP rank permutes all 4,096 tokens; folded to expert TP 1, its quarter.
  CHECK(layer_work(s.model, unfolded).permute_bytes == 4096 * (25 + 32) * row);
  CHECK(layer_work(s.model, folded).permute_bytes == 1024 * (25 + 32) * row);
  CHECK(layer_work(s.model, per_node).permute_bytes == 4096 * 25 * row);
  // The busiest rank sorts its load's share of the rows: 1.5x under figure 10-27's hot experts.
  const JobStepSpec hot = qwen3_235b_routing();
  CHECK(layer_work(hot.model, hot.layout, 1.5).permute_bytes == 4096 * (25 + 1.5 * 32) * row);
  // Part of the layer's memory-bound bytes; a dense model has none.
  JobModel dense = s.model;
  dense.experts = dense.top_k = 0;
  CHECK(layer_work(dense, unfolded).permute_bytes == 0);
  const LayerWork w = layer_work(s.model, unfolded);
  CHECK(w.memory_bytes > w.permute_bytes);
  // The moe module reruns them in the backward; moe_act alone does not.
  JobLayout moe = unfolded, act = unfolded;
  moe.recompute = act.recompute = JobRecompute::Selective;
  moe.recompute_modules = kRecomputeMoe;
  act.recompute_modules = kRecomputeMoeAct;
  const double hbm = static_cast<double>(s.cluster.accelerator.hbm_bandwidth) * s.cluster.accelerator.efficiency.memory;
  const auto backward_memory = [&](const JobLayout& x) {
    return layer_passes(s.model, x, s.cluster).backward_input.memory;
  };
  CHECK(backward_memory(moe) - backward_memory(act) == Approx(w.permute_bytes / hbm).epsilon(1e-9));
}

TEST_CASE("expert routing: the busiest EP rank sets the pace (figure 10-27 in a job)", "[job_step][moe]") {
  JobStepSpec s = qwen3_235b_routing();
  // 8 EP ranks x 4,096 tokens x top 8 = 262,144 rows over 128 experts, 2,048 each on average;
  // the 64 hot ones get 3,072 and sit on EP ranks 0-3 (16 per rank): 49,152 rows against a
  // mean of 32,768, 1.5x.
  ExpertRankLoad load = expert_rank_load(s.model, s.layout);
  CHECK(load.tokens == 32768);
  CHECK(load.busiest == 1.5);
  CHECK(load.computed == 1);
  CHECK(load.dropped == 0);
  CHECK_FALSE(load.capacity);
  // Round-robin placement deals the hot experts over every rank: the mean everywhere.
  s.layout.expert_placement = ExpertPlacement::RoundRobin;
  CHECK(expert_rank_load(s.model, s.layout).busiest == 1);
  // Capacity 1.25: 2,560 rows per expert; each hot expert drops 512 (64 x 512 of 262,144 =
  // 12.5 %) and every expert computes 2,560 (padded), 1.25x the mean on every rank.
  s.layout.expert_placement = ExpertPlacement::Contiguous;
  s.model.capacity_factor = 1.25;
  load = expert_rank_load(s.model, s.layout);
  CHECK(load.capacity == 2560);
  CHECK(load.busiest == 1.25);
  CHECK(load.computed == 1.25);
  CHECK(load.dropped == 0.125);
  // Balanced and dropless is the mean by definition, not routed.
  s.model.capacity_factor.reset();
  s.model.routing = {};
  load = expert_rank_load(s.model, s.layout);
  CHECK(load.busiest == 1);
  CHECK(load.tokens == 0);
}

TEST_CASE("expert routing: the busiest rank's rows in time, memory and hardware FLOPs", "[job_step][moe]") {
  const JobStepSpec hot = qwen3_235b_routing();
  JobStepSpec even = hot, spread = hot, capped = hot;
  even.model.routing = {};
  spread.layout.expert_placement = ExpertPlacement::RoundRobin;
  capped.model.capacity_factor = 1.25;
  // The step (docs/job.md "Expert routing"): 9.943 s balanced, 12.714 s with the hot experts
  // on half the ranks, the balanced step exactly when round-robin spreads them.
  const Time t_even = run_job_step(even).result.step_time, t_hot = run_job_step(hot).result.step_time;
  CHECK(t_even == 9'942'552'572);
  CHECK(t_hot == 12'713'729'725);
  CHECK(run_job_step(spread).result.step_time == t_even);
  // Without recompute the busiest rank keeps half again its routed rows' inputs (2h x 8 copies)
  // and SwiGLU arrays (6 x 8 x 1,536 / h): + s b h x (8 + 9) bytes per layer.
  JobLayout none = hot.layout;
  none.recompute = JobRecompute::None;
  const double sbh = 4096.0 * 4096;
  const ClusterSpec& c = hot.cluster;
  CHECK(static_cast<double>(layer_passes(hot.model, none, c).activation -
                            layer_passes(even.model, none, c).activation) == Approx(17 * sbh).epsilon(1e-12));
  // Model FLOPs count the routed rows; hardware FLOPs count the padding too: with capacity 1.25
  // a quarter more expert GEMMs, 2 x 8 x 3 x 4,096 x 1,536 per token and layer, in 4 passes
  // (3 + the recompute) over 94 layers and 1,024 x 4,096 tokens.
  const StepFlops f_even = step_flops(even.model, even.layout), f_cap = step_flops(capped.model, capped.layout);
  CHECK(f_cap.model == f_even.model);
  CHECK(f_cap.hardware - f_even.hardware ==
        Approx(0.25 * 2 * 8 * 3 * 4096.0 * 1536 * 4 * 94 * 1024 * 4096).epsilon(1e-9));
}

TEST_CASE("selective recompute modules: what each drops and reruns (Megatron-Core's recompute_modules)",
          "[job_step][recompute]") {
  JobStepSpec s = qwen3_235b_routing();  // T = 4,096 tokens, h = 4,096, top 8 at 1.5x the mean
  const JobModel& m = s.model;
  const ClusterSpec& c = s.cluster;
  JobLayout base = s.layout;
  base.recompute = JobRecompute::Selective;  // core_attn: nothing to drop with FlashAttention
  const auto with = [&](std::uint8_t modules) {
    JobLayout l = base;
    l.recompute_modules = modules;
    return layer_passes(m, l, c);
  };
  const LayerPasses core = with(kRecomputeCoreAttn), none = with(0);
  CHECK(core.activation == none.activation);
  CHECK(core.backward_input.compute() == none.backward_input.compute());
  const double T = 4096, h = 4096, routed_ffn = 8 * 1.5 * 1536;
  // layernorm: the two norms' outputs, 2 + 2 bytes per token and hidden element; their forward
  // (read + write, 2 x 2 x h x 2 B per token) again in the backward.
  const LayerPasses ln = with(kRecomputeLayerNorm);
  CHECK(static_cast<double>(none.activation - ln.activation) == Approx(4 * T * h).epsilon(1e-12));
  const double hbm = static_cast<double>(c.accelerator.hbm_bandwidth) * c.accelerator.efficiency.memory;
  CHECK(ln.backward_input.memory - none.backward_input.memory == Approx(2 * 2 * h * 2 * T / hbm).epsilon(1e-9));
  // moe_act: the SwiGLU output of the busiest rank's routed rows (2 B per FFN element), and the
  // activation function (read 2, write 1) again.
  const LayerPasses act = with(kRecomputeMoeAct);
  CHECK(static_cast<double>(none.activation - act.activation) == Approx(2 * routed_ffn * T).epsilon(1e-12));
  CHECK(act.backward_input.memory - none.backward_input.memory == Approx(3 * 2 * routed_ffn * T / hbm).epsilon(1e-9));
  CHECK(act.backward_input.gemm == none.backward_input.gemm);
  // moe: the whole block from its input, as Megatron-Core's MoELayer checkpoints it: the routed
  // copies' inputs (2h at the busiest rank's load) and all their arrays (6 x FFN), and the
  // combine's inputs, each token's 8 copies' outputs (2h each); the router and expert GEMMs and
  // the dispatch and combine again.
  const LayerPasses moe_again = with(kRecomputeMoe);
  CHECK(static_cast<double>(none.activation - moe_again.activation) ==
        Approx((2 * 8 * 1.5 * h + 2 * 8 * h + 6 * routed_ffn) * T).epsilon(1e-12));
  CHECK(moe_again.backward_input.ep - none.backward_input.ep == Approx(none.forward.ep).epsilon(1e-12));
  CHECK(moe_again.backward_input.gemm > none.backward_input.gemm);
  // Hardware FLOPs: moe reruns the router (2 x 128 x h) and the experts (2 x 8 x 3 x h x 1,536)
  // per token and layer, over 94 layers and 1,024 x 4,096 tokens; model FLOPs unchanged.
  JobLayout l_moe = base;
  l_moe.recompute_modules = kRecomputeMoe;
  const StepFlops f_core = step_flops(m, base), f_moe = step_flops(m, l_moe);
  CHECK(f_moe.model == f_core.model);
  CHECK(f_moe.hardware - f_core.hardware ==
        Approx((2 * 128 * h + 2 * 8 * 3 * h * 1536) * 94 * 1024 * 4096.0).epsilon(1e-9));
  // A module the model does not have is refused at the key.
  JobLayout l = base;
  l.recompute_modules = kRecomputeMlaUpProj;
  auto p = check_layout(m, l, 0);
  REQUIRE(p);
  CHECK(p->key == "recompute_modules");
  l.recompute_modules = kRecomputeMlp;  // every layer MoE
  CHECK(check_layout(m, l, 0));
  l.recompute_modules = kRecomputeMoeAct | kRecomputeLayerNorm;
  CHECK_FALSE(check_layout(m, l, 0));
}

TEST_CASE("TP communication overlap: each collective pipelined in tp chunks with its GEMM", "[job_step][tp-overlap]") {
  // (tp - 1) x max(0, c / (tp - 1) - g / tp): 7 ring steps of 1 ms beside GEMM chunks of 0.5 ms
  // show 7 x 0.5 ms; chunks of 1 ms hide them; one GPU has nothing to pipeline.
  CHECK(pipelined_tp_exposed(7e-3, 4e-3, 8) == Approx(3.5e-3).epsilon(1e-12));
  CHECK(pipelined_tp_exposed(7e-3, 8e-3, 8) == 0);
  CHECK(pipelined_tp_exposed(7e-3, 100, 1) == 7e-3);
  // GPT-3 175B's shape at TP 8 with SP on A100 (MegaScale's 256 GPUs): per layer 2,048 tokens.
  const JobStepSpec plain = megascale(256, 768);
  JobStepSpec over = plain;
  over.layout.overlap_tp = true;
  const ClusterSpec& c = plain.cluster;
  const double T = 2048, h = 12288, t = 8;
  const auto one = [&](GemmShape g, GemmPass pass) { return gemm_seconds({g}, pass, c.accelerator, std::nullopt); };
  const GemmShape qkv{T, 3 * h / t, h}, proj{T, h, h / t}, fc1{T, 4 * h / t, h}, fc2{T, h, 4 * h / t};
  const double gather = ring_seconds(Collective::AllGather, 8, T * h * 2, group_paths(c, plain.layout).tp);
  const LayerPasses a = layer_passes(plain.model, plain.layout, c), b = layer_passes(over.model, over.layout, c);
  // Without overlap: 4 collectives forward, of which one pair hides under the weight gradient
  // in the backward. With it, forward: the gathered input into QKV and FC1, the outputs of the
  // projection and FC2 reduce-scattered; backward the other way round (input gradients).
  CHECK(a.forward.tp == Approx(4 * gather).epsilon(1e-12));
  const auto shown = [&](GemmPass pass, const GemmShape& g1, const GemmShape& g2) {
    return pipelined_tp_exposed(gather, one(g1, pass), 8) + pipelined_tp_exposed(gather, one(g2, pass), 8);
  };
  const double fwd = shown(GemmPass::Forward, qkv, proj) + shown(GemmPass::Forward, fc1, fc2);
  const double bwd = shown(GemmPass::InputGrad, proj, qkv) + shown(GemmPass::InputGrad, fc2, fc1);
  CHECK(b.forward.tp == Approx(fwd).epsilon(1e-12));
  CHECK(b.backward_input.tp == Approx(bwd).epsilon(1e-12));
  CHECK(b.forward.tp < 0.25 * a.forward.tp);
  // The GEMMs under the collectives lose the contention share of the overlap.
  const double k = c.accelerator.efficiency.contention;
  CHECK(b.forward.gemm - a.forward.gemm == Approx(k * (4 * gather - fwd)).epsilon(1e-9));
  CHECK(b.backward_weight.gemm == a.backward_weight.gemm);
  // The step, 43.396 s -> 41.310 s (the A100 preset's default efficiencies, uncalibrated).
  CHECK(run_job_step(plain).result.step_time == 43'396'126'700);
  CHECK(run_job_step(over).result.step_time == 41'310'379'869);
  // Megatron-Core's overlap needs sequence parallelism: refused without, at the key.
  over.layout.sequence_parallel = false;
  const auto p = check_layout(over.model, over.layout, 0);
  REQUIRE(p);
  CHECK(p->key == "overlap.tp");
}

TEST_CASE("TP communication overlap: an MoE block's collectives still wait", "[job_step][tp-overlap]") {
  JobStepSpec s = qwen3_235b_tp4();
  JobLayout& l = s.layout;
  l.recompute = JobRecompute::None;
  JobLayout o = l;
  o.overlap_tp = true;
  const LayerPasses a = layer_passes(s.model, l, s.cluster), b = layer_passes(s.model, o, s.cluster);
  // The attention block (QKV, projection) is pipelined; the MoE block's gather and
  // reduce-scatter (the token dispatcher's, around grouped GEMMs) show whole.
  const double T = 4096, h = 4096;
  const double gather = ring_seconds(Collective::AllGather, 4, T * h * 2, group_paths(s.cluster, l).tp);
  CHECK(a.forward.tp == Approx(4 * gather).epsilon(1e-12));
  const auto one = [&](GemmShape g) {
    return gemm_seconds({g}, GemmPass::Forward, s.cluster.accelerator, std::nullopt);
  };
  const double attention = pipelined_tp_exposed(gather, one({T, (64 + 2 * 4) * 128 / 4.0, h}), 4) +
                           pipelined_tp_exposed(gather, one({T, h, 64 * 128 / 4.0}), 4);
  CHECK(b.forward.tp == Approx(attention + 2 * gather).epsilon(1e-12));
}

TEST_CASE("FP8 activations: FP8 GEMMs keep their inputs in FP8 for the backward", "[job_step][fp8]") {
  // GPT-3 175B's shape at TP 8 with SP (GeLU; queries and the projection h wide): per token and
  // layer the QKV and MLP inputs (2 x h), the projection's input (h) and FC2's (4h) drop from
  // 2 B to 1 + 4/128 B, all divided by t with SP.
  JobStepSpec s = megascale(256, 768);
  JobLayout bf16 = s.layout;
  bf16.fp8 = true;
  JobLayout fp8 = bf16;
  fp8.fp8_activations = true;
  const double h = 12288, tokens = 2048;
  const Bytes a = layer_activation_bytes(s.model, bf16), b = layer_activation_bytes(s.model, fp8);
  CHECK(static_cast<double>(a - b) == Approx(tokens / 8 * (2 - 1.03125) * (2 * h + h + 4 * h)).epsilon(1e-9));
  // What recompute drops is not kept in any format: with full recompute only the layer's input
  // (the residual stream, not a GEMM input) stays, the same either way.
  bf16.recompute = fp8.recompute = JobRecompute::Full;
  CHECK(layer_activation_bytes(s.model, bf16) == layer_activation_bytes(s.model, fp8));
  // An MoE block's input stays BF16 (the router reads it); its routed copies' inputs and the
  // experts' second GEMM's are FP8 (Qwen3-235B: top 8 of experts 1,536 wide, h 4,096, T 4,096).
  JobStepSpec q = qwen3_235b_routing();
  q.model.routing = {};
  JobLayout qa = q.layout;
  qa.recompute = JobRecompute::None;
  qa.fp8 = true;
  JobLayout qb = qa;
  qb.fp8_activations = true;
  const double q_o = 64 * 128;
  CHECK(static_cast<double>(layer_activation_bytes(q.model, qa) - layer_activation_bytes(q.model, qb)) ==
        Approx(4096 * (2 - 1.03125) * (4096 + q_o + 8 * 4096 + 8 * 1536)).epsilon(1e-9));
  // The casts an FP8 recipe adds, 4 B per element (read BF16, write FP8 and its transpose), on
  // GPT-3's shape at TP 8 (T = 2,048, h = 12,288, ffn 4h): forward the projection's and FC2's
  // inputs (h / 8 and 4h / 8 per token), backward every GEMM's output gradient (QKV 3h / 8, the
  // projection h, FC1 4h / 8, FC2 h). Full recompute casts the forward's again.
  const std::vector<GemmShape> gemms = layer_work(s.model, fp8).gemms;
  CHECK(fp8_cast_bytes(gemms, GemmPass::Forward, false) == Approx(4 * tokens * (h / 8 + 4 * h / 8)).epsilon(1e-12));
  CHECK(fp8_cast_bytes(gemms, GemmPass::InputGrad, false) ==
        Approx(4 * tokens * (3 * h / 8 + h + 4 * h / 8 + h)).epsilon(1e-12));
  CHECK(fp8_cast_bytes(gemms, GemmPass::WeightGrad, false) == 0);
  // An MoE layer: after a BF16 dispatch the routed copies are cast before the experts' first GEMM
  // too (Qwen3-235B at ep 8: 4,096 tokens x top 8 rows of h 4,096); an FP8 dispatch sends them cast.
  JobLayout qe = qa;
  qe.dp = qe.ep = 8;
  const std::vector<GemmShape> moe_gemms = layer_work(q.model, qe).gemms;
  CHECK(fp8_cast_bytes(moe_gemms, GemmPass::Forward, false) - fp8_cast_bytes(moe_gemms, GemmPass::Forward, true) ==
        Approx(4.0 * 4096 * 8 * 4096).epsilon(1e-12));
  CHECK(fp8_cast_bytes(moe_gemms, GemmPass::InputGrad, false) == fp8_cast_bytes(moe_gemms, GemmPass::InputGrad, true));
  // A shared expert reads the block's input, as the router does, and casts it itself: T x h more
  // forward (4,096 tokens of h 4,096 here, a shared expert of 1,536), whatever the dispatch.
  JobModel qs = q.model;
  qs.shared_expert_ffn = 1536;
  const std::vector<GemmShape> shared_gemms = layer_work(qs, qe).gemms;
  const double shared_out = 4.0 * 4096 * 1536;  // its second GEMM's input, a row-parallel one's
  CHECK(fp8_cast_bytes(shared_gemms, GemmPass::Forward, true) - fp8_cast_bytes(moe_gemms, GemmPass::Forward, true) ==
        Approx(4.0 * 4096 * 4096 + shared_out).epsilon(1e-12));
  const ClusterSpec& c = s.cluster;
  const double hbm = static_cast<double>(c.accelerator.hbm_bandwidth) * c.accelerator.efficiency.memory;
  JobLayout no_fp8 = fp8;
  no_fp8.fp8 = no_fp8.fp8_activations = false;
  CHECK(layer_passes(s.model, fp8, c).forward.memory - layer_passes(s.model, no_fp8, c).forward.memory ==
        Approx(4 * tokens * (5 * h / 8) / hbm).epsilon(1e-9));
  // Without FP8 GEMMs there is no FP8 copy: refused at the key.
  JobLayout no = qb;
  no.fp8 = false;
  const auto p = check_layout_settings(no);
  REQUIRE(p);
  CHECK(p->key == "fp8_activations");
}

TEST_CASE("Adam's moments in BF16: 8 B of state per parameter, 22 B of optimizer traffic", "[job_step][optimizer]") {
  // DeepSeek-V3 sec. 3.3.3 keeps AdamW's m and v in BF16 beside the FP32 master weights.
  JobStepSpec s = megascale(256, 768);
  JobLayout bf16 = s.layout;
  bf16.adam_moment_bytes = 2;
  const auto chunks = chunk_costs(s.model, s.layout, s.cluster);
  const JobMemory a = job_memory(s.model, s.layout, chunks), b = job_memory(s.model, bf16, chunks);
  CHECK(static_cast<double>(b.optimizer) == Approx(static_cast<double>(a.optimizer) * 8 / 12).epsilon(1e-9));
  CHECK(b.weights == a.weights);
  CHECK(b.gradients == a.gradients);
  const HeldParameters p{1'000'000'000, 0};
  CHECK(optimizer_seconds(bf16, s.cluster, p) == Approx(optimizer_seconds(s.layout, s.cluster, p) * 22 / 30));
  bf16.adam_moment_bytes = 3;
  const auto problem = check_layout_settings(bf16);
  REQUIRE(problem);
  CHECK(problem->key == "adam_moment_bytes");
}

TEST_CASE("FP32 weights as the master: 4 B of weights, no master in the optimizer, a cast per forward",
          "[job_step][optimizer][memory]") {
  // PyTorch's mixed precision keeps the model's weights in FP32 and computes with BF16 copies:
  // FSDP casts its shard for each gather (ZeRO-3: nothing per pass), autocast each forward's
  // weights (zero 0-2: read 4 B, write 2 B a parameter, the copies held through the backward).
  JobStepSpec s = megascale_one_stage(32, 3, 128);
  JobLayout& l = s.layout;
  JobLayout fp32 = l;
  fp32.master_weights = MasterWeights::Model;
  const auto chunks = chunk_costs(s.model, l, s.cluster);
  const JobMemory a = job_memory(s.model, l, chunks), b = job_memory(s.model, fp32, chunks);
  CHECK(b.weights == 2 * a.weights);
  CHECK(static_cast<double>(b.optimizer) == Approx(static_cast<double>(a.optimizer) * 8 / 12).epsilon(1e-9));
  CHECK(b.gradients == a.gradients);
  CHECK(b.buffers == a.buffers);
  // Reduced in BF16, the gradients' shards are still kept in FP32 (FSDP casts each back to its
  // parameter's dtype), where Megatron keeps them as reduced.
  JobLayout bf16_reduce = fp32, megatron_bf16 = l;
  bf16_reduce.grad_bytes = megatron_bf16.grad_bytes = 2;
  CHECK(job_memory(s.model, bf16_reduce, chunks).gradients == b.gradients);
  CHECK(2 * job_memory(s.model, megatron_bf16, chunks).gradients == a.gradients);
  // 175B over 32 GPUs, TP 8: 2 B x 174.6e9 / 256 a GPU less, 1.36 GB.
  const double saved = static_cast<double>(a.total() - b.total());
  CHECK(saved == Approx(2.0 * static_cast<double>(chunks[0].parameters) / 32).epsilon(1e-6));
  CHECK(saved == Approx(1.36e9).epsilon(0.01));
  CHECK(chunk_costs(s.model, fp32, s.cluster)[0].forward.memory == chunks[0].forward.memory);
  CHECK(weight_bytes(fp32) + adam_state_bytes(fp32) == 12);  // what a checkpoint saves
  CHECK(weight_bytes(l) + adam_state_bytes(l) == 14);
  const HeldParameters p{1'000'000'000, 0};
  CHECK(optimizer_seconds(fp32, s.cluster, p) == Approx(optimizer_seconds(l, s.cluster, p) * 28 / 30));

  // Zero 0: the whole FP32 weights on every GPU, their BF16 copies beside them, and each forward
  // (a full recompute's rerun too) casts a layer's 6 B per parameter over HBM.
  l.zero = fp32.zero = 0;
  l.recompute = fp32.recompute = JobRecompute::Full;
  const auto c0 = chunk_costs(s.model, l, s.cluster), c1 = chunk_costs(s.model, fp32, s.cluster);
  const JobMemory a0 = job_memory(s.model, l, c0), b0 = job_memory(s.model, fp32, c1);
  CHECK(b0.weights == 2 * a0.weights);
  CHECK(b0.buffers - a0.buffers == a0.weights);  // the copies: 2 B a parameter
  const auto& acc = s.cluster.accelerator;
  const double hbm = static_cast<double>(acc.hbm_bandwidth) * acc.efficiency.memory;
  const double layer = static_cast<double>(layer_work(s.model, l).parameters);
  const LayerPasses pa = layer_passes(s.model, l, s.cluster), pb = layer_passes(s.model, fp32, s.cluster);
  CHECK(pb.forward.memory - pa.forward.memory == Approx(6 * layer / hbm).epsilon(1e-9));
  CHECK(pb.backward_input.memory - pa.backward_input.memory == Approx(6 * layer / hbm).epsilon(1e-9));
  CHECK(pb.backward_weight.memory == pa.backward_weight.memory);
  // GPT-3's layer at TP 8: 12 h^2 / 8 = 226.5M parameters, 1.36 GB cast, 0.83 ms at the A100's
  // 2,039 GB/s x its preset memory efficiency 0.8.
  CHECK(6 * layer / hbm == Approx(0.833e-3).epsilon(0.002));
}

TEST_CASE("recompute op: torchtitan's policy saves every matmul's output but every second one",
          "[job_step][recompute]") {
  // Llama 3 8B on 64 A100 as torchtitan's performance page runs it: FSDP, one 8,192-token
  // sequence a GPU, no dropout. A block calls wq, wk, wv, wo, w1, w3, w2 and saves wq's, wv's,
  // w1's and w2's outputs, FlashAttention's and its input; it reruns wk, wo, w3 and the rest.
  JobStepSpec s;
  s.model.shape = decoder("llama3-8b", 32, 4096, 14336, 32, 8, 128, 128256);
  s.model.seq = 8192;
  s.model.dropout = false;
  s.cluster = *find_cluster_preset("a100-sxm-80gb");
  JobLayout& l = s.layout;
  l.dp = 64;
  l.zero = 3;
  l.global_batch = 64;
  JobLayout op = l, none = l;
  op.recompute = JobRecompute::Op;
  REQUIRE_FALSE(check_layout(s.model, op, 64));
  const double T = 8192, h = 4096, kv = 1024, ffn = 14336;
  // Per token: the input 2h, wq 2h, wv 2kv, FlashAttention's output 2h, w1 2 ffn, w2 2h.
  CHECK(layer_activation_bytes(s.model, op) == static_cast<Bytes>(T * 2 * (h + h + kv + h + ffn + h)));
  CHECK(layer_activation_bytes(s.model, op) == 520'093'696);
  // The backward reruns three matmuls: T x kv x h, T x h x h, T x ffn x h; and every
  // memory-bound kernel of the forward (FlashAttention is saved, not rerun).
  const LayerPasses p = layer_passes(s.model, op, s.cluster), q = layer_passes(s.model, none, s.cluster);
  CHECK(p.forward.gemm == q.forward.gemm);
  CHECK(p.backward_input.memory == Approx(q.backward_input.memory + q.forward.memory).epsilon(1e-12));
  CHECK(p.backward_input.attention == q.backward_input.attention);
  const double rerun = gemm_seconds({{T, kv, h, 1}, {T, h, h, 1}, {T, ffn, h, 1}}, GemmPass::Forward,
                                    s.cluster.accelerator, std::nullopt);
  CHECK(p.backward_input.gemm - q.backward_input.gemm == Approx(rerun).epsilon(1e-12));
  // Hardware FLOPs count the rerun matmuls: 2 T h (kv + h + ffn) a layer and sequence.
  const StepFlops fo = step_flops(s.model, op), fn = step_flops(s.model, none);
  CHECK(fo.model == fn.model);
  CHECK(fo.hardware - fn.hardware == Approx(32 * 64 * 2 * T * h * (kv + h + ffn)).epsilon(1e-12));
  // While a block's backward runs, what it did not save is rebuilt beside what it did.
  const auto chunks = chunk_costs(s.model, op, s.cluster);
  CHECK(job_memory(s.model, op, chunks).buffers -
            job_memory(s.model, none, chunk_costs(s.model, none, s.cluster)).buffers ==
        layer_activation_bytes(s.model, none) - layer_activation_bytes(s.model, op));
  // A block without torchtitan's order of matmuls, or without FlashAttention: refused at the key.
  JobStepSpec moe = s;
  moe.model = moe_model(s.model.shape, 8, 2, 14336);
  const auto problem = check_layout(moe.model, op, 64);
  REQUIRE(problem);
  CHECK(problem->key == "recompute");
  op.attention = AttentionKernel::Unfused;
  const auto unfused = check_layout(s.model, op, 64);
  REQUIRE(unfused);
  CHECK(unfused->message.find("needs attention: flash") != std::string::npos);
}

TEST_CASE("CP communication: the K/V ring, an all-gather, or an all-to-all of heads", "[job_step][cp]") {
  // Qwen3-8B at 131,072 tokens, TP 2 x CP 4 on one node: T = 32,768 tokens per GPU, 16 query and
  // 4 key/value heads of 128 per TP rank.
  JobModel m;
  m.shape = decoder("qwen3-8b", 36, 4096, 12288, 32, 8, 128, 151936);
  m.seq = 131072;
  JobLayout l;
  l.tp = 2;
  l.cp = 4;
  l.dp = 4;
  l.sequence_parallel = true;
  l.global_batch = 16;
  const ClusterSpec c = *find_cluster_preset("h100-sxm");
  const PathBandwidth& path = group_paths(c, l).cp;
  const double T = 32768, kv = T * (2 * 4 * 128) * 2, q = T * 16 * 128 * 2, o = q;
  const LayerPasses ring = layer_passes(m, l, c);
  CHECK(ring.forward.cp == 0);  // hidden under the attention it feeds
  // all_gather: the whole sequence's K and V (4 x this GPU's) gathered before the attention, in
  // the open; the backward gathers them again and reduce-scatters dK, dV.
  l.cp_comm = CpComm::AllGather;
  const LayerPasses gather = layer_passes(m, l, c);
  const double ag = ring_seconds(Collective::AllGather, 4, 4 * kv, path);
  CHECK(gather.forward.cp == Approx(ag).epsilon(1e-12));
  CHECK(gather.backward_input.cp == Approx(2 * ag).epsilon(1e-12));
  CHECK(gather.forward.attention == ring.forward.attention);
  // a2a: Q, K, V to head groups and the output back, each way in each pass; every rank 1/4 of the
  // heads over the whole sequence: the balanced split's pairs exactly, and the contiguous
  // split's last rank no longer sets the pace.
  l.cp_comm = CpComm::AllToAll;
  const LayerPasses a2a = layer_passes(m, l, c);
  const double there = ring_seconds(Collective::AllToAll, 4, q + kv, path);
  const double back = ring_seconds(Collective::AllToAll, 4, o, path);
  CHECK(a2a.forward.cp == Approx(there + back).epsilon(1e-12));
  CHECK(a2a.backward_input.cp == Approx(there + back).epsilon(1e-12));
  CHECK(a2a.forward.attention == Approx(ring.forward.attention).epsilon(1e-12));
  l.cp_balanced = false;
  CHECK(layer_passes(m, l, c).forward.attention == Approx(ring.forward.attention).epsilon(1e-12));
  // Heads split over tp x cp: 8 key/value heads cannot go over 4 x 4.
  l.tp = 4;
  l.dp = 2;
  const auto p = check_layout(m, l, 32);
  REQUIRE(p);
  CHECK(p->key == "cp");
  CHECK(p->message.find("would fit: cp 1, 2; or cp_comm p2p") != std::string::npos);
}

TEST_CASE("all-reduce across nodes: NCCL's trees where they beat the ring", "[job_step][collectives]") {
  PathBandwidth net;
  net.bytes_per_second = net.ring_bytes_per_second = 20e9;
  net.step_latency = 5 * kMicrosecond;
  net.inter_node = true;
  // 192 members, 1 MB: the ring's 382 latencies (1.91 ms) against the trees' 2 x 8 (80 us) plus
  // twice the buffer at 20 GB/s (100 us).
  const double tree = 2 * 8 * 5e-6 + 2 * 1e6 / 20e9;
  CHECK(collective_seconds(Collective::AllReduce, 192, 1e6, net) == Approx(tree).epsilon(1e-12));
  CHECK(ring_seconds(Collective::AllReduce, 192, 1e6, net) > 10 * tree);
  // 10 GB: the ring's 2 (n - 1) / n of the buffer wins over the trees' 2.
  CHECK(collective_seconds(Collective::AllReduce, 192, 1e10, net) ==
        ring_seconds(Collective::AllReduce, 192, 1e10, net));
  // Inside a node (NVSwitch), and for the other collectives, the ring.
  PathBandwidth fabric = net;
  fabric.inter_node = false;
  CHECK(collective_seconds(Collective::AllReduce, 8, 1e6, fabric) ==
        ring_seconds(Collective::AllReduce, 8, 1e6, fabric));
  CHECK(collective_seconds(Collective::ReduceScatter, 192, 1e6, net) ==
        ring_seconds(Collective::ReduceScatter, 192, 1e6, net));
}

TEST_CASE("expert TP folded below tp: whole experts, EP inside the node (MoE parallel folding)", "[job_step][moe]") {
  // Qwen3-235B-A22B at TP 4 with SP, 16-way DP, EP 8: T = 4,096 tokens per micro-batch.
  JobStepSpec s = qwen3_235b_tp4();
  const JobLayout& l = s.layout;
  JobLayout folded = l;
  folded.expert_tp = 1;
  const JobModel& m = s.model;
  const auto experts = [](const LayerWork& w) {
    std::vector<GemmShape> out;
    for (const GemmShape& g : w.gemms)
      if (g.part == GemmPart::Experts) out.push_back(g);
    return out;
  };
  // Unfolded: the 16 local experts take all 4,096 tokens' 8 copies, 2,048 rows each, FFN split
  // 4 ways. Folded: an EP rank gets its quarter of the tokens, 512 rows per expert, whole FFN.
  const auto a = experts(layer_work(m, l)), b = experts(layer_work(m, folded));
  REQUIRE(a.size() == 2);
  REQUIRE(b.size() == 2);
  CHECK(a[0].m == 2048);
  CHECK(a[0].n == 2 * 1536 / 4);
  CHECK(b[0].m == 512);
  CHECK(b[0].n == 2 * 1536);
  CHECK(b[0].count == 16);
  CHECK(gemm_seconds(b, GemmPass::Forward, s.cluster.accelerator, std::nullopt) > 0);
  const auto flops = [](const std::vector<GemmShape>& g) {
    double f = 0;
    for (const auto& x : g) f += 2 * x.m * x.n * x.k * x.count;
    return f;
  };
  CHECK(flops(a) == flops(b));  // the same work, in fewer, larger GEMMs
  // Each GPU holds 16 whole experts (not 16 quarters), and 8 GPUs of a stage hold each expert
  // (tp x dp / (etp x ep) = 64 / 8) instead of 2.
  CHECK(layer_work(m, folded).expert_parameters == 4 * layer_work(m, l).expert_parameters);
  CHECK(l.expert_replicas() == 2);
  CHECK(folded.expert_replicas() == 8);
  // The EP group: 8 ranks TP x CP = 4 apart span 4 nodes; folded, 8 neighbours share a node.
  CHECK(group_paths(s.cluster, l).ep.inter_node);
  CHECK_FALSE(group_paths(s.cluster, folded).ep.inter_node);
  // TP: the attention block's gather and reduce-scatter stay; the MoE block's go (expert TP 1)
  // or run among 2 ranks over half of the tokens (expert TP 2).
  const GroupPaths paths = group_paths(s.cluster, l);
  const double gather = ring_seconds(Collective::AllGather, 4, 4096.0 * 4096 * 2, paths.tp);
  CHECK(layer_passes(m, l, s.cluster).forward.tp == Approx(4 * gather).epsilon(1e-12));
  CHECK(layer_passes(m, folded, s.cluster).forward.tp == Approx(2 * gather).epsilon(1e-12));
  JobLayout two = l;
  two.expert_tp = 2;
  const double pair = ring_seconds(Collective::AllGather, 2, 2048.0 * 4096 * 2, group_paths(s.cluster, two).etp);
  CHECK(layer_passes(m, two, s.cluster).forward.tp == Approx(2 * gather + 2 * pair).epsilon(1e-12));
  // Refused: an expert TP that does not divide tp, one without SP, a grid past the ranks.
  JobLayout bad = folded;
  bad.expert_tp = 3;
  auto p = check_layout(m, bad, 0);
  REQUIRE(p);
  CHECK(p->key == "expert_tp");
  bad = folded;
  bad.sequence_parallel = false;
  p = check_layout(m, bad, 0);
  REQUIRE(p);
  CHECK(p->key == "expert_tp");
  bad = folded;
  bad.ep = 128;
  p = check_layout(m, bad, 0);
  REQUIRE(p);
  CHECK(p->key == "ep");
  CHECK_FALSE(check_layout(m, folded, 0));
}

TEST_CASE("HSDP: ZeRO shards inside each replica, a shard's gradient all-reduced across the replicas",
          "[job_step][hsdp]") {
  // GPT-3 175B with TP 8 on 512 A100 (64 nodes of 8), zero 1, dp 64: as 8 replicas of 8 ranks,
  // each group of 8 data-parallel ranks (one per node, 8 nodes) shards Adam's state among itself.
  JobStepSpec s = megascale_one_stage(64, 1, 512);
  JobLayout& l = s.layout;
  JobLayout h = l;
  h.dp_replicate = 8;
  CHECK(h.zero_shards() == 8);
  REQUIRE_FALSE(check_layout(s.model, h, 512));
  const auto chunks = chunk_costs(s.model, l, s.cluster);
  const JobMemory flat = job_memory(s.model, l, chunks), hybrid = job_memory(s.model, h, chunks);
  CHECK(static_cast<double>(hybrid.optimizer) == Approx(8.0 * static_cast<double>(flat.optimizer)).epsilon(1e-9));
  CHECK(hybrid.weights == flat.weights);
  CHECK(hybrid.gradients == flat.gradients);

  // The paths: the shard group 8 ranks of stride 8 (tp), one per node, on 8 nodes; the replicas
  // 64 ranks apart (8 nodes), 8 of them.
  const ClusterSpec& c = s.cluster;
  const GroupPaths p = group_paths(c, h);
  CHECK(p.dp.inter_node);
  CHECK(p.dp_replica.inter_node);
  const double nic = 25e9 * c.accelerator.efficiency.network;
  CHECK(p.dp.ring_bytes_per_second == Approx(nic));
  CHECK(p.dp_replica.ring_bytes_per_second == Approx(nic));
  // A reduce-scatter of B among the 8 of a group, then its B / 8 all-reduced among the 8 replicas
  // (NCCL's ring or tree, whichever is faster); a gather stays in the group.
  const HeldParameters params{1'000'000'000, 0};
  const double b = 4e9;
  CHECK(replica_collective_seconds(Collective::ReduceScatter, params, 4, h, p) ==
        Approx(ring_seconds(Collective::ReduceScatter, 8, b, p.dp) +
               collective_seconds(Collective::AllReduce, 8, b / 8, p.dp_replica)));
  CHECK(replica_collective_seconds(Collective::AllGather, params, 4, h, p) ==
        Approx(ring_seconds(Collective::AllGather, 8, b, p.dp)));
  // One member sends 7/8 of B in the group and 2 x 7/8 of B / 8 across: 3.5 + 0.875 GB.
  CHECK(replica_collective_bytes(Collective::ReduceScatter, params, 4, h, "") == 4'375'000'000);
  CHECK(replica_collective_bytes(Collective::AllGather, params, 4, h, "") == 3'500'000'000);
  // Against one group of 64: the reduce-scatter's bytes cross the same NICs (63/64 of B against
  // 7/8 + 7/32), the gather's 63/64 against 7/8, and the optimizer's shard is 8 times larger.
  const GroupPaths one = group_paths(c, l);
  CHECK(replica_collective_seconds(Collective::AllGather, params, 4, l, one) ==
        Approx(ring_seconds(Collective::AllGather, 64, b, one.dp)));
  const JobCommPlan a = plan_job_comm(s);
  JobStepSpec hs = s;
  hs.layout = h;
  const JobCommPlan ha = plan_job_comm(hs);
  CHECK(ha.optimizer[0] == Approx(8.0 * static_cast<double>(a.optimizer[0])).margin(8));  // each rounded up to a ns
  const auto ns = [](double x) { return static_cast<Time>(std::ceil(x * 1e9)); };
  const HeldParameters held = held_parameters(ha.chunks[0]);
  CHECK(ha.dp_reduce[0][0] ==
        ns(replica_collective_seconds(Collective::ReduceScatter, held, l.grad_bytes, h, ha.paths)));
  CHECK(ha.dp_gather[0] ==
        ns(ring_seconds(Collective::AllGather, 8, 2.0 * static_cast<double>(held.dense), ha.paths.dp)));

  // FSDP's usual HSDP: tp 1, a replica per node, its 8 GPUs sharding over NVSwitch.
  JobLayout f = h;
  f.tp = 1;
  f.dp = 512;
  f.dp_replicate = 64;
  const GroupPaths fp = group_paths(c, f);
  CHECK_FALSE(fp.dp.inter_node);
  CHECK(fp.dp_replica.inter_node);
  CHECK(fp.dp_replica.ring_bytes_per_second == Approx(nic));  // one member of a replica group per node
}

TEST_CASE("HSDP: layouts that cannot replicate the shards are refused at dp_replicate", "[job_step][hsdp]") {
  const JobModel m = gpt3();
  JobLayout l;
  l.tp = 8;
  l.dp = 12;
  l.zero = 1;
  l.global_batch = 12;
  l.dp_replicate = 5;
  auto p = check_layout(m, l, 0);
  REQUIRE(p);
  CHECK(p->key == "dp_replicate");
  CHECK(p->message == "dp_replicate 5 does not divide dp 12 (would fit: 1, 2, 3, 4, 6, 12)");
  l.dp_replicate = 4;
  CHECK_FALSE(check_layout(m, l, 0));
  // A shard group of one rank holds the whole state: DDP, said once (zero 0).
  l.dp_replicate = 12;
  p = check_layout(m, l, 0);
  REQUIRE(p);
  CHECK(p->message ==
        "dp_replicate 12 leaves one rank in each shard group, which holds the whole state: that is zero 0 (DDP)");
  l.dp_replicate = 4;
  l.zero = 0;
  p = check_layout(m, l, 0);
  REQUIRE(p);
  CHECK(p->key == "dp_replicate");
  CHECK(p->message.find("needs zero 1-3") != std::string::npos);
  // MoE: each replica holds whole EP groups (ep divides dp / dp_replicate x cp).
  l.zero = 1;
  JobModel moe_model = m;
  moe_model.experts = 16;
  moe_model.top_k = 2;
  moe_model.expert_ffn = 4096;
  l.ep = 4;
  l.dp_replicate = 6;  // 2 ranks a replica: not a whole EP group of 4
  p = check_layout(moe_model, l, 0);
  REQUIRE(p);
  CHECK(p->key == "dp_replicate");
  CHECK(p->message.find("would fit: 1, 3") != std::string::npos);
  l.dp_replicate = 3;
  CHECK_FALSE(check_layout(moe_model, l, 0));
}

TEST_CASE("HSDP: one shard group per node, where a node holds more than one data-parallel rank", "[job_step][hsdp]") {
  JobLayout l;
  l.dp = 128;
  CHECK(dp_replicate_per_node(l, 8) == 16);  // tp 1: 8 data-parallel ranks a node
  l.tp = 4;
  l.dp = 32;
  CHECK(dp_replicate_per_node(l, 8) == 16);  // 2 a node
  l.tp = 2;
  l.cp = 2;
  CHECK(dp_replicate_per_node(l, 8) == 16);  // tp x cp 4: 2 a node
  l.tp = 8;
  l.cp = 1;
  CHECK(dp_replicate_per_node(l, 8) == 1);  // one a node: nothing to shard among
  l.tp = 1;
  l.dp = 4;
  CHECK(dp_replicate_per_node(l, 8) == 1);  // every rank in one node already
  l.tp = 3;
  l.dp = 12;
  CHECK(dp_replicate_per_node(l, 8) == 1);  // a node does not hold whole TP groups
}
