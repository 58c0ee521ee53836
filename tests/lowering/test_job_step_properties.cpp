// Jobs on random layouts (dense, GQA and MoE models, Mamba-2 hybrids of MLP and of MoE layers; A100, H100, B200 and PCIe-only RTX 4090
// clusters; every schedule, ZeRO stage, recompute (by layers, by module), overlap (TP too), kernel,
// CP exchange, expert TP and dispatch, FP8 activations and Adam moment choice): what every step
// must satisfy whatever the layout. Each figure is checked against another way of getting it:
// throughput against the batch and the step time, the critical path's shares against the step,
// the step against the busiest device's compute alone, a second run against the first.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "job_step_bound.hpp"
#include "models/job_memory.hpp"
#include "models/layer_costs.hpp"
#include "models/layout.hpp"
#include "schedules/lowering/job/job_step.hpp"
#include "schedules/lowering/spec_error.hpp"

using namespace stepsim;

namespace {

JobModel model_of(int kind) {
  JobModel m;
  TransformerConfig& s = m.shape;
  s.qk_norm = false;
  if (kind == 0) {  // GPT-3 shaped, 24 layers (GeLU, tied embeddings, multi-head attention)
    s = {"gpt-24l", 24, 4096, 4 * 4096, 32, 32, 128, 51200, true, false};
    m.gated_mlp = false;
  } else if (kind == 1) {  // Llama-shaped: GQA, SwiGLU, untied
    s = {"llama-16l", 16, 4096, 14336, 32, 8, 128, 128256, false, false};
  } else if (kind == 2) {  // MoE: 8 experts, top 2
    s = {"moe-12l", 12, 2048, 5632, 16, 16, 128, 32000, false, false};
    m.experts = 8;
    m.top_k = 2;
    m.expert_ffn = 1408;
  } else if (kind == 3) {  // Nemotron-H shaped: Mamba-2, attention and squared-ReLU MLP layers, a block each
    s = {"mamba-24l", 24, 2048, 8192, 16, 8, 128, 32000, false, false};
    m.gated_mlp = false;
    m.squared_relu = true;
    m.mamba = {32, 64, 64, 8, 4};
    m.hybrid_pattern = "M-M-M*-M-M-M*-M-M-M*-M--";
  } else {  // Nemotron 3 shaped: Mamba-2, attention and MoE layers
    s = {"mamba-moe-12l", 12, 2048, 5632, 16, 16, 128, 32000, false, false};
    m.experts = 8;
    m.top_k = 2;
    m.expert_ffn = 1408;
    m.mamba = {32, 64, 64, 8, 4};
    m.hybrid_pattern = "MEM*EMEM*EME";
  }
  m.seq = 2048;
  return m;
}

template <class T>
T pick(std::mt19937_64& rng, std::initializer_list<T> xs) {
  return *(xs.begin() + static_cast<std::ptrdiff_t>(rng() % xs.size()));
}

// A random spec; the caller keeps those check_layout takes.
JobStepSpec random_spec(std::mt19937_64& rng) {
  JobStepSpec s;
  const int kind = static_cast<int>(rng() % 5);
  const bool moe = kind == 2 || kind == 4;
  s.model = model_of(kind);
  s.cluster = *find_cluster_preset(pick<const char*>(rng, {"a100-sxm-80gb", "h100-sxm", "b200", "gb200", "rtx4090"}));
  JobLayout& l = s.layout;
  l.tp = pick(rng, {1, 2, 4, 8});
  l.pp = pick(rng, {1, 2, 4});
  l.cp = pick(rng, {1, 1, 2});
  l.ep = moe ? pick(rng, {1, 2, 4}) : 1;
  l.dp = pick(rng, {1, 2, 4, 8});
  l.schedule =
      pick<const char*>(rng, {"1f1b", "interleaved-1f1b", "zb-h1", "zb-h2", "fill-drain", "dualpipe", "dualpipe-v"});
  l.vpp = l.schedule == "interleaved-1f1b" ? pick(rng, {2, 3}) : 1;
  l.zero = l.pp == 1 ? pick(rng, {0, 1, 2, 3}) : pick(rng, {0, 1, 2});
  l.micro_batch = pick(rng, {1, 2});
  l.global_batch = static_cast<std::int64_t>(l.micro_batch) * l.dp * l.pp * pick(rng, {1, 2, 4});
  l.recompute = pick(rng, {JobRecompute::None, JobRecompute::Selective, JobRecompute::Full});
  l.attention = pick(rng, {AttentionKernel::Flash, AttentionKernel::Unfused});
  l.sequence_parallel = l.tp > 1 && rng() % 2 == 0;
  l.overlap_grad_reduce = rng() % 2 == 0;
  l.overlap_param_gather = rng() % 2 == 0;
  l.overlap_pp = rng() % 4 != 0;
  l.overlap_pairs = rng() % 2 == 0;
  l.fp8 = s.cluster.accelerator.peak_fp8 > 0 && rng() % 4 == 0;
  l.grad_bytes = pick(rng, {2, 4});
  l.cp_balanced = rng() % 2 == 0;
  l.cp_comm = pick(rng, {CpComm::P2p, CpComm::AllGather, CpComm::AllToAll});
  l.expert_tp = moe ? pick(rng, {0, 0, 1, 2}) : 0;
  l.overlap_tp = rng() % 3 == 0;
  l.fp8_activations = l.fp8 && rng() % 2 == 0;
  l.adam_moment_bytes = pick(rng, {4, 2});
  if (l.recompute == JobRecompute::Full && rng() % 3 == 0) l.recompute_layers = pick(rng, {0, 1});
  if (l.recompute == JobRecompute::Selective && rng() % 3 == 0)
    l.recompute_modules = rng() % 2 == 0 ? std::uint8_t{kRecomputeCoreAttn} : std::uint8_t{0};
  if (moe) l.ep_dispatch = pick(rng, {EpDispatch::AllToAll, EpDispatch::PerNode});
  // A framework slower than the network, now and then (DeepSpeed 0.3's ZeRO-3 and its regather).
  if (rng() % 5 == 0) l.dp_bandwidth = pick<std::int64_t>(rng, {10'000'000'000, 50'000'000'000});
  l.zero3_fetch = rng() % 4 == 0 ? Zero3Fetch::Module : Zero3Fetch::Layer;
  l.master_weights = rng() % 4 == 0 ? MasterWeights::Model : MasterWeights::Optimizer;
  // torchtitan's op policy, on the dense blocks with FlashAttention it is defined for.
  if (kind < 2 && l.attention == AttentionKernel::Flash && rng() % 4 == 0) l.recompute = JobRecompute::Op;
  // HSDP now and then: replicas of the sharded state, a divisor of dp (the layout check refuses
  // what does not hold whole EP groups).
  if (l.zero >= 1 && rng() % 4 == 0) {
    std::vector<int> divisors;
    for (int r = 2; r <= l.dp; ++r)
      if (l.dp % r == 0) divisors.push_back(r);
    if (!divisors.empty()) l.dp_replicate = divisors[rng() % divisors.size()];
  }
  l.keep_gathered = rng() % 5 == 0;  // FSDP's reshard_after_forward=False (zero 3; the others ignore it)
  return s;
}

Time sum_of(const std::vector<CriticalShare>& shares) {
  Time t = 0;
  for (const auto& x : shares) t += x.time;
  return t;
}

void check_step(const JobStepSpec& spec, const JobStepRun& run) {
  const JobStepResult& r = run.result;
  const JobLayout& l = spec.layout;
  REQUIRE(r.step_time > 0);
  CHECK(r.gpus == l.ranks());
  // Throughput is the batch over the step: tokens/s per GPU x GPUs x step = global batch x seq.
  const double tokens = r.tokens_per_s_per_gpu * static_cast<double>(r.gpus) * static_cast<double>(r.step_time) * 1e-9;
  CHECK(tokens == Approx(static_cast<double>(l.global_batch * spec.model.seq)).epsilon(1e-9));
  // Model FLOPs never exceed hardware FLOPs; both are below the peak they are counted against.
  CHECK(r.mfu > 0);
  CHECK(r.mfu <= r.hfu * (1 + 1e-12));
  CHECK(r.hfu < 1);
  CHECK(r.model_tflops_per_gpu / r.hardware_tflops_per_gpu == Approx(r.mfu / r.hfu).epsilon(1e-9));
  // One layer's passes by kind of kernel sum to its forward and backward.
  CHECK(r.layer_forward.compute() + r.layer_forward.comm() == Approx(r.layer_forward_s).epsilon(1e-12));
  CHECK(r.layer_backward.compute() + r.layer_backward.comm() == Approx(r.layer_backward_s).epsilon(1e-12));
  CHECK(r.layer_forward.gemm > 0);
  CHECK(r.bubble >= 0);
  CHECK(r.bubble < 1);
  // The critical path accounts for the whole step, by kind and by resource; what it spends in
  // communication of each kind lies within the step.
  CHECK(sum_of(r.critical_by_kind) == r.step_time);
  CHECK(sum_of(r.critical_by_resource) == r.step_time);
  for (const Time t : {r.exposed_tp, r.exposed_pp, r.exposed_dp, r.exposed_cp, r.exposed_ep}) {
    CHECK(t >= 0);
    CHECK(t <= r.step_time);
  }
  // On the pipeline path the exposure by kind is the part of the critical path's time in those
  // ops (the in-pass collectives split between TP, CP and EP, the sends, the DP collectives)
  // during which the compute that waits for them stands idle.
  const auto on_path = [&](const char* kind) {
    for (const auto& x : r.critical_by_kind)
      if (x.what == kind) return x.time;
    return Time{0};
  };
  const Time exposed = r.exposed_tp + r.exposed_cp + r.exposed_ep + r.exposed_pp + r.exposed_dp;
  if (run.pipeline) {
    CHECK(r.exposed_tp + r.exposed_cp + r.exposed_ep <= on_path("TP/CP/EP collectives"));
    CHECK(r.exposed_pp <= on_path("PP sends"));
    CHECK(r.exposed_dp <= on_path("DP/ZeRO collectives"));
    // One device: the path crosses its compute stream's idle time in communication, but where a
    // result waits out a link's latency, and nowhere else.
    if (run.pipeline->devices == 1) {
      const Time idle = r.step_time - resource_busy(run.graph(), run.timeline)[run.pipeline->compute[0]];
      CHECK(exposed <= idle);
      CHECK(exposed + on_path("waits (latency)") >= idle);
    }
  } else if (run.fsdp) {
    // ZeRO-3's one card: its gathers and reductions, likewise (the optimizer runs after the graph;
    // TP's collectives ride inside the compute ops there, counted apart).
    const Time idle =
        r.step_time - on_path("optimizer") - resource_busy(run.graph(), run.timeline)[run.fsdp->compute[0]];
    CHECK(r.exposed_dp <= idle);
    CHECK(r.exposed_dp + on_path("waits (latency)") >= idle);
  }
  if (l.tp == 1) CHECK(r.exposed_tp == 0);
  if (l.pp == 1) CHECK(r.exposed_pp == 0);
  if (l.cp == 1) CHECK(r.exposed_cp == 0);
  if (l.ep == 1) CHECK(r.exposed_ep == 0);
  // Memory: every part counted, activations present.
  for (const Bytes b : {r.memory.weights, r.memory.gradients, r.memory.optimizer, r.memory.buffers}) CHECK(b >= 0);
  CHECK(r.memory.activations > 0);
  CHECK(r.capacity == spec.cluster.accelerator.usable_memory);
  // The analytic figure (the pre-check that refuses a layout, the search's memory prune) is a
  // lower bound on the simulated one: a layout it refuses cannot fit.
  if (run.pipeline) CHECK(job_memory(spec.model, l, run.comm.chunks).total() <= r.memory.total());
  // The report's rank is the most loaded of every rank's, rank by rank the analytic figure below each.
  REQUIRE(r.memory_by_rank.size() == device_chunks(l).size());
  CHECK(r.memory.total() == most_loaded(r.memory_by_rank).total());
  CHECK(r.memory.device == most_loaded(r.memory_by_rank).device);
  if (run.pipeline) {
    const std::vector<JobMemory> analytic = job_memory_by_rank(spec.model, l, run.comm.chunks);
    for (std::size_t d = 0; d < analytic.size(); ++d) {
      CHECK(analytic[d].weights + analytic[d].gradients + analytic[d].optimizer ==
            r.memory_by_rank[d].weights + r.memory_by_rank[d].gradients + r.memory_by_rank[d].optimizer);
      CHECK(analytic[d].total() <= r.memory_by_rank[d].total());
    }
  }
  // ... device by device: each one's chunks in flight at its smallest chunk's activations are
  // no more than its simulated peak.
  if (run.pipeline) {
    const PipelineStats st = measure(run.plan, *run.pipeline, run.timeline);
    const auto held = device_chunks(l);
    for (std::size_t d = 0; d < held.size(); ++d) {
      Bytes smallest = -1;
      for (int k : held[d]) {
        const Bytes a = run.comm.chunks[static_cast<std::size_t>(k)].activation;
        if (smallest < 0 || a < smallest) smallest = a;
      }
      INFO("device " << d << " of " << held.size());
      CHECK(smallest * chunks_in_flight(l, static_cast<int>(d)) <= st.devices[d].peak_memory);
    }
  }
  // No device finishes before its own compute: the step is at least the busiest device's
  // forward, backward and weight-gradient work plus its optimizer (FSDP too: its one device).
  CHECK(r.step_time >= test::device_compute_bound(run));
  CHECK(to_s(r.step_time) >= test::mean_compute_seconds(spec, r.microbatches) * (1 - 1e-9));
}

}  // namespace

