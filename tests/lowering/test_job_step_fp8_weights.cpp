// The FP8 GEMMs' weights (docs/precision.md "The FP8 GEMMs' weight copies", "FP8 parameters"): the FP8
// copies Transformer Engine keeps beside the weights, by recipe and architecture; and FP8
// parameters (layout fp8_param_gather; Megatron-Core's --fp8-param-gather, NeMo's FP8 precision
// plugins), where those copies are the weights, with no BF16 beside them, gathered in FP8.
#include <catch2/catch.hpp>

#include "job_step_fixtures.hpp"
#include "models/job_memory.hpp"
#include "models/layer_costs.hpp"
#include "models/layout.hpp"
#include "schedules/lowering/job/job_step.hpp"

using namespace stepsim;
using namespace stepsim::job_step_fixtures;

TEST_CASE("FP8 GEMMs' weight copies: every linear module's FP8 weight and its transpose, in the buffers",
          "[job_step][fp8][memory]") {
  // small_fp8_job: a layer's linear modules on one TP rank: QKV h x 3h / 2, the projection
  // h x h / 2, the MLP 3 x h x 4,096 / 2: 8,388,608 weights; two layers a rank.
  const JobStepSpec s = small_fp8_job();
  const JobLayout& l = s.layout;
  const std::int64_t per_layer = (1024LL * 3 * 1024 + 1024LL * 1024 + 3LL * 1024 * 4096) / 2;
  CHECK(per_layer == 8'388'608);
  CHECK(layer_work(s.model, l).gemm_weights == per_layer);
  JobLayout bf16 = l;
  bf16.fp8 = false;
  const auto with = job_memory_by_rank(s.model, l, chunk_costs(s.model, l, s.cluster));
  const auto without = job_memory_by_rank(s.model, bf16, chunk_costs(s.model, bf16, s.cluster));
  REQUIRE(with.size() == 2);
  for (std::size_t d = 0; d < 2; ++d) {
    // Tensorwise (Hopper: the TN layout only): 1 B of FP8 weight and 1 B of its transpose. The
    // embedding (rank 0) and the LM head (rank 1) stay BF16: the same copies on both ranks.
    CHECK(with[d].fp8_weight_copies == 2 * 2 * per_layer);
    CHECK(with[d].buffers - without[d].buffers == 33'554'432);
    CHECK(without[d].fp8_weight_copies == 0);
    CHECK(with[d].weights == without[d].weights);
    CHECK(with[d].optimizer == without[d].optimizer);
  }
  // Blockwise: each copy with an FP32 scale per 128 x 128 block, 2 x (1 + 4 / 16,384) B a weight.
  JobLayout block = l;
  block.fp8_recipe = Fp8Recipe::Blockwise;
  CHECK(fp8_weight_copy_bytes(block, GpuArchitecture::Hopper) == Approx(2.00048828125).epsilon(1e-15));
  CHECK(fp8_weight_copy_bytes(block, GpuArchitecture::Blackwell) == Approx(2.00048828125).epsilon(1e-15));
  CHECK(job_memory(s.model, block, chunk_costs(s.model, block, s.cluster)).fp8_weight_copies ==
        33'554'432 + 2 * 4 * 2 * per_layer / (128 * 128));
  // Blackwell runs FP8 GEMMs in any layout: tensorwise keeps no transpose, 1 B a weight. MXFP8
  // keeps a row-wise and a column-wise copy, each with a 1-byte E8M0 scale per 32 values: 2 x
  // (1 + 1 / 32) B; only Blackwell takes it.
  JobStepSpec b = s;
  b.cluster = *find_cluster_preset("b200");
  CHECK(b.cluster.accelerator.architecture == GpuArchitecture::Blackwell);
  CHECK(fp8_weight_copy_bytes(l, GpuArchitecture::Blackwell) == 1);
  CHECK(fp8_weight_copy_bytes(l, GpuArchitecture::Ada) == 2);
  CHECK(job_memory(b.model, l, chunk_costs(b.model, l, b.cluster)).fp8_weight_copies == 2 * per_layer);
  JobLayout mx = l;
  mx.fp8_recipe = Fp8Recipe::Mx;
  CHECK(fp8_weight_copy_bytes(mx, GpuArchitecture::Blackwell) == 2.0625);
  CHECK(job_memory(b.model, mx, chunk_costs(b.model, mx, b.cluster)).fp8_weight_copies == 2 * per_layer * 2 * 33 / 32);
  CHECK_FALSE(check_accelerator_kernels(mx, b.cluster.accelerator));
  const auto refused = check_accelerator_kernels(mx, s.cluster.accelerator);
  REQUIRE(refused);
  CHECK(refused->key == "fp8_recipe");
  CHECK(refused->message ==
        "mxfp8 needs Blackwell's block-scaled tensor cores (b200, gb200, gb300); h100-sxm is hopper: tensorwise or "
        "blockwise "
        "would "
        "run");
  // The step's figure is the analytic one, which the refusal and the search's prune read.
  const JobStepRun run = run_job_step(s);
  CHECK(run.result.memory.fp8_weight_copies == 33'554'432);
  REQUIRE(run.result.memory_by_rank.size() == 2);
  for (std::size_t d = 0; d < 2; ++d) CHECK(run.result.memory_by_rank[d].buffers - without[d].buffers == 33'554'432);

  // FP32 weights as the master (autocast): the FP8 GEMMs cast theirs to FP8 themselves, so only the
  // other weights (the embedding, the LM head, the norms) keep autocast's BF16 copies.
  JobLayout fp32_master = l;
  fp32_master.master_weights = MasterWeights::Model;
  JobLayout fp32_bf16 = fp32_master;
  fp32_bf16.fp8 = false;
  const auto mm = job_memory_by_rank(s.model, fp32_master, chunk_costs(s.model, fp32_master, s.cluster));
  const auto mb = job_memory_by_rank(s.model, fp32_bf16, chunk_costs(s.model, fp32_bf16, s.cluster));
  for (std::size_t d = 0; d < 2; ++d) {
    CHECK(mm[d].fp8_weight_copies == 2 * 2 * per_layer);
    CHECK(mb[d].buffers - (mm[d].buffers - mm[d].fp8_weight_copies) == 2 * 2 * per_layer);
  }

  // MoE: an EP rank's experts and attention, not the router (BF16). Qwen3-235B at pp 4 (23, 24,
  // 24, 23 layers), EP 8: 16 local experts of 3 x 4,096 x 1,536, attention 4,096 x (8,192 + 2 x
  // 512) + 8,192 x 4,096.
  JobStepSpec q = qwen3_235b_routing();
  q.model.routing = {};
  q.layout.fp8 = true;
  const std::int64_t moe_layer = 4096LL * (8192 + 2 * 512) + 8192LL * 4096 + 16LL * 3 * 4096 * 1536;
  CHECK(layer_work(q.model, q.layout).gemm_weights == moe_layer);
  const auto ranks = job_memory_by_rank(q.model, q.layout, chunk_costs(q.model, q.layout, q.cluster));
  const int layers[] = {23, 24, 24, 23};
  for (std::size_t d = 0; d < 4; ++d) CHECK(ranks[d].fp8_weight_copies == 2 * layers[d] * moe_layer);
  CHECK(ranks[1].fp8_weight_copies == 17'918'066'688);  // 16.7 GiB

  // ZeRO-3: the copies of the gathered layer running, not kept (TE under FSDP2 requantizes the
  // gathered weight in the backward): GPT-3's 12 h^2 weights of one layer, 2 B each.
  JobStepSpec z = gpt3_zero3_64();
  z.cluster = *find_cluster_preset("h100-sxm");
  z.layout.fp8 = true;
  const double h = 12288;
  CHECK(
      static_cast<double>(job_memory(z.model, z.layout, chunk_costs(z.model, z.layout, z.cluster)).fp8_weight_copies) ==
      2 * 12 * h * h);
}

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
    // The BF16 weights of the linear modules go (2 B each); their FP8 data and transpose stay,
    // now the weights (on Hopper 2 B too), no longer buffers beside them.
    CHECK(copies[d].total() - fp8[d].total() == 2 * gemm_weights);
    CHECK(fp8[d].weights == copies[d].weights);
    CHECK(fp8[d].buffers == copies[d].buffers - copies[d].fp8_weight_copies);
    CHECK(fp8[d].fp8_parameters);
    CHECK_FALSE(copies[d].fp8_parameters);
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
  // MXFP8 weights: gathered in BF16 into the gradient buffer, each GPU casting its copy (Megatron-
  // Core's reuse_grad_buf_for_mxfp8_param_ag); under ZeRO-3 each shard in FP8.
  JobLayout mx = params;
  mx.fp8_recipe = Fp8Recipe::Mx;
  CHECK(mx.fp8_params());
  CHECK(gathered_bytes_per_parameter(mx, chunks.front()) == 2);
  mx.zero = 3;
  CHECK(gathered_bytes_per_parameter(mx, chunks.front()) ==
        Approx((2.0 * 33'163'264 - gemm_weights) / 33'163'264).epsilon(1e-15));
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
  // A BF16 variant of an FP8 base, NVFP4 GEMMs, FP32 weights as the master below ZeRO-3: as
  // without it, as bf16_first_layers is without fp8.
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
  CHECK(job_memory(s.model, ddp_plain, chunk_costs(s.model, ddp_plain, s.cluster)).total() -
            job_memory(s.model, ddp, chunk_costs(s.model, ddp, s.cluster)).total() ==
        2 * 2 * 8'388'608);
}

