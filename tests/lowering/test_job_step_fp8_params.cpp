// FP8 parameters (layout fp8_param_gather; Megatron-Core's --fp8-param-gather, NeMo's FP8 precision
// plugins): the FP8 GEMMs' weights are their FP8 copies, with no BF16 weights beside them, and the
// distributed optimizer gathers them in FP8 (docs/job.md "FP8 parameters").
#include <catch2/catch.hpp>

#include "job_step_fixtures.hpp"
#include "models/job_memory.hpp"
#include "models/layer_costs.hpp"
#include "models/layout.hpp"
#include "schedules/lowering/job/job_step.hpp"

using namespace stepsim;
using namespace stepsim::job_step_fixtures;

namespace {
// A small dense model on H100: 4 layers, h 1,024, 8 query and 8 key/value heads of 128, SwiGLU
// 4,096 wide, vocabulary 32,000; tp 2, pp 2, dp 2, zero 1, FP8 GEMMs.
JobStepSpec small_fp8_job() {
  JobStepSpec s;
  s.model.shape = decoder("small", 4, 1024, 4096, 8, 8, 128, 32000);
  s.model.seq = 2048;
  s.cluster = *find_cluster_preset("h100-sxm");
  JobLayout& l = s.layout;
  l.tp = l.pp = l.dp = 2;
  l.zero = 1;
  l.global_batch = 16;
  l.fp8 = true;
  return s;
}
}  // namespace

TEST_CASE("FP8 parameters: no BF16 weights beside the FP8 copies, gathered in FP8", "[job_step][fp8][memory]") {
  const JobStepSpec s = small_fp8_job();
  JobLayout params = s.layout;
  params.fp8_param_gather = true;
  REQUIRE_FALSE(check_layout_settings(params));
  // A layer's linear modules on one TP rank: QKV h x 3h / 2, the projection h x h / 2, the MLP
  // 3 x h x 4,096 / 2: 8,388,608 weights; two layers a rank.
  const std::int64_t gemm_weights = 2 * 8'388'608;
  const auto copies = job_memory_by_rank(s.model, s.layout, chunk_costs(s.model, s.layout, s.cluster));
  const auto fp8 = job_memory_by_rank(s.model, params, chunk_costs(s.model, params, s.cluster));
  REQUIRE(fp8.size() == 2);
  for (std::size_t d = 0; d < 2; ++d) {
    // The BF16 weights of the linear modules go (2 B each); their FP8 data and transpose stay.
    CHECK(copies[d].weights - fp8[d].weights == 2 * gemm_weights);
    CHECK(fp8[d].fp8_weight_copies == copies[d].fp8_weight_copies);
    CHECK(fp8[d].fp8_weight_copies == 2 * gemm_weights);
    CHECK(fp8[d].optimizer == copies[d].optimizer);  // the FP32 master and moments are the same
    CHECK(fp8[d].gradients == copies[d].gradients);
  }
  // The first chunk's weights on a TP rank: two layers (their linear modules and two norms of
  // h / 2 each) and half the embedding, 32,000 x 1,024 / 2: 33,163,264 parameters, of which the
  // 16,777,216 linear ones are gathered at 1 B and the rest at 2.
  const std::vector<ChunkCost> chunks = chunk_costs(s.model, params, s.cluster);
  REQUIRE(chunks.front().parameters == 2 * (8'388'608 + 1024) + 16'384'000);
  CHECK(chunks.front().gemm_weights == gemm_weights);
  CHECK(gathered_bytes_per_parameter(params, chunks.front()) ==
        Approx((2.0 * 33'163'264 - gemm_weights) / 33'163'264).epsilon(1e-15));
  CHECK(gathered_bytes_per_parameter(s.layout, chunks.front()) == 2);
  // The distributed optimizer's gather on each pipeline device: shorter by about that share (a
  // ring's latency terms stay).
  JobStepSpec with = s;
  with.layout = params;
  const JobCommPlan bf16_gather = plan_job_comm(s), fp8_gather = plan_job_comm(with);
  const double share = (2.0 * 33'163'264 - gemm_weights) / 33'163'264 / 2;
  CHECK(static_cast<double>(fp8_gather.dp_gather[0]) / static_cast<double>(bf16_gather.dp_gather[0]) ==
        Approx(share).epsilon(0.02));
  CHECK(fp8_gather.dp_reduce == bf16_gather.dp_reduce);  // gradients reduce as before
}

TEST_CASE("FP8 parameters only where there are FP8 weights and an optimizer's master to make them from",
          "[job_step][fp8]") {
  const JobStepSpec s = small_fp8_job();
  JobLayout l = s.layout;
  l.fp8_param_gather = true;
  CHECK(l.fp8_params());
  // A BF16 variant of an FP8 base, NVFP4 GEMMs, ZeRO-3 (its FP8 gathers not modelled), FP32
  // weights as the master: as without it, as bf16_first_layers is without fp8.
  const auto as_without = [&](JobLayout x) {
    CHECK_FALSE(x.fp8_params());
    CHECK_FALSE(check_layout_settings(x));
    JobLayout plain = x;
    plain.fp8_param_gather = false;
    CHECK(job_memory(s.model, x, chunk_costs(s.model, x, s.cluster)).total() ==
          job_memory(s.model, plain, chunk_costs(s.model, plain, s.cluster)).total());
  };
  JobLayout bf16 = l;
  bf16.fp8 = false;
  as_without(bf16);
  JobLayout fsdp = l;
  fsdp.zero = 3;
  as_without(fsdp);
  JobLayout fp32_master = l;
  fp32_master.master_weights = MasterWeights::Model;
  as_without(fp32_master);
  JobLayout fp4 = l;
  fp4.fp8_recipe = Fp8Recipe::Nvfp4;
  CHECK_FALSE(fp4.fp8_params());
  // Plain data parallelism (zero 0) keeps FP8 weights too: nothing to gather.
  JobLayout ddp = l;
  ddp.zero = 0;
  CHECK(ddp.fp8_params());
  JobLayout ddp_plain = ddp;
  ddp_plain.fp8_param_gather = false;
  CHECK(job_memory(s.model, ddp_plain, chunk_costs(s.model, ddp_plain, s.cluster)).weights -
            job_memory(s.model, ddp, chunk_costs(s.model, ddp, s.cluster)).weights ==
        2 * 2 * 8'388'608);
}
