// Jobs from model + cluster + layout (docs/job.md): the cost model's formulas against their
// sources, layout checks, folding, and the critical path. MoE layers: test_job_step_moe.cpp;
// ZeRO-3 and HSDP: test_job_step_zero.cpp.
#include <catch2/catch.hpp>

#include "sim/critical_path.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "job_step_bound.hpp"
#include "job_step_fixtures.hpp"
#include "models/attention_kernels.hpp"
#include "models/layer_costs.hpp"
#include "models/layout.hpp"
#include "schedules/lowering/job/job_step.hpp"
#include "schedules/lowering/search/layout_search.hpp"

using namespace stepsim;
using namespace stepsim::job_step_fixtures;

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

// The schedules that defer weight-gradient passes or pair directions hold on every rank what the
// first holds: the analytic count is the simulated peak's, rank by rank, where chunks are equal
// (GPT-3's 96 layers over 4 ranks; its head's logits are a buffer, not an activation).
TEST_CASE("chunks in flight on every device: the simulated peak's, for ZB and DualPipe", "[job_step]") {
  for (const char* schedule : {"1f1b", "zb-h1", "zb-h2", "dualpipe", "dualpipe-v"})
    for (const int m : {3, 8, 16}) {
      JobStepSpec spec;
      spec.model = gpt3();
      spec.cluster = *find_cluster_preset("a100-sxm-80gb");
      spec.cluster.accelerator.usable_memory = Bytes{1} << 50;  // the peak, not whether it fits
      JobLayout& l = spec.layout;
      l.tp = 8;
      l.pp = 4;
      l.schedule = schedule;
      l.global_batch = m;
      l.recompute = JobRecompute::None;
      if (std::string_view(schedule).rfind("dualpipe", 0) == 0 && m < 2 * l.pp) continue;  // DualPipe's minimum
      const JobStepRun run = run_job_step(spec);
      const PipelineStats st = measure(run.plan, *run.pipeline, run.timeline);
      const auto held = device_chunks(l);
      for (std::size_t d = 0; d < held.size(); ++d) {
        INFO(schedule << " m " << m << " device " << d);
        const double chunk = static_cast<double>(run.comm.chunks[static_cast<std::size_t>(held[d][0])].activation);
        // Within a message's bytes of the count (DualPipe's ends hold a boundary message too).
        CHECK(static_cast<double>(st.devices[d].peak_memory) / chunk ==
              Approx(static_cast<double>(chunks_in_flight(l, static_cast<int>(d)))).epsilon(0.005));
      }
    }
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
  // (0.0981 while each pair's TP collectives ran after its compute; 0.0947 once they ran beside
  // it; 0.0971 since a split B waits for its TP collectives, W no longer beside them.)
  CHECK(v.result.bubble == Approx(0.0971).margin(0.002));
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
  // bubble of that model (0.0981, pinned before the pairs overlapped; 0.1004 since a split B waits
  // for its TP collectives).
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
  CHECK(after.result.bubble == Approx(0.1004).margin(0.002));
  CHECK(after.result.step_time > run.result.step_time);
}

TEST_CASE("DualPipe in a job: a pair's collectives take SMs from its kernels, not from its host waits",
          "[job_step][dualpipe]") {
  // An MoE pass's host waits (moe_host_per_expert) leave the GPU without kernels: collectives running then
  // slow nothing, so a pair is slowed by contention x min(its kernels, its collectives). EP
  // exchanges made slow here (1/100 of the fabric) outlast the kernels, where that differs from
  // min(compute, collectives).
  JobStepSpec s = moe(2, 2, 1);
  s.layout.schedule = "dualpipe";
  s.cluster.node.fabric_bandwidth /= 100;
  s.cluster.accelerator.efficiency.moe_host_per_expert = 5e-3 / (s.model.experts / s.layout.ep);  // 5 ms a pass
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
  s.cluster.accelerator.efficiency.moe_host_per_expert = 50e-3;
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
    // No more than the busiest device's simulated compute: a split schedule's input gradients
    // without the contention of the TP collectives its weight gradients would hide (tp 8 here).
    REQUIRE(run.comm.chunks.front().deferred_weight_grad.gemm < 0);
    CHECK(bound <= test::device_compute_bound(run));
  }
}

