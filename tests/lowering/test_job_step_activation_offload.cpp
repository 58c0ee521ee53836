// Activations on the host (layout offload_activations; docs/memory.md "Activations on the host"):
// Megatron-Core's CPU offloading of the first N layers' activations, through the job step.
#include <catch2/catch.hpp>

#include <cstdint>

#include "job_step_fixtures.hpp"
#include "models/job_memory.hpp"
#include "models/layer_costs.hpp"
#include "models/layout.hpp"
#include "schedules/lowering/job/job_step.hpp"

using namespace stepsim;
using namespace stepsim::job_step_fixtures;

namespace {
double gib(Bytes b) { return static_cast<double>(b) / (1 << 30); }

// Llama-3-8B at 8,192 tokens on 64 H100 with data parallelism alone and ZeRO 2 (the shape of
// scenarios/job-zero-8b-64xh100.yaml): 8 micro-batches a GPU, no recompute.
JobStepSpec llama3_8b_on_64_h100() {
  JobStepSpec s =
      data_parallel_job(decoder("llama3-8b", 32, 4096, 14336, 32, 8, 128, 128256), 8192, "h100-sxm", 64, 2, 512);
  s.model.shape.qk_norm = false;
  s.model.dropout = false;  // as a model file without `dropout: true` reads
  return s;
}
}  // namespace

TEST_CASE("Activations on the host: the GPU keeps the layers the handler leaves, the host the rest",
          "[job_step][offload_activations]") {
  JobStepSpec s = llama3_8b_on_64_h100();
  const JobMemory kept = job_memory(s.model, s.layout, chunk_costs(s.model, s.layout, s.cluster));
  s.layout.offload_activations = 16;
  const auto chunks = chunk_costs(s.model, s.layout, s.cluster);
  const JobMemory off = job_memory(s.model, s.layout, chunks);
  const ActivationOffload& a = chunks.front().offload;
  // 32 layers of 1.0625 GiB a micro-batch (34 GiB); the first 16 on the host, the GPU holding at
  // most 17 at once: the 16 kept and the last group in its window.
  CHECK(gib(a.all_layers) == Approx(34.0).epsilon(1e-4));
  CHECK(a.gpu_peak * 32 == a.all_layers * 17);
  CHECK(a.host * 2 == a.all_layers);
  CHECK(off.host_activations == a.host);  // one micro-batch in flight without a pipeline
  CHECK(kept.host_activations == 0);
  CHECK(kept.activations - off.activations == a.all_layers - a.gpu_peak);
  CHECK(gib(kept.activations) == Approx(34.06).epsilon(1e-3));
  CHECK(gib(off.activations) == Approx(18.12).epsilon(1e-3));
  CHECK(off.weights == kept.weights);
  CHECK(off.optimizer == kept.optimizer);
  // Each way 17 GiB over the H100's PCIe 5.0 link at the fabric share, 64 GB/s x 0.8.
  CHECK(s.cluster.host_link_rate() == Approx(51.2e9));
  CHECK(a.copy == Approx(static_cast<double>(a.host) / 51.2e9));
  CHECK(a.copy == Approx(0.3565).epsilon(1e-3));
  // A layer's 1.06 GiB takes 22 ms down; a window of two layers' forward, 13.7 ms, hides part of
  // it: 16 windows wait 144 ms; the backward's windows (28.4 ms) nearly all.
  CHECK(a.forward_wait() == Approx(0.1445).epsilon(1e-3));
  CHECK(a.backward_wait() == Approx(0.0081).epsilon(1e-2));
}

TEST_CASE("Activations on the host: each micro-batch's waits add to the step", "[job_step][offload_activations]") {
  JobStepSpec s = llama3_8b_on_64_h100();
  const JobStepRun base = run_job_step(s);
  s.layout.offload_activations = 16;
  const JobStepRun off = run_job_step(s);
  const ActivationOffload& a = off.comm.chunks.front().offload;
  CHECK(static_cast<double>(base.result.step_time) / 1e9 == Approx(5.940).epsilon(1e-3));
  CHECK(static_cast<double>(off.result.step_time) / 1e9 == Approx(7.160).epsilon(1e-3));
  // Without a pipeline the 8 micro-batches run one after another: the step grows by their waits
  // (to the nanosecond each pass rounds to).
  const double waits = 8 * (a.forward_wait() + a.backward_wait());
  CHECK(static_cast<double>(off.result.step_time - base.result.step_time) / 1e9 == Approx(waits).epsilon(1e-6));
  // What limits the step names them: the host link's, out of the passes that waited.
  const auto share = [](const std::vector<CriticalShare>& v, const std::string& what) {
    for (const auto& x : v)
      if (x.what == what) return x.time;
    return Time{-1};
  };
  CHECK(static_cast<double>(share(off.result.critical_by_kind, "activations to and from the host")) / 1e9 ==
        Approx(waits).margin(1e-6));
  CHECK(share(off.result.critical_by_resource, "host link (activations)") ==
        share(off.result.critical_by_kind, "activations to and from the host"));
  CHECK(share(base.result.critical_by_kind, "activations to and from the host") == -1);
  CHECK(share(off.result.critical_by_kind, "forward") + share(off.result.critical_by_kind, "backward") +
            share(off.result.critical_by_kind, "activations to and from the host") ==
        share(base.result.critical_by_kind, "forward") + share(base.result.critical_by_kind, "backward") +
            (off.result.step_time - base.result.step_time));
  // Eight offloaded layers of 32: windows of four layers' forward (27 ms) hide the 22 ms copies,
  // but group 0's, whose copy starts after layer 0: three layers (20.5 ms) short by 1.8 ms.
  s.layout.offload_activations = 8;
  const JobStepRun eight = run_job_step(s);
  const ChunkCost one = LayerStack(s.model, s.layout, s.cluster).layers(0, 1);
  const double forward = one.forward.compute() + one.forward.comm();
  const double copy = static_cast<double>(one.activation) / s.cluster.host_link_rate();
  CHECK(eight.comm.chunks.front().offload.forward_wait() == Approx(copy - 3 * forward));
  CHECK(copy - 3 * forward == Approx(0.00176).epsilon(1e-2));
  CHECK(eight.comm.chunks.front().offload.backward_wait() == 0);
}

