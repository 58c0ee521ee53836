// The planner's memory model against the book (reference section 3 and section 7).
#include <catch2/catch.hpp>

#include "models/activations.hpp"
#include "models/memory_timeline.hpp"
#include "models/offload.hpp"
#include "models/plan.hpp"
#include "models/training_state.hpp"
#include "plan_fixtures.hpp"

using namespace stepsim;
using namespace stepsim::testing;

TEST_CASE("mixed-precision Adam holds 16 bytes per parameter: 131.1 GB for Qwen3-8B", "[plan][memory]") {
  const StateFormat f;
  CHECK(f.total() == 16);
  const std::int64_t n = count_parameters(*find_transformer("qwen3-8b")).total;
  CHECK(static_cast<double>(training_state_bytes(n, f)) / 1e9 == Approx(131.1).margin(0.05));
  // The recoverable part: 14 bytes per parameter = 114,670,295,040 B (section 10.4.3).
  CHECK(recoverable_state_bytes(n, f) == 114'670'295'040LL);
  // Exercise 10-1: FP32 gradients make it 18 bytes per parameter.
  StateFormat fp32_grads;
  fp32_grads.gradients = 4;
  CHECK(fp32_grads.total() == 18);
}

TEST_CASE("ZeRO stages shard optimizer, then gradients, then weights", "[plan][memory]") {
  // Example 27.3: 4 workers, 1,000,000 parameters.
  const StateFormat f;
  CHECK(resident_state(1'000'000, f, 0, 4).total() == 16'000'000);
  CHECK(resident_state(1'000'000, f, 1, 4).total() == 7'000'000);  // master + moments sharded
  CHECK(resident_state(1'000'000, f, 2, 4).total() == 5'500'000);  // gradients too
  CHECK(resident_state(1'000'000, f, 3, 4).total() == 4'000'000);  // all 16 MB
}

TEST_CASE("design case: ZeRO-3 on RTX 4090 with 10 GiB of activations and buffers", "[plan][memory]") {
  PlanSpec s = design_case();
  SECTION("8 cards do not fit: 15.3 + 10 = 25.3 GiB, 3.3 GiB over 22") {
    const MemoryPlan m = plan_memory(s, 8);
    CHECK(gib(m.resident.total()) == Approx(15.3).margin(0.05));
    CHECK(gib(m.planned) == Approx(25.3).margin(0.05));
    CHECK_FALSE(m.fits());
    const MemoryLevers lv = memory_levers(s, 8);
    CHECK(gib(lv.over) == Approx(3.3).margin(0.05));
    // Fewest cards that fit: 16N/d <= 12 GiB -> d = 11; the book picks whole hosts: 16.
    REQUIRE(lv.cards);
    CHECK(*lv.cards == 11);
  }
  SECTION("16 cards: 7.6 GiB resident, 17.6 GiB in all") {
    const MemoryPlan m = plan_memory(s, 16);
    CHECK(gib(m.resident.total()) == Approx(7.6).margin(0.05));
    CHECK(gib(m.planned) == Approx(17.6).margin(0.05));
    CHECK(m.fits());
  }
  SECTION("32 / 48 cards: 3.8 / 2.5 resident, 13.8 / 12.5 in all, 8.2 / 9.5 to spare") {
    const MemoryPlan m32 = plan_memory(s, 32), m48 = plan_memory(s, 48);
    CHECK(gib(m32.resident.total()) == Approx(3.8).margin(0.05));
    CHECK(gib(m48.resident.total()) == Approx(2.5).margin(0.05));
    CHECK(gib(m32.planned) == Approx(13.8).margin(0.05));
    CHECK(gib(m48.planned) == Approx(12.5).margin(0.05));
    CHECK(gib(m32.usable - m32.planned) == Approx(8.2).margin(0.05));
    CHECK(gib(m48.usable - m48.planned) == Approx(9.5).margin(0.05));
  }
  SECTION("a lower ZeRO stage on 48 cards does not fit, and the lever names ZeRO-3") {
    s.zero_stage = 1;
    const MemoryPlan m = plan_memory(s, 48);
    CHECK_FALSE(m.fits());
    const MemoryLevers lv = memory_levers(s, 48);
    CHECK_FALSE(lv.cards);  // weights and gradients (4 B/param = 30.5 GiB) never fit
    REQUIRE(lv.options.size() == 2);
    CHECK(lv.options[0].change == "ZeRO-2");
    CHECK_FALSE(lv.options[0].fits);
    CHECK(lv.options[1].change == "ZeRO-3");
    CHECK(lv.options[1].fits);
  }
}

TEST_CASE("peak memory is the maximum of what is live at once", "[plan][memory]") {
  // Section 10.1: 8 GiB of activations and a 4 GiB gather buffer at once need 12 GiB; freeing the
  // activations first lets the gather reuse the space.
  {
    MemorySequence s;
    const auto fwd = s.add_op("forward"), gather = s.add_op("gather"), bwd = s.add_op("backward");
    s.add_buffer("activations", MemoryKind::Activations, 8 * kGiB, fwd, bwd);
    s.add_buffer("gather buffer", MemoryKind::Buffers, 4 * kGiB, gather, gather);
    const MemoryPeak p = peak_memory(s);
    CHECK(p.peak == 12 * kGiB);
    CHECK(p.at_op == gather);
    CHECK(p.live.size() == 2);
  }
  {
    MemorySequence s;
    const auto fwd = s.add_op("forward"), gather = s.add_op("gather");
    s.add_buffer("activations", MemoryKind::Activations, 8 * kGiB, fwd, fwd);
    s.add_buffer("gather buffer", MemoryKind::Buffers, 4 * kGiB, gather, gather);
    CHECK(peak_memory(s).peak == 8 * kGiB);
  }
  // Exercise 10-1: 6 GiB of activations and two 3 GiB module buffers: 12 GiB at once, 9 GiB
  // when the second buffer reuses the first one's space.
  {
    MemorySequence s;
    const auto a = s.add_op("module A"), b = s.add_op("module B");
    s.add_buffer("activations", MemoryKind::Activations, 6 * kGiB, a, b);
    s.add_buffer("buffer A", MemoryKind::Buffers, 3 * kGiB, a, b);
    s.add_buffer("buffer B", MemoryKind::Buffers, 3 * kGiB, a, b);
    CHECK(peak_memory(s).peak == 12 * kGiB);
  }
  {
    MemorySequence s;
    const auto a = s.add_op("module A"), b = s.add_op("module B");
    s.add_buffer("activations", MemoryKind::Activations, 6 * kGiB, a, b);
    s.add_buffer("buffer A", MemoryKind::Buffers, 3 * kGiB, a, a);
    s.add_buffer("buffer B", MemoryKind::Buffers, 3 * kGiB, b, b);
    CHECK(peak_memory(s).peak == 9 * kGiB);
  }
}

TEST_CASE("the resource bill of a 1M-parameter model (example 27.1-27.3)", "[plan][memory]") {
  PlanSpec s = small_model();
  const MemoryPlan m = plan_memory(s, 1);
  CHECK(m.resident.total() == 16'000'000);
  CHECK(m.per_layer.saved == 327'680);  // 10 arrays x 32,768 B
  CHECK(m.saved_activations == 1'310'720);
  CHECK(m.peak.peak == 17'310'720);
  s.margin = 0.25;
  CHECK(plan_memory(s, 1).planned == 21'638'400);
  CHECK_FALSE(plan_memory(s, 1).fits());  // a 10,000,000-byte device
  s.margin = 0;
  SECTION("recompute keeping 4 of 10 arrays per layer") {
    s.recompute = RecomputePolicy{RecomputeKind::Keep, 4};
    CHECK(plan_memory(s, 1).saved_activations == 524'288);
  }
  SECTION("4 workers sharding master and moments, then gradients, then everything") {
    s.zero_stage = 1;
    const MemoryPlan z1 = plan_memory(s, 4);
    CHECK(z1.resident.total() == 7'000'000);
    CHECK(z1.peak.peak == 8'310'720);
    s.zero_stage = 2;
    CHECK(plan_memory(s, 4).resident.total() == 5'500'000);
    s.zero_stage = 3;
    CHECK(plan_memory(s, 4).resident.total() == 4'000'000);
  }
  SECTION("exercise 27.1: four sequences double the activations") {
    s.microbatch_sequences = 4;
    CHECK(plan_memory(s, 1).peak.peak == 18'621'440);
  }
}

TEST_CASE("FSDP2 CPU experiment: sharding shrinks only the resident part", "[plan][memory]") {
  // Section 10.2.1: 2 -> 4 processes, state after the update 18 -> 9 MiB, peak 39 -> 30 MiB,
  // because about 21 MiB of other tensors and buffers remain. Inputs derived from the text:
  // 36 MiB of fully sharded state (16 B/param: 2,359,296 parameters) and 21 MiB of the rest.
  PlanSpec s = small_model();
  s.model.parameters = 36 * kMiB / 16;
  s.zero_stage = 3;
  s.workspace = 21 * kMiB;
  const MemoryPlan two = plan_memory(s, 2), four = plan_memory(s, 4);
  CHECK(two.resident.total() == 18 * kMiB);
  CHECK(four.resident.total() == 9 * kMiB);
  CHECK(two.peak.peak == 39 * kMiB);
  CHECK(four.peak.peak == 30 * kMiB);
  CHECK(1.0 - static_cast<double>(four.peak.peak) / static_cast<double>(two.peak.peak) == Approx(0.23).margin(0.005));
}

TEST_CASE("selective recompute of a Qwen3-8B layer (figures 10-12/10-13)", "[plan][memory]") {
  const TransformerConfig& q = *find_transformer("qwen3-8b");
  const LayerActivations layer = transformer_layer_activations(q);
  // 128 tokens, FP32 activations.
  const auto width_of = [&](const std::string& name) {
    for (const auto& t : layer.tensors)
      if (t.name == name) return t.width;
    return std::int64_t{0};
  };
  CHECK(128 * width_of("gated product") * 4 == 6 * kMiB);
  CHECK(128 * width_of("attention norm output") * 4 == 2 * kMiB);
  CHECK(128 * width_of("MLP norm output") * 4 == 2 * kMiB);
  CHECK(gated_product_multiplications(q, 128) == 1'572'864);  // ~1.57 million
  CHECK(gemm_input_bytes(layer, 128, 4) == 15 * kMiB);
  CHECK(rebuildable_gemm_input_bytes(layer, 128, 4) == 10 * kMiB);
  const auto sel = layer_activation_bytes(layer, RecomputePolicy{RecomputeKind::Selective, 0}, 128, 4);
  CHECK(sel.rebuilt == 10 * kMiB);
  const auto full = layer_activation_bytes(layer, RecomputePolicy{RecomputeKind::Full, 0}, 128, 4);
  CHECK(full.saved == 2 * kMiB);  // only the layer input
}

TEST_CASE("derived activations for the design case are in the book's 10 GiB range", "[plan][memory]") {
  // Not a printed figure: with full recompute, a ZeRO-3 card at one 8,192-token sequence holds
  // 36 layer inputs (2.25 GiB), one layer's rebuilt activations, the logits and gather buffers.
  PlanSpec s = design_case();
  s.workspace.reset();
  s.recompute = RecomputePolicy{RecomputeKind::Full, 0};
  const MemoryPlan m = plan_memory(s, 48);
  CHECK(gib(m.saved_activations) == Approx(2.25).margin(0.01));
  const double work = gib(m.peak.peak - m.peak.resident);
  CHECK(work > 6.0);
  CHECK(work < 10.0);
  CHECK(m.fits());
  // Without recompute the activations alone (~35 GiB) do not fit, and the levers say so.
  s.recompute = RecomputePolicy{};
  CHECK_FALSE(plan_memory(s, 48).fits());
  const MemoryLevers lv = memory_levers(s, 48);
  bool full_fits = false;
  for (const auto& o : lv.options)
    if (o.change == "recompute full") full_fits = o.fits;
  CHECK(full_fits);
}

TEST_CASE("offload: convert the BF16 gradient on the CPU below ~147 GB/s", "[plan][memory]") {
  // Figures 10-14/10-15: GPU 1,008 GB/s, CPU 307.2 GB/s.
  CHECK(offload_break_even_bandwidth(307.2e9, 1008e9) / 1e9 == Approx(147).margin(0.5));
  const TransformerConfig& q = *find_transformer("qwen3-8b");
  const Bytes gate = q.intermediate * q.hidden * 2;  // [12288, 4096] BF16
  CHECK(gate == 96 * kMiB);
  const MemoryPeak p = peak_memory(gpu_conversion_sequence(gate));
  CHECK(p.peak == 288 * kMiB);
  CHECK(p.peak - gate == 192 * kMiB);
  // Over PCIe 5.0 (64 GB/s), below B*: sending BF16 and converting on the CPU is faster.
  const ConversionPlace at_pcie5 = conversion_times(gate, 64'000'000'000LL, 307'200'000'000LL, 1'008'000'000'000LL);
  CHECK(at_pcie5.on_cpu < at_pcie5.on_gpu);
  const ConversionPlace at_300 = conversion_times(gate, 300'000'000'000LL, 307'200'000'000LL, 1'008'000'000'000LL);
  CHECK(at_300.on_gpu < at_300.on_cpu);
}