TEST_CASE("DualPipe in a job: two weight copies per device, counted in memory", "[job_step][dualpipe]") {
  const JobStepRun dual = run_job_step(one_pipeline("dualpipe"));
  const JobStepRun one = run_job_step(one_pipeline("1f1b"));
  CHECK(dual.plan.stages == 8);
  CHECK(dual.comm.device_chunks[0] == std::vector<int>{0, 7});
  CHECK(dual.comm.device_chunks[5] == std::vector<int>{2, 5});
  // DeepSeek-V3 report sec. 3.2.1 (Table 2): DualPipe keeps 2x the parameters of 1F1B, less the
  // tied embedding's copy: device 0 holds stage 0's embedding and stage 7's LM head, one tensor
  // (V h / tp = 64,000 x 12,288 / 8 parameters; 2 B of weights, 4 B of gradients, 12 B of Adam).
  const std::int64_t copy = 64000LL * 12288 / 8;
  CHECK(dual.comm.chunks.back().embedding_copy == copy);
  CHECK(dual.result.memory.weights == 2 * one.result.memory.weights - 2 * copy);
  CHECK(dual.result.memory.gradients == 2 * one.result.memory.gradients - 4 * copy);
  CHECK(dual.result.memory.optimizer == 2 * one.result.memory.optimizer - 12 * copy);
  // Device 0 reduces that tensor's gradient once, with stage 0's: its stage 7 reduces all but the
  // copy.
  const JobStepSpec spec = one_pipeline("dualpipe");
  const auto reduce = [&](std::int64_t parameters) {  // rounded up to whole nanoseconds, as the plan does
    const double s = replica_collective_seconds(Collective::AllReduce, {parameters, 0}, spec.layout.grad_bytes,
                                                spec.layout, dual.comm.paths);
    return static_cast<Time>(std::ceil(s * 1e9));
  };
  const HeldParameters last = held_parameters(dual.comm.chunks.back());
  CHECK(dual.comm.dp_reduce[0][1] == reduce(last.dense - copy));
  CHECK(dual.comm.dp_reduce[0][1] < reduce(last.dense));
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

TEST_CASE("sliding-window layers: attention within the window, a CP rank's halo, each kind of layer costed",
          "[job_step][cp][window]") {
  JobModel m = gpt3();
  m.seq = 131072;
  JobLayout l;
  l.tp = 8;
  l.cp = 4;
  JobModel windowed = m;
  windowed.sliding_window = 1024;  // every layer (Mistral's way)
  const double q = 96.0 * 128, w = 1024, L = 131072.0 / 8;
  const LayerWork full = layer_work(m, l), win = layer_work(windowed, l);
  // The busiest balanced rank: rank 1 (chunks 1 and 6), 2 L w pairs (rank 0's first chunk fills
  // its window: w(w+1)/2 + (L - w) w + L w, fewer).
  CHECK(win.attention_flops == 4 * (2 * L * w) * q / 8);
  CHECK(full.attention_flops / win.attention_flops == Approx(65536.5 / 1024).epsilon(0.01));
  CHECK(win.gemm_flops == full.gemm_flops);
  // Transformer Engine's halo: ranks 1 and 2 fetch the K and V of the 1,023 keys before each of
  // their two chunks (its left window); no ring.
  CHECK(win.cp_window == LayerWork::CpWindow::Halo);
  CHECK(win.cp_halo_bytes == 2 * (w - 1) * 2 * q / 8 * 2);
  CHECK(full.cp_window == LayerWork::CpWindow::None);
  CHECK(full.cp_halo_bytes == 0);
  CHECK(win.cp_window != LayerWork::CpWindow::Gather);
  // A left window past cp - 1 chunks of 16,384: TE falls back to the all-gather.
  windowed.sliding_window = 3 * 16384 + 1;
  CHECK(layer_work(windowed, l).cp_window == LayerWork::CpWindow::Halo);
  windowed.sliding_window = 3 * 16384 + 2;
  CHECK(layer_work(windowed, l).cp_window == LayerWork::CpWindow::Gather);
  CHECK(layer_work(windowed, l).cp_halo_bytes == 0);

  // GPT-OSS's pattern, every second layer over the whole context: a chunk of 24 layers holds 12 of
  // each kind, and the model FLOPs count each layer's own pairs.
  const ClusterSpec c = *find_cluster_preset("a100-sxm-80gb");
  JobModel mixed = gpt3();
  mixed.seq = 8192;
  mixed.sliding_window = 1024;
  mixed.sliding_window_pattern = 2;
  JobLayout pl;
  pl.tp = 8;
  pl.pp = 4;
  pl.global_batch = 8;
  const LayerPasses pw = layer_passes(windowed_layer_model(mixed), pl, c);
  const LayerPasses pf = layer_passes(full_attention_layer_model(mixed), pl, c);
  // The window's 4.3x fewer pairs at 0.79 of the rate the whole context's tiles run at (8 tiles a
  // query tile and one masked, against 32 and half of one): 3.6x less time.
  const double kw = static_cast<double>(causal_attention_pairs(8192, 1024)) / 8192, kf = 8193 / 2.0;
  const auto share = [](double keys, double masked) {
    return attention_tile_share(AttentionKernel::Flash, GpuArchitecture::Ampere, AttentionPass::Forward,
                                {keys, masked, 128});
  };
  CHECK(pw.forward.attention == Approx(pf.forward.attention * kw / kf * share(kf, 0.5) / share(kw, 1.0)));
  CHECK(pw.forward.attention < pf.forward.attention / 3.5);
  for (const ChunkCost& ch : chunk_costs(mixed, pl, c)) {
    CHECK(ch.forward.attention == Approx(12 * (pw.forward.attention + pf.forward.attention)));
    CHECK(ch.forward.gemm == Approx(24 * pf.forward.gemm).epsilon(0.03));  // the LM head on the last
  }
  JobModel none = mixed;
  none.sliding_window = none.sliding_window_pattern = 0;
  const double s = 8192, pairs_cut = s * (s + 1) / 2 - static_cast<double>(causal_attention_pairs(8192, 1024));
  CHECK(step_flops(none, pl).model - step_flops(mixed, pl).model == Approx(48 * 3 * 8 * 4 * pairs_cut * q));
}

TEST_CASE("NVFP4: the FP4 peak at its own share, 7.125-byte casts, 1.125-byte weight copies, the LM head in BF16",
          "[job_step][fp8][nvfp4]") {
  ClusterSpec c = *find_cluster_preset("gb200");
  AcceleratorSpec& a = c.accelerator;
  CHECK(a.peak_fp4 == 10000e12);
  a.efficiency.fp8_mx = 0.5;
  a.efficiency.fp4 = 0.4;
  // A large GEMM, compute-bound: at the FP4 peak x gemm x fp4, against MXFP8's FP8 peak x fp8_mx.
  const GemmShape g{8192, 8192, 8192, 1, GemmPart::Mlp, TpSplit::Column};
  const double fp4 = one_gemm_seconds(g, GemmPass::Forward, a, Fp8Recipe::Nvfp4);
  const double mx = one_gemm_seconds(g, GemmPass::Forward, a, Fp8Recipe::Mx);
  CHECK(fp4 ==
        Approx(2.0 * 8192 * 8192 * 8192 / (10000e12 * 0.7 * 0.4 * gemm_wave_efficiency(8192, 8192, 1, a.tiling))));
  CHECK(mx / fp4 == Approx(10000e12 * 0.4 / (5000e12 * 0.5)));
  // Casts: an amax pass, then the row-wise copy and the Hadamard-transformed column-wise one, each
  // reading the BF16 tensor: 2 + 2 x (2 + 0.5625) = 7.125 B an element against FP8's 4.
  const std::vector<GemmShape> gemms = {{4096, 1024, 8192, 1, GemmPart::Mlp, TpSplit::Row}};
  CHECK(fp8_cast_bytes(gemms, GemmPass::Forward, false, Fp8Recipe::Nvfp4) == 7.125 * 4096 * 8192);
  CHECK(fp8_cast_bytes(gemms, GemmPass::Forward, false) == 4.0 * 4096 * 8192);
  // Weights: a row-wise and a column-wise copy, 4-bit with an E4M3 scale per 16.
  JobLayout l = nvfp4_tp8_pp2();
  CHECK(fp8_weight_copy_bytes(l, GpuArchitecture::Blackwell) == 1.125);
  // The LM head runs in BF16 (Megatron-Core's FP4 autocast wraps the decoder layers only): the
  // last chunk's GEMMs exceed the first's by the head at the BF16 rate.
  JobModel m = gpt3();
  m.shape.tied_embeddings = false;
  const auto chunks = chunk_costs(m, l, c);
  REQUIRE(chunks.size() == 2);
  const double T = 2048, h = 12288, V = 51200;
  const std::vector<GemmShape> head = {{T, V / 8, h, 1}};
  CHECK(chunks[1].forward.gemm - chunks[0].forward.gemm ==
        Approx(gemm_seconds(head, GemmPass::Forward, a, std::nullopt)).epsilon(1e-9));
  CHECK(l.head_gemms() == std::nullopt);
  JobLayout mxl = l;
  mxl.fp8_recipe = Fp8Recipe::Mx;
  CHECK(mxl.head_gemms() == Fp8Recipe::Mx);
  // Refused where there is no FP4 peak.
  CHECK_FALSE(check_accelerator_kernels(l, a));
  const auto refused = check_accelerator_kernels(l, find_cluster_preset("h100-sxm")->accelerator);
  REQUIRE(refused);
  CHECK(refused->key == "fp8_recipe");
  CHECK(refused->message == "nvfp4 needs FP4 tensor cores (b200, gb200, gb300); h100-sxm has none (no FP4 peak)");
}

TEST_CASE(
    "BF16 layers under FP8: the first and last layers' GEMMs in BF16, without FP8 copies; a prediction "
    "module's in FP8",
    "[job_step][fp8][nvfp4][bf16_layers]") {
  const ClusterSpec c = *find_cluster_preset("gb200");
  JobModel m = gpt3();  // 96 layers
  JobLayout l = nvfp4_tp8_pp2();
  l.fp8_activations = true;  // the reader's default with fp8
  const auto fp4 = chunk_costs(m, l, c);
  l.bf16_first_layers = 1;
  l.bf16_last_layers = 4;
  // Counted over the whole model, as Megatron-Core's is_first_last_bf16_layer.
  CHECK(l.bf16_layer(0, 96));
  CHECK_FALSE(l.bf16_layer(1, 96));
  CHECK_FALSE(l.bf16_layer(91, 96));
  CHECK(l.bf16_layer(92, 96));
  const auto mixed = chunk_costs(m, l, c);
  REQUIRE(mixed.size() == 2);
  // Each BF16 layer costs what a layer of the BF16 layout does, in place of an NVFP4 one.
  const LayerPasses in_fp4 = layer_passes(m, l, c), in_bf16 = layer_passes(m, bf16_layer_layout(l), c);
  CHECK(in_bf16.forward.gemm > 2 * in_fp4.forward.gemm);
  CHECK(mixed[0].forward.gemm == Approx(fp4[0].forward.gemm + in_bf16.forward.gemm - in_fp4.forward.gemm));
  CHECK(mixed[1].forward.gemm == Approx(fp4[1].forward.gemm + 4 * (in_bf16.forward.gemm - in_fp4.forward.gemm)));
  CHECK(mixed[1].backward_weight.gemm ==
        Approx(fp4[1].backward_weight.gemm + 4 * (in_bf16.backward_weight.gemm - in_fp4.backward_weight.gemm)));
  // Their inputs kept in BF16, not as NVFP4 copies; their weights without FP8 copies.
  CHECK(mixed[1].activation - fp4[1].activation == 4 * (in_bf16.activation - in_fp4.activation));
  CHECK(in_bf16.activation > in_fp4.activation);
  const std::int64_t w = layer_work(m, l).gemm_weights;
  CHECK(fp4[0].gemm_weights == 48 * w);
  CHECK(mixed[0].gemm_weights == 47 * w);
  CHECK(mixed[1].gemm_weights == 44 * w);
  CHECK(mixed[0].parameters == fp4[0].parameters);
  // A multi-token prediction module's layer stays in FP8 (its context has no layer number).
  m.mtp_layers = 1;
  const LayerStack stack(m, l, c);
  CHECK(stack.prediction_layer().forward.gemm == Approx(stack.layers(50, 1).forward.gemm));
  CHECK(stack.layers(95, 1).forward.gemm == Approx(in_bf16.forward.gemm));
  // An MoE model's dense first layers all in BF16: only its MoE layers have FP8 copies to gather.
  JobModel moe = m;
  moe.mtp_layers = 0;
  moe.experts = 8;
  moe.top_k = 2;
  moe.expert_ffn = 4 * 12288;
  moe.dense_layers = 3;
  JobLayout z = l;
  z.bf16_first_layers = 3;
  CHECK_FALSE(has_fp8_layer(moe, z, true));
  CHECK(has_fp8_layer(moe, z, false));
  z.bf16_first_layers = 2;
  CHECK(has_fp8_layer(moe, z, true));
  z.bf16_first_layers = 0;
  z.bf16_last_layers = 93;
  CHECK(has_fp8_layer(moe, z, true));
  CHECK_FALSE(has_fp8_layer(moe, z, false));
  // Without FP8 every layer is BF16 and the counts say nothing; with it, refused where they leave
  // no layer in FP8.
  JobLayout bf16 = l;
  bf16.fp8 = bf16.fp8_activations = false;
  bf16.fp8_recipe = Fp8Recipe::Tensorwise;
  CHECK_FALSE(bf16.bf16_layer(95, 96));
  CHECK(chunk_costs(m, bf16, c)[1].forward.gemm == Approx(chunk_costs(m, bf16_layer_layout(bf16), c)[1].forward.gemm));
  bf16.bf16_first_layers = 96;
  CHECK_FALSE(check_layout(gpt3(), bf16, 0));
  l.bf16_first_layers = 92;
  auto p = check_layout(gpt3(), l, 0);
  REQUIRE(p);
  CHECK(p->key == "bf16_last_layers");
  CHECK(p->message ==
        "bf16_first_layers + bf16_last_layers = 92 + 4 leave none of the 96 layers in FP8 (would fit: at most 95 "
        "together; or fp8: false)");
  l.bf16_first_layers = 91;
  CHECK_FALSE(check_layout(gpt3(), l, 0));
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
  // Without overlap: 4 collectives forward; in the backward each block's output gradient gathered
  // (it waits), QKV's and FC1's input gradients reduce-scattered under their weight gradients
  // (which outlast them here, slowed by the contention share). With it,
  // forward: the gathered input into QKV and FC1, the outputs of the projection and FC2
  // reduce-scattered; backward the other way round (input gradients).
  CHECK(a.forward.tp == Approx(4 * gather).epsilon(1e-12));
  CHECK(a.backward_input.tp == Approx(2 * gather).epsilon(1e-12));
  JobStepSpec no_async = plain;  // SP reduce-scatters beside the weight gradients whatever the key
  no_async.layout.overlap_tp_wgrad = false;
  CHECK(layer_passes(no_async.model, no_async.layout, c).backward_input.tp == a.backward_input.tp);
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
  // The step, 43.586 s -> 41.310 s (the A100 preset's default efficiencies, uncalibrated).
  CHECK(run_job_step(plain).result.step_time == 43'585'739'100);
  CHECK(run_job_step(over).result.step_time == 41'310'379'869);
  // Megatron-Core's overlap needs sequence parallelism: refused without, at the key.
  over.layout.sequence_parallel = false;
  const auto p = check_layout(over.model, over.layout, 0);
  REQUIRE(p);
  CHECK(p->key == "overlap.tp");
}

TEST_CASE("TP backward: a column-parallel GEMM's input-gradient collectives beside its own GEMMs",
          "[job_step][tp-overlap]") {
  // GPT-3 175B at TP 8 on A100 without SP: the all-reduce after QKV's and after FC1's input
  // gradient (2,048 tokens x h, BF16) runs beside that GEMM's weight gradient, what outlasts it
  // shows; overlap.tp_wgrad false (Megatron-LM of early 2021) waits for both.
  JobStepSpec s = megascale(256, 768);
  s.layout.sequence_parallel = false;
  ClusterSpec& c = s.cluster;
  c.node.fabric_bandwidth /= 40;  // slow enough that the all-reduce outlasts FC1's weight gradient, not QKV's
  const double T = 2048, h = 12288, t = 8;
  const auto wgrad = [&](GemmShape g) { return gemm_seconds({g}, GemmPass::WeightGrad, c.accelerator, std::nullopt); };
  const double qkv = wgrad({T, 3 * h / t, h}), fc1 = wgrad({T, 4 * h / t, h});
  const double ar = ring_seconds(Collective::AllReduce, 8, T * h * 2, group_paths(c, s.layout).tp);
  REQUIRE(ar > qkv);
  REQUIRE(ar > fc1);
  const LayerPasses async = layer_passes(s.model, s.layout, c);
  CHECK(async.forward.tp == Approx(2 * ar).epsilon(1e-12));
  CHECK(async.backward_input.tp == Approx((ar - qkv) + (ar - fc1)).epsilon(1e-12));
  JobLayout waits = s.layout;
  waits.overlap_tp_wgrad = false;
  const LayerPasses sync = layer_passes(s.model, waits, c);
  CHECK(sync.backward_input.tp == Approx(2 * ar).epsilon(1e-12));
  // What runs beside the weight gradients slows them by the contention share.
  const double k = c.accelerator.efficiency.contention;
  CHECK(async.backward_input.gemm - sync.backward_input.gemm == Approx(k * (qkv + fc1)).epsilon(1e-9));
  CHECK(async.forward.gemm == sync.forward.gemm);
  // A split schedule's input gradient (its weight gradient deferred) waits as without the key.
  CHECK(async.deferred_weight_grad.tp == Approx(2 * ar - async.backward_input.tp).epsilon(1e-12));
  CHECK(async.deferred_weight_grad.gemm == Approx(-k * (qkv + fc1)).epsilon(1e-9));
  CHECK(sync.deferred_weight_grad.tp == 0);
  CHECK(sync.deferred_weight_grad.gemm == 0);
}

TEST_CASE("TP backward: a split schedule's input gradient waits for its collectives", "[job_step][tp-overlap]") {
  // GPT-3 175B at TP 8, PP 4 with SP: zb-h1's B (I) runs without its W beside it, so the
  // column-parallel GEMMs' reduce-scatters wait; 1F1B's full backward keeps the overlap.
  JobStepSpec s = megascale(256, 768);
  s.layout.schedule = "zb-h1";
  s.layout.vpp = 1;
  const JobCommPlan plan = plan_job_comm(s);
  const auto& ch = plan.chunks.front();
  const StageCost& st = plan.stages.front();
  REQUIRE(ch.deferred_weight_grad.tp > 0);
  const PassSeconds split = ch.backward_input + ch.deferred_weight_grad;
  CHECK(st.backward_input_comm == static_cast<Time>(std::ceil(split.comm() * 1e9)));
  CHECK(st.backward_comm == static_cast<Time>(std::ceil(ch.backward_input.comm() * 1e9)));
  CHECK(st.backward_input_comm > st.backward_comm);
  CHECK(st.backward_input < static_cast<Time>(std::ceil(ch.backward_input.compute() * 1e9)));  // no contention
  CHECK(st.backward == static_cast<Time>(std::ceil(ch.backward_input.compute() * 1e9)) + st.backward_weight);
  // Without TP there is nothing to defer.
  JobStepSpec one = s;
  one.layout.tp = 1;
  one.layout.sequence_parallel = false;
  one.layout.dp *= 8;
  CHECK(plan_job_comm(one).chunks.front().deferred_weight_grad.tp == 0);
}

TEST_CASE("TP communication overlap: an MoE block's collectives still wait", "[job_step][tp-overlap]") {
  JobStepSpec s = qwen3_235b_tp4();
  JobLayout& l = s.layout;
  l.recompute = JobRecompute::None;
  JobLayout o = l;
  o.overlap_tp = true;
  const LayerPasses a = layer_passes(s.model, l, s.cluster), b = layer_passes(s.model, o, s.cluster);
  // The attention block (QKV, projection) is pipelined; the MoE block's gather and
  // reduce-scatter (the token dispatcher's, of the top_k 8 copies received, around grouped GEMMs)
  // show whole.
  const double T = 4096, h = 4096;
  const GroupPaths paths = group_paths(s.cluster, l);
  const double gather = ring_seconds(Collective::AllGather, 4, T * h * 2, paths.tp);
  const double copies = ring_seconds(Collective::AllGather, 4, 8 * T * h * 2, paths.etp);
  CHECK(a.forward.tp == Approx(2 * gather + 2 * copies).epsilon(1e-12));
  const auto one = [&](GemmShape g) {
    return gemm_seconds({g}, GemmPass::Forward, s.cluster.accelerator, std::nullopt);
  };
  const double attention = pipelined_tp_exposed(gather, one({T, (64 + 2 * 4) * 128 / 4.0, h}), 4) +
                           pipelined_tp_exposed(gather, one({T, h, 64 * 128 / 4.0}), 4);
  CHECK(b.forward.tp == Approx(attention + 2 * copies).epsilon(1e-12));
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
  CHECK(unfused->message.find("needs a fused attention (flash, flash2, flash3)") != std::string::npos);
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
  // The ring calls the kernel once a step, each call paying a query (key) tile's own work: 4
  // times cuDNN's 1.0 (3.0 backward) beside 65,536.5 / 128 key tiles and half of one masked; the
  // gathered K and V go through one call.
  const double tiles = 65536.5 / 128;
  CHECK(gather.forward.attention ==
        Approx(ring.forward.attention * (tiles + 0.5 + 1) / (tiles + 0.5 + 4 * 1.0)).epsilon(1e-12));
  CHECK(gather.backward_input.attention ==
        Approx(ring.backward_input.attention * (tiles + 0.5 + 3) / (tiles + 0.5 + 4 * 3.0)).epsilon(1e-12));
  // a2a: Q, K, V to head groups and the output back, each way in each pass; every rank 1/4 of the
  // heads over the whole sequence: the balanced split's pairs exactly, and the contiguous
  // split's last rank no longer sets the pace.
  l.cp_comm = CpComm::AllToAll;
  const LayerPasses a2a = layer_passes(m, l, c);
  const double there = ring_seconds(Collective::AllToAll, 4, q + kv, path);
  const double back = ring_seconds(Collective::AllToAll, 4, o, path);
  CHECK(a2a.forward.cp == Approx(there + back).epsilon(1e-12));
  CHECK(a2a.backward_input.cp == Approx(there + back).epsilon(1e-12));
  CHECK(a2a.forward.attention == Approx(gather.forward.attention).epsilon(1e-12));
  l.cp_balanced = false;
  CHECK(layer_passes(m, l, c).forward.attention == Approx(gather.forward.attention).epsilon(1e-12));
  // Heads split over tp x cp: 8 key/value heads cannot go over 4 x 4.
  l.tp = 4;
  l.dp = 2;
  const auto p = check_layout(m, l, 32);
  REQUIRE(p);
  CHECK(p->key == "cp_comm");  // the exchange asks for it
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
