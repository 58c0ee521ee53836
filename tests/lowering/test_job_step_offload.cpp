// The optimizer on the host (layout offload_optimizer; docs/memory.md "The optimizer on the host"):
// its state leaves the GPU for the host's memory, its step becomes copies over the GPU's host link
// and Adam in host memory shared by the node's GPUs, and the book's rule (figures 10-14/10-15)
// decides where a BF16 gradient becomes FP32.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "job_step_fixtures.hpp"
#include "models/job_memory.hpp"
#include "models/layer_costs.hpp"
#include "models/layout.hpp"
#include "models/offload.hpp"
#include "schedules/lowering/job/job_step.hpp"

using namespace stepsim;
using namespace stepsim::job_step_fixtures;

namespace {
// A phase's seconds as the step holds them: rounded up to the nanosecond.
Time ns(double seconds) { return static_cast<Time>(std::ceil(seconds * 1e9)); }

// Qwen3-8B at the design desk's 8,192 tokens, ZeRO-3 over one host of 8 RTX 4090 (PCIe 4.0, one
// 8-channel DDR5-4800 socket: the book's host), BF16 gradients, full recompute.
JobStepSpec qwen3_8b_on_one_4090_host() {
  JobStepSpec s =
      data_parallel_job(decoder("qwen3-8b", 36, 4096, 12288, 32, 8, 128, 151936), 8192, "rtx4090", 8, 3, 16);
  s.layout.recompute = JobRecompute::Full;
  s.layout.grad_bytes = 2;
  return s;
}
}  // namespace

TEST_CASE("Optimizer on the host: the master weights and Adam's moments leave the GPU", "[job_step][offload]") {
  JobStepSpec s = qwen3_8b_on_one_4090_host();
  const JobMemory on_gpu = job_memory(s.model, s.layout, chunk_costs(s.model, s.layout, s.cluster));
  s.layout.offload_optimizer = true;
  const JobMemory off = job_memory(s.model, s.layout, chunk_costs(s.model, s.layout, s.cluster));
  const double params = static_cast<double>(total_parameters(s.model));
  CHECK(params == Approx(8.19e9).epsilon(1e-3));  // Qwen3-8B: 8,190,735,360
  // On the GPU: 12 B a parameter of its shard (master 4, m 4, v 4); offloaded, none of it.
  CHECK(static_cast<double>(on_gpu.optimizer) == Approx(12 * params / 8).epsilon(1e-6));
  CHECK(off.optimizer == 0);
  CHECK(off.total() == on_gpu.total() - on_gpu.optimizer);
  CHECK(off.weights == on_gpu.weights);
  CHECK(off.gradients == on_gpu.gradients);
  CHECK(off.buffers == on_gpu.buffers);
  // On the host: the same 12 B and the FP32 gradient shard Adam reads, 4 B: 15.26 GiB a GPU.
  CHECK(static_cast<double>(off.host) == Approx(16 * params / 8).epsilon(1e-6));
  CHECK(static_cast<double>(off.host) / (1 << 30) == Approx(15.26).epsilon(1e-3));
  CHECK(on_gpu.host == 0);
  // A node of 8 holds its 8 GPUs' shards: 122.1 of the preset's 512 GiB.
  const std::vector<JobMemory> ranks = job_memory_by_rank(s.model, s.layout, chunk_costs(s.model, s.layout, s.cluster));
  CHECK(host_memory_per_node(ranks, s.cluster, 8) == 8 * off.host);
  CHECK(host_memory_per_node(ranks, s.cluster, 2) == 2 * off.host);  // a job of 2 GPUs uses 2 of the node's
  // 28.9 GiB on the GPU without offload (the analytic count), over the 4090's 22 usable; 17.5 with it.
  CHECK(static_cast<double>(on_gpu.total()) / (1 << 30) == Approx(28.9).epsilon(2e-3));
  CHECK(static_cast<double>(off.total()) / (1 << 30) == Approx(17.51).epsilon(1e-3));
}

