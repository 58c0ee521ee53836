// ZeRO-3 and HSDP jobs (docs/job.md "ZeRO-3 / FSDP", docs/memory.md "HSDP"): a recomputed layer's regather,
// weights kept gathered, shards inside replicas and their all-reduce across them.
#include <catch2/catch.hpp>

#include "sim/critical_path.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "job_step_bound.hpp"
#include "job_step_fixtures.hpp"
#include "models/layer_costs.hpp"
#include "models/layout.hpp"
#include "schedules/lowering/job/job_step.hpp"
#include "schedules/lowering/search/layout_search.hpp"

using namespace stepsim;
using namespace stepsim::job_step_fixtures;

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
  CHECK(kept.result.memory.buffers - again.result.memory.buffers ==
        Approx(2 * (2 * layer - 8 * h * h) + 4 * (layer - 4 * h * h)));
  CHECK(kept.result.memory.buffers - again.result.memory.buffers == Approx(64 * h * h).epsilon(1e-3));
  CHECK(kept.result.memory.total() - again.result.memory.total() ==
        kept.result.memory.buffers - again.result.memory.buffers);
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

TEST_CASE("ZeRO 2 over micro-batches: each one's gradients reduce-scattered, or accumulated whole and reduced once",
          "[job_step][zero2]") {
  // MegaScale's GPT-3 on 512 A100: tp 8, pp 8 (v 6), dp 8, 8 micro-batches per pipeline, the
  // gradient reductions not overlapped (its fixture).
  JobStepSpec s = megascale(512, 64);
  s.layout.zero = 1;
  REQUIRE(s.layout.microbatches() == 8);
  const JobStepRun one = run_job_step(s);
  s.layout.zero = 2;
  s.layout.zero2_accumulate = Zero2Accumulate::Whole;
  const JobStepRun whole = run_job_step(s);
  s.layout.zero2_accumulate = Zero2Accumulate::Sharded;
  const JobStepRun sharded = run_job_step(s);
  CHECK(sharded.spec.layout.reduces_every_micro_batch());
  CHECK_FALSE(whole.spec.layout.reduces_every_micro_batch());

  // The DP ops of device 0: a reduction per chunk (6) and the gather; reducing every
  // micro-batch, one per chunk and micro-batch (48). Its dp link serves m times the reductions.
  const auto dp_ops = [](const JobStepRun& r) { return std::count(r.kinds.begin(), r.kinds.end(), JobOpKind::DpComm); };
  const auto dp_busy = [](const JobStepRun& r) {
    const OpGraph& g = r.graph();
    for (ResourceId x = 0; x < g.resource_count(); ++x)
      if (g.resource(x).name == "d0 dp") return g.busy(x);
    return Time{-1};
  };
  const std::int64_t devices = 8;  // one pipeline simulated
  CHECK(dp_ops(one) == devices * (6 + 1));
  CHECK(dp_ops(whole) == dp_ops(one));
  CHECK(dp_ops(sharded) == devices * (6 * 8 + 1));
  Time reduce = 0;
  for (Time t : one.comm.dp_reduce[0]) reduce += t;
  CHECK(dp_busy(one) == reduce + one.comm.dp_gather[0]);
  CHECK(dp_busy(sharded) == 8 * reduce + one.comm.dp_gather[0]);

  // Accumulated whole: zero 1's step and memory, gradient for gradient. Sharded: the gradients an
  // eighth (sharded over the 8 dp ranks) and the step longer, the device waiting for each.
  CHECK(whole.result.step_time == one.result.step_time);
  CHECK(whole.result.memory.gradients == one.result.memory.gradients);
  CHECK(sharded.result.memory.gradients * 8 == Approx(one.result.memory.gradients).epsilon(1e-6));
  CHECK(sharded.result.memory.weights == one.result.memory.weights);
  CHECK(sharded.result.step_time > one.result.step_time);
  CHECK(sharded.result.exposed_dp > one.result.exposed_dp);

  // Overlapped with the backward: each reduction slows its backward by the contention share, so
  // the step costs more than zero 1's but less than waiting for every reduction.
  s.layout.overlap_grad_reduce = true;
  const JobStepRun overlapped = run_job_step(s);
  s.layout.zero = 1;
  const JobStepRun one_overlapped = run_job_step(s);
  CHECK(overlapped.result.step_time > one_overlapped.result.step_time);
  CHECK(overlapped.result.step_time < sharded.result.step_time);

  // One micro-batch a step: the two ways are one, and are zero 1's step with the gradients sharded.
  s = megascale_one_stage(8, 1, 8);  // tp 8, dp 8, no pipeline
  REQUIRE(s.layout.microbatches() == 1);
  const JobStepRun one1 = run_job_step(s);
  s.layout.zero = 2;
  const JobStepRun sharded1 = run_job_step(s);
  s.layout.zero2_accumulate = Zero2Accumulate::Whole;
  const JobStepRun whole1 = run_job_step(s);
  CHECK(sharded1.result.step_time == one1.result.step_time);
  CHECK(whole1.result.step_time == one1.result.step_time);
  CHECK(whole1.result.memory.gradients == sharded1.result.memory.gradients);
  CHECK(sharded1.result.memory.gradients * 8 == Approx(one1.result.memory.gradients).epsilon(1e-6));
}