TEST_CASE("jobs on random layouts: throughput, FLOPs, critical path, memory and compute bound agree",
          "[job_step][properties]") {
  std::mt19937_64 rng(2026);
  int ran = 0, refused = 0;
  for (int trial = 0; ran < 400 && trial < 8000; ++trial) {
    const JobStepSpec spec = random_spec(rng);
    if (check_layout(spec.model, spec.layout, spec.layout.ranks())) {
      ++refused;
      continue;
    }
    const JobLayout& l = spec.layout;
    INFO("trial " << trial << ": " << spec.model.shape.name << " on " << spec.cluster.accelerator.name << ", tp "
                  << l.tp << " pp " << l.pp << " v " << l.vpp << " dp " << l.dp << " cp " << l.cp << " ep " << l.ep
                  << " zero " << l.zero << " dp_replicate " << l.dp_replicate << " " << l.schedule << " mbs "
                  << l.micro_batch << " gbs " << l.global_batch << " overlap pp " << l.overlap_pp << " cp_comm " << cp_comm_name(l.cp_comm) << " expert tp "
                  << l.expert_tp << " overlap tp " << l.overlap_tp << " fp8 " << l.fp8 << "/" << l.fp8_activations
                  << " recompute " << static_cast<int>(l.recompute) << " layers " << l.recompute_layers);
    JobStepRun run;
    try {
      run = run_job_step(spec);
    } catch (const SpecError& e) {  // an order this schedule cannot run (blocking sends): refused by name
      CHECK(std::string(e.key()).rfind("layout", 0) == 0);
      ++refused;
      continue;
    }
    ++ran;
    check_step(spec, run);
    // The same spec gives the same step, to the nanosecond and the byte.
    const JobStepRun again = run_job_step(spec);
    CHECK(again.result.step_time == run.result.step_time);
    CHECK(again.result.memory.total() == run.result.memory.total());
    CHECK(again.result.exposed_dp == run.result.exposed_dp);
  }
  CHECK(ran == 400);
  CHECK(refused > 0);  // the draws do reach layouts that do not divide
}

