// Mixture-of-experts jobs (docs/experts.md): expert state and gradients by
// the ranks that hold them, the token exchange, the MoE block alone, host time, routing, shared
// experts, dense first layers, token permutes, and expert TP folded below tp.
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
  // TP 2 with SP (unfolded): of the layer's two all-gather + reduce-scatter pairs, the block's
  // own, over the top_k copies each rank received from the EP exchange, gathered among expert TP.
  l.tp = 2;
  l.dp = 4;
  l.ep = 4;
  l.sequence_parallel = true;
  const LayerPasses tp2 = moe_block_passes(m, l, c);
  const GroupPaths paths = group_paths(c, l);
  const double T = tokens_on_gpu(m, l), row = static_cast<double>(m.shape.hidden) * 2;
  const double attention = ring_seconds(Collective::AllGather, 2, T * row, paths.tp);
  const double copies = ring_seconds(Collective::AllGather, 2, T * m.top_k * row, paths.etp);
  CHECK(tp2.forward.tp == Approx(2 * copies).epsilon(1e-12));
  CHECK(layer_passes(m, l, c).forward.tp == Approx(2 * attention + 2 * copies).epsilon(1e-12));
  CHECK(layer_work(m, l).ep_tokens == T / 2);  // each rank dispatches its own sequence shard
  // A dense model has no MoE block.
  m.experts = 0;
  const LayerPasses none = moe_block_passes(m, l, c);
  CHECK(none.forward.compute() + none.forward.comm() + none.backward_input.compute() == 0);
}

TEST_CASE("MoE: the host time each pass of the block exposes", "[job_step]") {
  // 1.5 ms a pass and expert a GPU holds (8 experts over ep 8: one): once forward and once
  // backward (the weight gradient's pass waits on nothing), twice backward when the backward
  // reruns the block (full recompute, the `moe` module); not in the block alone (the benchmark
  // hides it), not in a dense layer.
  JobModel m = moe_model(decoder("mixtral-like", 1, 4096, 14336, 8, 8, 512, 32000), 8, 2, 14336);
  ClusterSpec c = *find_cluster_preset("h100-sxm");
  JobLayout l;
  l.dp = 8;
  l.ep = 8;
  l.global_batch = 8;
  const LayerPasses before = layer_passes(m, l, c);
  c.accelerator.efficiency.moe_host_per_expert = 1.5e-3;
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
  // Per expert the GPU holds: 2 a GPU over ep 4, 8 over ep 1 (the launches after the
  // synchronization, one grouped GEMM's member each).
  l.ep = 4;
  CHECK(layer_passes(m, l, c).forward.host == Approx(3e-3));
  l.ep = 1;
  CHECK(layer_passes(m, l, c).backward_input.host == Approx(12e-3));
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
  // The step (docs/experts.md "Expert routing"): 10.098 s balanced, 12.883 s with the hot experts
  // on half the ranks, the balanced step exactly when round-robin spreads them.
  const Time t_even = run_job_step(even).result.step_time, t_hot = run_job_step(hot).result.step_time;
  CHECK(t_even == 10'098'359'084);
  CHECK(t_hot == 12'883'261'636);
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
  // EP: every rank sends its own sequence shard's copies, 1,024 of the 4,096 tokens, folded or
  // not (Megatron-Core's all-to-all dispatcher exchanges before it gathers among expert TP).
  CHECK(layer_work(m, l).ep_tokens == 1024);
  CHECK(layer_work(m, folded).ep_tokens == 1024);
  // TP: the attention block's gather and reduce-scatter stay; the MoE block's gather and
  // reduce-scatter the copies received (top_k 8 of each token) among the expert TP group: all 4
  // ranks over all 4,096 tokens unfolded, 2 ranks over 2,048 at expert TP 2, none at expert TP 1.
  const GroupPaths paths = group_paths(s.cluster, l);
  const double gather = ring_seconds(Collective::AllGather, 4, 4096.0 * 4096 * 2, paths.tp);
  const double copies = ring_seconds(Collective::AllGather, 4, 8 * 4096.0 * 4096 * 2, paths.etp);
  CHECK(layer_passes(m, l, s.cluster).forward.tp == Approx(2 * gather + 2 * copies).epsilon(1e-12));
  CHECK(layer_passes(m, folded, s.cluster).forward.tp == Approx(2 * gather).epsilon(1e-12));
  JobLayout two = l;
  two.expert_tp = 2;
  const double pair = ring_seconds(Collective::AllGather, 2, 8 * 2048.0 * 4096 * 2, group_paths(s.cluster, two).etp);
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
