// Megatron-Core's combined 1F1B as stepsim builds it (schedules/pipeline/forward_backward_pairs.hpp):
// the action lists line by line, and every 1F1B and interleaved plan still complete and runnable
// as a job with its expert all-to-alls beside the other half's compute.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "job_step_bound.hpp"
#include "models/layout.hpp"
#include "schedules/lowering/job/job_step.hpp"
#include "schedules/lowering/pipeline/pipeline_spec.hpp"
#include "schedules/pipeline/forward_backward_pairs.hpp"

using namespace stepsim;

namespace {
std::vector<std::string> listed(const std::vector<Action>& actions) {
  std::vector<std::string> out;
  for (const Action& a : actions) out.push_back(format_action(a));
  return out;
}

PipelinePlan plan(const std::string& schedule, int stages, int microbatches, int virtual_stages = 0) {
  PipelineSpec s;
  s.stages = stages;
  s.microbatches = microbatches;
  s.schedule = schedule;
  s.virtual_stages = virtual_stages;
  return plan_for(s);
}
}  // namespace

TEST_CASE("forward-backward pairs: 1F1B on 2 devices, 4 micro-batches, line by line", "[schedules][pairs]") {
  // 1F1B: device 0 F0 F1 B0 F2 B1 F3 B2 B3, device 1 F0 B0 F1 B1 F2 B2 F3 B3. Paired, each device
  // runs one more warm-up forward and each backward beside the next forward.
  const PipelinePlan one = plan("1f1b", 2, 4);
  REQUIRE(listed(one.actions[0]) == std::vector<std::string>{"0F0", "0F1", "0B0", "0F2", "0B1", "0F3", "0B2", "0B3"});
  const PipelinePlan paired = pair_forward_backward(one);
  CHECK(listed(paired.actions[0]) == std::vector<std::string>{"0F0", "0F1", "0F2+0B0", "0F3+0B1", "0B2", "0B3"});
  CHECK(listed(paired.actions[1]) == std::vector<std::string>{"1F0", "1F1+1B0", "1F2+1B1", "1F3+1B2", "1B3"});
  CHECK(check_plan(paired).empty());
}

TEST_CASE("forward-backward pairs: every 1F1B and interleaved plan stays complete, no pair within a micro-batch",
          "[schedules][pairs]") {
  int plans = 0, pairs = 0;
  auto check = [&](const PipelinePlan& before) {
    const PipelinePlan after = pair_forward_backward(before);
    CHECK(check_plan(after).empty());
    for (std::size_t d = 0; d < after.actions.size(); ++d) {
      std::size_t halves = 0;
      for (const Action& a : after.actions[d]) {
        halves += a.kind == ActionKind::OverlapFB ? 2 : 1;
        if (a.kind != ActionKind::OverlapFB) continue;
        ++pairs;
        CHECK(a.micro != a.micro2);
      }
      CHECK(halves == before.actions[d].size());
    }
    ++plans;
  };
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 3 * p; ++m) check(plan("1f1b", p, m));
  for (int p = 2; p <= 4; ++p)
    for (int v = 2; v <= 3; ++v)
      for (int m = p; m <= 3 * p; m += p) check(plan("interleaved-1f1b", p, m, v));
  CHECK(plans == 108 + 18);
  CHECK(pairs > 0);
}

TEST_CASE("forward-backward pairs in a job: they run, and hide the expert exchange under the other half",
          "[job_step][pairs]") {
  // An 8-layer MoE on H800, EP 16 over two nodes, without a pipeline and on interleaved pipelines
  // of 2 and 4 stages: with the pairs (overlap.ep_a2a) each runs to the end, no faster than its
  // busiest device's compute, and faster than without them.
  JobModel m;
  m.shape = {"moe-8l", 8, 4096, 8192, 32, 8, 128, 32000};
  m.seq = 4096;
  m.gated_mlp = true;
  m.experts = 64;
  m.top_k = 8;
  m.expert_ffn = 1024;
  int runs = 0;
  for (const auto& [pp, vpp] : std::vector<std::pair<int, int>>{{1, 1}, {2, 2}, {2, 4}, {4, 2}})
    for (const int per : {2, 3}) {  // one micro-batch per pipeline stage has nothing to pair without a pipeline
      JobStepSpec s;
      s.model = m;
      s.cluster = *find_cluster_preset("h800");
      JobLayout& l = s.layout;
      l.pp = pp;
      l.vpp = vpp;
      l.schedule = vpp > 1 ? "interleaved-1f1b" : "1f1b";
      l.dp = 16;
      l.ep = 16;
      l.zero = 1;
      l.global_batch = 16L * pp * per;
      REQUIRE_FALSE(check_layout(s.model, l, 0));
      const JobStepRun plain = run_job_step(s);
      l.overlap_ep_a2a = true;
      REQUIRE_FALSE(check_layout(s.model, l, 0));
      const JobStepRun paired = run_job_step(s);
      INFO("pp " << pp << " v " << vpp << " m " << pp * per);
      CHECK(paired.result.step_time >= test::device_compute_bound(paired));
      CHECK(paired.result.step_time < plain.result.step_time);
      ++runs;
    }
  CHECK(runs == 8);
  // PP 2 x 2 virtual stages, 6 micro-batches: 627.2 ms -> 454.0 ms.
  JobStepSpec s;
  s.model = m;
  s.cluster = *find_cluster_preset("h800");
  s.layout.pp = 2;
  s.layout.vpp = 2;
  s.layout.schedule = "interleaved-1f1b";
  s.layout.dp = 16;
  s.layout.ep = 16;
  s.layout.zero = 1;
  s.layout.global_batch = 96;
  CHECK(run_job_step(s).result.step_time == 627'163'501);
  s.layout.overlap_ep_a2a = true;
  CHECK(run_job_step(s).result.step_time == 453'953'829);
}

TEST_CASE("forward-backward pairs: other schedules are refused at overlap.ep_a2a", "[job_step][pairs]") {
  JobModel m;
  m.shape = {"moe-8l", 8, 4096, 8192, 32, 8, 128, 32000};
  m.seq = 4096;
  m.experts = 8;
  m.top_k = 2;
  m.expert_ffn = 8192;
  JobLayout l;
  l.pp = 4;
  l.dp = 2;
  l.ep = 2;
  l.global_batch = 16;
  l.overlap_ep_a2a = true;
  for (const char* name : {"fill-drain", "1f1b", "zb-h1", "zb-h2", "dualpipe", "dualpipe-v"}) {
    l.schedule = name;
    const auto p = check_layout(m, l, 0);
    REQUIRE(p);
    CHECK(p->key == "overlap.ep_a2a");
  }
  l.schedule = "interleaved-1f1b";
  l.vpp = 2;
  CHECK_FALSE(check_layout(m, l, 0));
  l.ep = 1;  // nothing to overlap: Megatron-Core refuses it without EP too
  const auto p = check_layout(m, l, 0);
  REQUIRE(p);
  CHECK(p->key == "overlap.ep_a2a");
}