// What a setting promises, checked on random layouts: a higher ZeRO stage keeps no more state per
// GPU, and recomputing keeps no more activations. Each pair differs in that one key.
TEST_CASE("jobs on random layouts: ZeRO stages and recompute never cost memory", "[job_step][properties]") {
  std::mt19937_64 rng(20261204);
  int pairs = 0, fetches = 0, replicated = 0;
  for (int trial = 0; pairs < 300 && trial < 20000; ++trial) {
    JobStepSpec spec = random_spec(rng);
    JobLayout& l = spec.layout;
    if (l.zero >= 3) l.zero = 2;  // FSDP is its own path: compared with zero 2 below where pp is 1
    if (check_layout(spec.model, l, l.ranks())) continue;
    INFO("trial " << trial << ": " << spec.model.shape.name << " tp " << l.tp << " pp " << l.pp << " v " << l.vpp
                  << " dp " << l.dp << " cp " << l.cp << " ep " << l.ep << " zero " << l.zero << " " << l.schedule);
    auto state = [&](const JobLayout& x) {
      const JobMemory m = job_memory(spec.model, x, chunk_costs(spec.model, x, spec.cluster));
      return m.weights + m.gradients + m.optimizer;
    };
    for (int z = l.zero + 1; z <= (l.pp == 1 ? 3 : 2); ++z) {
      JobLayout higher = l;
      higher.zero = z;
      if (check_layout(spec.model, higher, higher.ranks())) continue;
      CHECK(state(higher) <= state(l));
      ++pairs;
    }
    // HSDP: replicas of the shards hold at least what one shard group of every rank holds, and
    // exactly dp_replicate times its sharded state where nothing else differs.
    if (l.dp_replicate > 1) {
      JobLayout one = l;
      one.dp_replicate = 1;
      CHECK(state(l) >= state(one));
      const JobMemory a = job_memory(spec.model, l, chunk_costs(spec.model, l, spec.cluster));
      const JobMemory b = job_memory(spec.model, one, chunk_costs(spec.model, one, spec.cluster));
      CHECK(static_cast<double>(a.optimizer) == Approx(static_cast<double>(b.optimizer) * l.dp_replicate).epsilon(1e-9));
      CHECK(a.activations == b.activations);
      ++replicated;
    }
    JobLayout none = l, full = l;
    none.recompute = JobRecompute::None;
    full.recompute = JobRecompute::Full;
    full.recompute_layers = -1;
    if (check_layout(spec.model, none, none.ranks()) || check_layout(spec.model, full, full.ranks())) continue;
    const auto activations = [&](const JobLayout& x) {
      return job_memory(spec.model, x, chunk_costs(spec.model, x, spec.cluster)).activations;
    };
    CHECK(activations(full) <= activations(none));
    // ZeRO-3 gathering by module holds no more than gathering by layer (a module is part of a
    // layer), and the rest of memory is the same.
    if (l.pp == 1) {
      JobLayout by_layer = l, by_module = l;
      by_layer.zero = by_module.zero = 3;
      by_layer.zero3_fetch = Zero3Fetch::Layer;
      by_module.zero3_fetch = Zero3Fetch::Module;
      if (check_layout(spec.model, by_layer, by_layer.ranks())) continue;
      const auto memory = [&](const JobLayout& x) {
        return job_memory(spec.model, x, chunk_costs(spec.model, x, spec.cluster));
      };
      JobMemory a = memory(by_layer);
      const JobMemory b = memory(by_module);
      CHECK(b.buffers <= a.buffers);
      CHECK(a.total() - b.total() == a.buffers - b.buffers);
      if (spec.model.experts > 0) CHECK(a.buffers == b.buffers);  // MoE layers count by layer either way
      ++fetches;
      // FP32 weights as the master (PyTorch FSDP) hold no more than BF16 weights beside one: no
      // BF16 shard, the gradients' shards in FP32 (less where they are reduced in FP32 anyway);
      // nothing but the weights, the gradients and the optimizer's state moves.
      JobLayout bf16 = by_layer, fp32 = by_layer, fp32_grads = by_layer;
      bf16.master_weights = fp32_grads.master_weights = MasterWeights::Optimizer;
      fp32.master_weights = MasterWeights::Model;
      fp32_grads.grad_bytes = 4;
      const JobMemory c = memory(fp32);
      if (l.master_weights == MasterWeights::Model) a = memory(bf16);
      CHECK(c.total() <= a.total());
      if (bf16.grad_bytes == 4) CHECK(c.total() < a.total());
      CHECK(c.gradients == memory(fp32_grads).gradients);
      CHECK(c.buffers == a.buffers);
      CHECK(c.activations == a.activations);
      // Keeping each layer's gathered weights to its backward holds no less than gathering again,
      // in buffers alone (the whole model's BF16 weights against two layers' or two modules').
      JobLayout again = by_layer, kept = by_layer;
      again.keep_gathered = false;
      kept.keep_gathered = true;
      const JobMemory g = memory(again), k = memory(kept);
      CHECK(k.buffers >= g.buffers);
      CHECK(k.total() - g.total() == k.buffers - g.buffers);
    }
  }
  CHECK(pairs >= 300);
  CHECK(fetches >= 40);
  CHECK(replicated >= 10);  // 16 with this seed
}