TEST_CASE("Optimizer on the host: the step's copies, Adam in shared host memory, the book's conversion rule",
          "[job_step][offload]") {
  JobStepSpec s = qwen3_8b_on_one_4090_host();
  s.layout.offload_optimizer = true;
  const ClusterSpec& c = s.cluster;
  const HeldParameters held = held_parameters(device_chunks(s.layout)[0], chunk_costs(s.model, s.layout, c));
  const double shard = static_cast<double>(held.dense) / 8;    // ZeRO-3 over 8: elements of the GPU's shard
  const double link = 32e9 * c.accelerator.efficiency.fabric;  // PCIe 4.0 x16 at the fabric share
  const double host = 307.2e9 / 8;                             // the socket's bandwidth, shared by 8 GPUs
  const double hbm = 1008e9 * c.accelerator.efficiency.memory;
  const HostOptimizerStep step = host_optimizer_step(s.layout, c, held);
  // Adam: 30 B a parameter in host memory (master, m and v read and written, the FP32 gradient
  // read, the BF16 weights written): 0.80 s at 38.4 GB/s.
  CHECK(step.adam == Approx(30 * shard / host).epsilon(1e-12));
  CHECK(step.adam == Approx(0.800).epsilon(1e-3));
  CHECK(step.weights_up == Approx(2 * shard / link).epsilon(1e-12));
  // The book's rule with the host's bandwidth a GPU's share: B* = 1 / (3 (1/38.4 - 1/806.4)) GB/s =
  // 13.4 GB/s, below the link's 25.6: convert on the GPU and send FP32 (3G / Cg + 2G / B).
  CHECK(offload_break_even_bandwidth(host, hbm) / 1e9 == Approx(13.44).epsilon(1e-3));
  CHECK(step.converted_on_gpu);
  const double g = 2 * shard;  // the BF16 gradient shard, bytes
  CHECK(step.gradients_down == Approx(3 * g / hbm + 2 * g / link).epsilon(1e-6));
  CHECK(step.total() == Approx(step.gradients_down + step.adam + step.weights_up));
  CHECK(optimizer_seconds(s.layout, c, held) == step.total());
  // One GPU to the socket: B* = 147 GB/s as in the book (figure 10-15's 307.2 and 1,008 GB/s), over
  // the link: send BF16, convert on the host (G / B + 3G / Cc).
  ClusterSpec one = c;
  one.node.gpus = 1;
  CHECK(offload_break_even_bandwidth(307.2e9, 1008e9) / 1e9 == Approx(147).epsilon(5e-3));
  const HostOptimizerStep alone = host_optimizer_step(s.layout, one, held);
  CHECK_FALSE(alone.converted_on_gpu);
  CHECK(alone.gradients_down == Approx(g / link + 3 * g / 307.2e9).epsilon(1e-6));
  CHECK(alone.adam == Approx(step.adam / 8).epsilon(1e-12));
  // FP32 gradients are sent as they are.
  s.layout.grad_bytes = 4;
  CHECK(host_optimizer_step(s.layout, c, held).gradients_down == Approx(4 * shard / link).epsilon(1e-12));
}

TEST_CASE("Optimizer on the host: the step waits for the host's update", "[job_step][offload]") {
  JobStepSpec s = qwen3_8b_on_one_4090_host();
  const JobStepRun gpu = run_job_step(s);
  s.layout.offload_optimizer = true;
  const JobStepRun host = run_job_step(s);
  // The optimizer follows the ZeRO-3 step's graph: the step grows by the host step less the GPU's.
  REQUIRE(host.comm.optimizer.size() == 1);
  const HeldParameters held = held_parameters(host.comm.device_chunks[0], host.comm.chunks);
  const Time host_step = ns(host_optimizer_step(s.layout, s.cluster, held).total());
  CHECK(host.comm.optimizer[0] == host_step);
  CHECK(host.result.step_time - gpu.result.step_time == host.comm.optimizer[0] - gpu.comm.optimizer[0]);
  CHECK(to_s(host.comm.optimizer[0]) == Approx(1.047).epsilon(1e-3));
  CHECK(host.result.memory.host > 0);
}

TEST_CASE("Optimizer on the host: a pipeline's ranks each step their own shard", "[job_step][offload]") {
  JobStepSpec s = small_fp8_job();  // tp 2, pp 2, dp 2, zero 1 on H100
  s.layout.offload_optimizer = true;
  const JobStepRun run = run_job_step(s);
  REQUIRE(run.comm.optimizer.size() == 2);
  for (std::size_t d = 0; d < 2; ++d) {
    const HeldParameters held = held_parameters(run.comm.device_chunks[d], run.comm.chunks);
    CHECK(run.comm.optimizer[d] == ns(host_optimizer_step(s.layout, s.cluster, held).total()));
    CHECK(run.result.memory_by_rank[d].optimizer == 0);
    CHECK(static_cast<double>(run.result.memory_by_rank[d].host) ==
          Approx(16 * state_bytes(held, s.layout, 1, true)).epsilon(1e-9));
  }
}