TEST_CASE("FP8 parameters under ZeRO-3: each shard cast to FP8 before its gather", "[job_step][fp8][zero3]") {
  // small_fp8_job over 8 GPUs as FSDP: TP 2, DP 4, no pipeline; a layer's linear modules on a TP
  // rank hold 8,388,608 weights, its two norms 1,024 more.
  JobStepSpec s = small_fp8_job();
  s.layout.pp = 1;
  s.layout.dp = 4;
  s.layout.zero = 3;
  const std::int64_t per_layer = 8'388'608, layer = per_layer + 1024;
  JobLayout fp8 = s.layout;
  fp8.fp8_param_gather = true;
  CHECK(fp8.fp8_params());
  JobLayout fp8_model = fp8;  // FSDP2's FP32 shards, the master (torchao's float8 all-gather)
  fp8_model.master_weights = MasterWeights::Model;
  JobLayout bf16_model = s.layout;
  bf16_model.master_weights = MasterWeights::Model;
  CHECK(fp8_model.fp8_params());
  const auto memory = [&](const JobLayout& x) { return job_memory(s.model, x, chunk_costs(s.model, x, s.cluster)); };
  const JobMemory plain = memory(s.layout), params = memory(fp8);
  // Two layers gathered at once (the one running, the one prefetched): their linear weights at 1 B,
  // the norms at 2; beside them only what the backward reads that the gathered weight is not (on
  // Hopper the transpose, 1 B a weight), where a gathered BF16 layer had both FP8 copies.
  CHECK(plain.fp8_weight_copies == 2 * per_layer);
  CHECK(params.fp8_weight_copies == per_layer);
  CHECK(plain.buffers - params.buffers == 2 * per_layer + per_layer);
  CHECK_FALSE(params.fp8_parameters);  // the copies come and go with a gather: buffers
  // The shards beside the optimizer's master are FP8: a quarter of the rank's 4 layers' linear
  // weights at 1 B less; FP32 shards that are the master stay as they are.
  CHECK(plain.weights - params.weights == 4 * per_layer / 4);
  CHECK(memory(fp8_model).weights == memory(bf16_model).weights);
  CHECK(memory(bf16_model).buffers - memory(fp8_model).buffers == 3 * per_layer);
  CHECK(params.optimizer == plain.optimizer);
  CHECK(params.gradients == plain.gradients);
  // Each layer's gather moves its linear weights at 1 B and its norms at 2; the embedding and
  // the LM head stay BF16; the reduce-scatters are the same.
  JobStepSpec with = s;
  with.layout = fp8;
  const JobStepRun bf16_run = run_job_step(s), fp8_run = run_job_step(with);
  const auto& a = bf16_run.fsdp_plan.units;
  const auto& b = fp8_run.fsdp_plan.units;
  REQUIRE(a.size() == 6);
  REQUIRE(b.size() == 6);
  CHECK(b.front().gather_bytes == a.front().gather_bytes);
  CHECK(b.back().gather_bytes == a.back().gather_bytes);
  for (std::size_t i = 1; i + 1 < a.size(); ++i) {
    CHECK(static_cast<double>(b[i].gather_bytes) ==
          Approx(static_cast<double>(a[i].gather_bytes) * (2.0 * layer - per_layer) / (2.0 * layer)).epsilon(1e-6));
    CHECK(b[i].gather < a[i].gather);
    CHECK(b[i].reduce_bytes == a[i].reduce_bytes);
  }
  CHECK(fp8_run.result.step_time < bf16_run.result.step_time);
}