// Where each group's collectives run, on random layouts: a ring across nodes is at least one NIC's
// share per member (one member on a node) and at most what the node's NICs carry, k of them for k
// members, and what its hops inside the node allow; a member's own link (all-to-all, sends) is
// one NIC's share however many members share the node; inside a node both are the fabric.
TEST_CASE("group paths on random layouts: rings stripe over the members' NICs, never past the node's",
          "[job_step][properties][collectives]") {
  std::mt19937_64 rng(20261205);
  int groups = 0, striped = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const JobStepSpec spec = random_spec(rng);
    const ClusterSpec& c = spec.cluster;
    const JobLayout& l = spec.layout;
    if (check_layout(spec.model, l, l.ranks())) continue;
    const GroupPaths p = group_paths(c, l);
    const Efficiency& e = c.accelerator.efficiency;
    const double share = static_cast<double>(c.network.nic_bandwidth) * c.network.nics / c.node.gpus * e.network;
    const double node = static_cast<double>(c.network.nic_bandwidth) * c.network.nics * e.network;
    const double fabric =
        (c.node.fabric_bandwidth > 0 ? static_cast<double>(c.node.fabric_bandwidth)
                                     : static_cast<double>(c.node.pcie_bandwidth) / (c.node.p2p ? 1.0 : 2.0)) *
        e.fabric;
    INFO("trial " << trial << " on " << c.accelerator.name << ": tp " << l.tp << " cp " << l.cp << " dp " << l.dp
                  << " ep " << l.ep << " cap " << l.dp_bandwidth);
    const auto check_path = [&](const PathBandwidth& q, bool capped) {
      ++groups;
      if (!q.inter_node) {
        CHECK(q.bytes_per_second == Approx(fabric));
        CHECK(q.ring_bytes_per_second == Approx(capped ? std::min(fabric, double(l.dp_bandwidth)) : fabric));
        return;
      }
      CHECK(q.bytes_per_second == Approx(share));
      CHECK(q.ring_bytes_per_second <= node * (1 + 1e-12));
      if (capped) {
        CHECK(q.ring_bytes_per_second <= static_cast<double>(l.dp_bandwidth));
      } else {
        CHECK(q.ring_bytes_per_second >= q.bytes_per_second * (1 - 1e-12));
        if (q.ring_bytes_per_second > q.bytes_per_second * (1 + 1e-12)) ++striped;
      }
    };
    const bool cap = l.dp_bandwidth > 0;
    check_path(p.tp, false);
    check_path(p.cp, false);
    check_path(p.ep, false);
    check_path(p.dp, cap);
    check_path(p.edp, cap);
    check_path(p.dp_replica, cap);
  }
  CHECK(groups > 1000);
  CHECK(striped > 0);  // the draws reach groups with several members on a node across nodes
}