TEST_CASE("Activations on the host under ZeRO-3: each layer's unit waits its own", "[job_step][offload_activations]") {
  // Megatron-FSDP with CPU offloading (NeMo's GB200 and GB300 Llama 3 70B recipes): the waits sit on
  // the layers' units, not on the embedding's or the head's; the GPU's memory falls as without ZeRO-3.
  JobStepSpec s = llama3_8b_on_64_h100();
  s.layout.zero = 3;
  const JobStepRun base = run_job_step(s);
  s.layout.offload_activations = 16;
  const JobStepRun off = run_job_step(s);
  const ActivationOffload& a = off.comm.chunks.front().offload;
  REQUIRE(a.forward_waits.size() == 32);
  CHECK(a.forward_waits[0] == 0);  // group 0's window ends at layer 1
  CHECK(a.forward_waits[1] > 0);
  CHECK(a.forward_waits[31] > 0);
  CHECK(a.forward_waits[2] == 0);
  CHECK(static_cast<double>(base.result.step_time) / 1e9 == Approx(6.133).epsilon(1e-3));
  CHECK(static_cast<double>(off.result.step_time - base.result.step_time) / 1e9 ==
        Approx(8 * (a.forward_wait() + a.backward_wait())).margin(1e-6));
  CHECK(base.result.memory.activations - off.result.memory.activations == a.all_layers - a.gpu_peak);
  CHECK(gib(off.result.memory.total()) == Approx(29.68).epsilon(1e-3));
}

TEST_CASE("Activations on the host: the fewest layers that fit", "[job_step][offload_activations]") {
  JobStepSpec s = llama3_8b_on_64_h100();
  CHECK(fewest_offloaded_layers(s.model, s.layout, s.cluster, 64) == 0);  // 58.7 GiB fits
  // Two sequences a micro-batch: 93 GiB without; 14 layers on the host bring it to 73.0.
  s.layout.micro_batch = 2;
  s.layout.global_batch = 1024;
  const int n = fewest_offloaded_layers(s.model, s.layout, s.cluster, 64);
  CHECK(n == 14);
  const auto total = [&](int k) {
    JobLayout l = s.layout;
    l.offload_activations = k;
    return job_memory(s.model, l, chunk_costs(s.model, l, s.cluster)).total();
  };
  CHECK(total(n) <= s.cluster.accelerator.usable_memory);
  CHECK(total(n - 1) > s.cluster.accelerator.usable_memory);
  CHECK(gib(total(n)) == Approx(72.98).epsilon(1e-3));
  // Where offloading is refused, 1: the refusal then names it.
  s.layout.recompute = JobRecompute::Full;
  CHECK(fewest_offloaded_layers(s.model, s.layout, s.cluster, 64) == 1);
}

TEST_CASE("Activations on the host: refused where Megatron-Core refuses it", "[job_step][offload_activations]") {
  JobStepSpec s = llama3_8b_on_64_h100();
  const auto problem = [&](JobLayout l) { return check_layout(s.model, l, 64); };
  JobLayout l = s.layout;
  l.offload_activations = 32;
  auto p = problem(l);
  REQUIRE(p);
  CHECK(p->key == "offload_activations");
  CHECK(p->message.find("would fit: at most 31") != std::string::npos);
  l.offload_activations = 31;
  CHECK_FALSE(problem(l));
  JobLayout piped = l;
  piped.pp = 2;
  piped.dp = 32;
  p = problem(piped);
  REQUIRE(p);
  CHECK(p->key == "offload_activations");
  CHECK(p->message.find("needs pp: 1") != std::string::npos);
  JobLayout recomputed = l;
  recomputed.recompute = JobRecompute::Selective;
  p = problem(recomputed);
  REQUIRE(p);
  CHECK(p->message.find("needs recompute: none") != std::string::npos);
  l.offload_activations = -1;
  p = problem(l);
  REQUIRE(p);
  CHECK(p->key == "offload_activations");
}