TEST_CASE("Optimizer on the host: a share of it, the rest stepped on the GPU beside the host's part",
          "[job_step][offload]") {
  JobStepSpec s = qwen3_8b_on_one_4090_host();
  const JobMemory on_gpu = job_memory(s.model, s.layout, chunk_costs(s.model, s.layout, s.cluster));
  s.layout.offload_optimizer = true;
  const JobMemory all = job_memory(s.model, s.layout, chunk_costs(s.model, s.layout, s.cluster));
  s.layout.offload_fraction = 0.25;
  const JobMemory quarter = job_memory(s.model, s.layout, chunk_costs(s.model, s.layout, s.cluster));
  // Memory in proportion: three quarters of the optimizer stay, a quarter of the host's share goes.
  CHECK(static_cast<double>(quarter.optimizer) == Approx(0.75 * static_cast<double>(on_gpu.optimizer)).epsilon(1e-9));
  CHECK(static_cast<double>(quarter.host) == Approx(0.25 * static_cast<double>(all.host)).epsilon(1e-9));
  const HeldParameters held = held_parameters(device_chunks(s.layout)[0], chunk_costs(s.model, s.layout, s.cluster));
  s.layout.offload_fraction = 1;
  const HostOptimizerStep whole = host_optimizer_step(s.layout, s.cluster, held);
  s.layout.offload_fraction = 0.25;
  const HostOptimizerStep part = host_optimizer_step(s.layout, s.cluster, held);
  CHECK(part.adam == Approx(0.25 * whole.adam).epsilon(1e-12));
  CHECK(part.weights_up == Approx(0.25 * whole.weights_up).epsilon(1e-12));
  CHECK(whole.gpu == 0);
  // The GPU's three quarters at its HBM rate, beside the host's part: the longer of the two.
  s.layout.offload_optimizer = false;
  CHECK(part.gpu == Approx(0.75 * optimizer_seconds(s.layout, s.cluster, held)).epsilon(1e-12));
  CHECK(part.total() == std::max(part.gpu, part.host()));
  CHECK(part.total() == part.host());  // the host is the slower here
  // Off, a share is not used (a variant turning offload off keeps it); out of (0, 1], refused.
  CHECK(job_memory(s.model, s.layout, chunk_costs(s.model, s.layout, s.cluster)).optimizer == on_gpu.optimizer);
  for (const double bad : {0.0, -0.5, 1.5}) {
    s.layout.offload_fraction = bad;
    const auto p = check_layout_settings(s.layout);
    REQUIRE(p);
    CHECK(p->key == "offload_fraction");
  }
}

TEST_CASE("Optimizer on the host: the smallest share that fits, in hundredths", "[job_step][offload]") {
  JobStepSpec s = qwen3_8b_on_one_4090_host();
  const double f = smallest_offload_fraction(s.model, s.layout, s.cluster);
  CHECK(f == Approx(0.61));
  const Bytes cap = s.cluster.accelerator.usable_memory;
  const auto total = [&](double share) {
    JobLayout l = s.layout;
    l.offload_optimizer = true;
    l.offload_fraction = share;
    return job_memory(s.model, l, chunk_costs(s.model, l, s.cluster)).total();
  };
  CHECK(total(f) <= cap);
  CHECK(total(f - 0.01) > cap);
  // Nothing needed: the least share there is; more than the optimizer needed: all of it.
  s.cluster.accelerator.usable_memory = 40LL << 30;
  CHECK(smallest_offload_fraction(s.model, s.layout, s.cluster) == 0.01);
  s.cluster.accelerator.usable_memory = 10LL << 30;
  CHECK(smallest_offload_fraction(s.model, s.layout, s.cluster) == 1);
}

TEST_CASE("Optimizer on the host: refused without a sharded optimizer or with FP32 weights as the master",
          "[job_step][offload]") {
  JobLayout l;
  l.offload_optimizer = true;
  const auto zero0 = check_layout_settings(l);
  REQUIRE(zero0);
  CHECK(zero0->key == "offload_optimizer");
  CHECK_THAT(zero0->message, Catch::Contains("needs zero: 1 or more"));
  l.zero = 1;
  CHECK_FALSE(check_layout_settings(l));
  l.master_weights = MasterWeights::Model;
  const auto master = check_layout_settings(l);
  REQUIRE(master);
  CHECK_THAT(master->message, Catch::Contains("needs master_weights: optimizer"));
}
