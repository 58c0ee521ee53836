// One MoE layer (reference section 2, figure 10-27): routing arithmetic and the layer on the
// engine. The inputs are the book's (E = 128, top-8, 8,192 tokens; half the experts at 1.5x the
// mean; the two-expert 96/32 example); every figure is computed by the model or the engine.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "cli/commands/scenario_kinds.hpp"
#include "cli/input/scenario.hpp"
#include "cli/reports/moe_report.hpp"
#include "models/moe_routing.hpp"
#include "schedules/lowering/moe/moe_layer.hpp"

using namespace stepsim;

namespace {

MoeLayerShape qwen3_235b_layer() { return {128, 8, 8192, std::nullopt}; }

MoeRoutingSpec hot_half() {
  MoeRoutingSpec r;
  r.kind = MoeRoutingSpec::Kind::Hot;
  r.hot_fraction = 0.5;
  r.hot_load = 1.5;
  return r;
}

cli::Scenario shipped(const std::string& name) {
  return cli::load_scenario(std::string(STEPSIM_SOURCE_DIR) + "/scenarios/" + name);
}

const MoeLayerSpec& variant(const cli::Scenario& sc, const std::string& name) {
  for (const auto& [n, spec] : sc.moe->variants)
    if (n == name) return spec;
  FAIL("no variant " << name);
  return sc.moe->spec;
}

std::string input_error(const std::string& yaml) {
  try {
    const auto sc = cli::parse_scenario(yaml, "t.yaml");
    if (sc.moe) cli::moe_kind().validate(sc);  // the spec's own checks, mapped to the file's keys
  } catch (const cli::InputError& e) { return e.what(); }
  FAIL("no error for:\n" << yaml);
  return "";
}

}  // namespace

TEST_CASE("Qwen3-235B-A22B layer: 65,536 dispatches, 512 rows per expert", "[moe]") {
  const ExpertLoads l = route_experts(qwen3_235b_layer(), {});
  CHECK(l.dispatches == 65'536);
  CHECK(l.mean == 512.0);
  CHECK(std::all_of(l.routed.begin(), l.routed.end(), [](auto r) { return r == 512; }));
  CHECK(l.dropped == 0);
  CHECK(l.padded == 0);
}

TEST_CASE("half the experts at 1.5x the mean: 768 and 256 rows, the 96/32 ratio", "[moe]") {
  const ExpertLoads l = route_experts(qwen3_235b_layer(), hot_half());
  CHECK(std::accumulate(l.routed.begin(), l.routed.end(), std::int64_t{0}) == l.dispatches);
  CHECK(std::count(l.routed.begin(), l.routed.end(), 768) == 64);
  CHECK(std::count(l.routed.begin(), l.routed.end(), 256) == 64);
  CHECK(l.routed.front() == 768);  // the hot ones are the lowest ids
  // Same 3:1 as the two-expert example's 96/32.
  CHECK(l.routed.front() * 32 == l.routed.back() * 96);

  // Contiguous placement on 16 cards puts the hot experts on cards 0-7.
  const auto contiguous = card_rows(l, 16, ExpertPlacement::Contiguous);
  CHECK(contiguous[0] == 6144);
  CHECK(contiguous[15] == 2048);
  // Round-robin deals four hot and four cold experts to every card.
  const auto rr = card_rows(l, 16, ExpertPlacement::RoundRobin);
  CHECK(std::all_of(rr.begin(), rr.end(), [](auto r) { return r == 4096; }));
}

TEST_CASE("capacity factor: drops over capacity, pads under it", "[moe]") {
  MoeLayerShape shape = qwen3_235b_layer();
  shape.capacity_factor = 1.0;
  ExpertLoads l = route_experts(shape, hot_half());
  CHECK(*l.capacity == 512);
  CHECK(l.dropped == 64 * 256);  // every hot expert loses 256 of its 768 rows: 25% of the dispatches
  CHECK(l.padded == 64 * 256);   // every cold expert pads 256 rows of zeros
  CHECK(std::all_of(l.computed.begin(), l.computed.end(), [](auto r) { return r == 512; }));
  shape.capacity_factor = 1.25;
  l = route_experts(shape, hot_half());
  CHECK(*l.capacity == 640);
  CHECK(l.dropped == 64 * 128);
  shape.capacity_factor = 1.5;
  l = route_experts(shape, hot_half());
  CHECK(*l.capacity == 768);
  CHECK(l.dropped == 0);
}

TEST_CASE("routing inputs that cannot be are refused with their key", "[moe]") {
  MoeRoutingSpec r;
  r.kind = MoeRoutingSpec::Kind::Explicit;
  r.loads = {96, 31};
  try {
    route_experts({2, 1, 128, std::nullopt}, r);
    FAIL("no error");
  } catch (const MoeInputError& e) { CHECK(e.key() == "routing.loads"); }
  MoeRoutingSpec hot = hot_half();
  hot.hot_load = 2.5;  // 64 experts x 1,280 rows > 65,536
  CHECK_THROWS_AS(route_experts(qwen3_235b_layer(), hot), MoeInputError);
  CHECK_THROWS_AS(route_experts({128, 129, 8192, std::nullopt}, {}), MoeInputError);
  r.loads = {129, -1};
  CHECK_THROWS_AS(route_experts({2, 1, 128, std::nullopt}, r), MoeInputError);
}

TEST_CASE("expert row time from the shape: 6 x 4096 x 1536 FLOPs at 40% of an H100", "[moe]") {
  CHECK(expert_row_flops(4096, 1536) == 37'748'736.0);
  CHECK(expert_row_time(expert_row_flops(4096, 1536), 989e12 * 0.4) == 96);  // 95.4 ns, rounded up once
}

TEST_CASE("figure 10-27 on the engine: the busiest card sets the finish, balancing cuts a third", "[moe]") {
  const auto sc = shipped("moe-routing.yaml");
  REQUIRE(sc.moe);
  const MoeLayerRun skewed = simulate_moe_layer(sc.moe->spec);
  const MoeLayerRun balanced = simulate_moe_layer(variant(sc, "balanced"));
  CHECK(skewed.loads.dispatches == 65'536);
  CHECK(skewed.loads.mean == 512.0);
  CHECK(skewed.stats.busiest_card == 0);
  CHECK(skewed.stats.cards[0].rows == 6144);
  CHECK(skewed.stats.mean_card_rows == 4096.0);
  CHECK(skewed.stats.imbalance == 1.5);
  CHECK(balanced.stats.cards[0].rows == 4096);
  CHECK(balanced.stats.imbalance == 1.0);

  // Expert compute (dispatch barrier to the last expert): shortened by exactly one third.
  CHECK(3 * balanced.stats.expert_compute == 2 * skewed.stats.expert_compute);
  CHECK(skewed.stats.expert_compute == 6144 * skewed.spec.row_time);

  // Finish = max over cards: the layer ends with the last combine, and every card waited at the
  // combine barrier for the busiest one.
  const MoeLayerProgram& p = *skewed.program;
  Time last_combine = 0;
  for (OpId op : p.combine) last_combine = std::max(last_combine, skewed.timeline.done(p.graph, op));
  CHECK(skewed.stats.layer == last_combine);
  CHECK(skewed.stats.cards[0].waiting == 0);
  CHECK(skewed.stats.cards[15].waiting == (6144 - 2048) * skewed.spec.row_time);
  for (const auto& c : skewed.stats.cards) CHECK(c.compute + c.waiting == skewed.stats.expert_compute);
  // Every card's first expert starts when the dispatch all-to-all is done, not before.
  for (const auto& ops : p.expert_ops) CHECK(skewed.timeline.start[ops.front()] == skewed.stats.dispatch);
  // The hot cards receive the most rows, and the dispatch waits for them: 8 experts x (768 - 48)
  // rows of 8 KiB at 50 GB/s.
  CHECK(p.traffic[0].rows_received == 8 * (768 - 48));
  CHECK(skewed.stats.dispatch == transfer_time(5760LL * 8192, 50'000'000'000));
}

TEST_CASE("placement and capacity factor on the engine", "[moe]") {
  const auto sc = shipped("moe-routing.yaml");
  const MoeLayerRun base = simulate_moe_layer(sc.moe->spec);
  const MoeLayerRun rr = simulate_moe_layer(variant(sc, "round-robin"));
  CHECK(rr.stats.imbalance == 1.0);
  CHECK(3 * rr.stats.expert_compute == 2 * base.stats.expert_compute);
  const MoeLayerRun c10 = simulate_moe_layer(variant(sc, "capacity-1.0"));
  CHECK(c10.loads.dropped == 16'384);
  CHECK(c10.stats.cards[0].rows == 4096);
  const MoeLayerRun c125 = simulate_moe_layer(variant(sc, "capacity-1.25"));
  CHECK(c125.loads.dropped == 8192);
  CHECK(c125.stats.cards[0].rows == 5120);
  CHECK(c125.stats.cards[15].rows == 5120);  // padded up to capacity
}

TEST_CASE("two experts: 96/32 -> 64/64 shortens expert compute by one third", "[moe]") {
  const auto sc = shipped("moe-two-experts.yaml");
  const MoeLayerRun skewed = simulate_moe_layer(sc.moe->spec);
  const MoeLayerRun even = simulate_moe_layer(variant(sc, "balanced"));
  CHECK(skewed.loads.dispatches == 128);
  CHECK(skewed.stats.expert_compute == 96 * 10 * kMicrosecond);
  CHECK(even.stats.expert_compute == 64 * 10 * kMicrosecond);
  CHECK(skewed.stats.layer == skewed.stats.expert_compute);  // no link: the all-to-alls take no time
  CHECK(skewed.stats.cards[1].waiting == 64 * 10 * kMicrosecond);
}

TEST_CASE("moe runs are deterministic and reports are derived from the run", "[moe]") {
  const auto sc = shipped("moe-routing.yaml");
  const MoeLayerRun a = simulate_moe_layer(sc.moe->spec), b = simulate_moe_layer(sc.moe->spec);
  CHECK(cli::moe_summary_json(a, "base").dump() == cli::moe_summary_json(b, "base").dump());
  CHECK(cli::chrome_trace_text(cli::moe_trace, a) == cli::chrome_trace_text(cli::moe_trace, b));
  const std::string text = cli::moe_run_text(a);
  CHECK(text.find("65,536 dispatches, 512 rows per expert") != std::string::npos);
  CHECK(text.find("1.50 x the mean card") != std::string::npos);
  const std::string cmp = cli::moe_compare_text({{"base", &a}, {"same", &b}});
  CHECK(cmp.find("0.0%") != std::string::npos);
}

TEST_CASE("moe scenario errors name the file, line and key", "[moe]") {
  const std::string head = "name: t\nmoe:\n  experts: 128\n  top_k: 8\n  tokens: 8192\n  row_time: 96ns\n";
  CHECK(input_error(head + "  cards: 12\n").find("t.yaml:7: moe.cards:") != std::string::npos);
  CHECK(input_error(head + "  cards: 16\n  routing: {loads: [1, 2]}\n").find("moe.routing.loads") != std::string::npos);
  CHECK(input_error(head + "  cards: 16\n  routing: skewed\n").find("t.yaml:8: moe.routing: unknown routing") !=
        std::string::npos);
  CHECK(input_error(head + "  cards: 16\n  placment: contiguous\n").find("did you mean 'placement'") !=
        std::string::npos);
  CHECK(input_error(head + "  cards: 16\n  routing: {hot_experts: 50%}\n").find("moe.routing.hot_load") !=
        std::string::npos);
  CHECK(input_error("name: t\nmoe:\n  experts: 128\n  top_k: 8\n  cards: 16\n  row_time: 1ns\n")
            .find("moe.tokens: missing") != std::string::npos);
  CHECK(input_error(head + "  cards: 16\n  link: 50GB/s\n").find("moe.row_bytes") != std::string::npos);
  CHECK(input_error(head + "  cards: 16\n  capacity_factor: 0\n").find("moe.capacity_factor") != std::string::npos);
  // Bounds are checked before anything is allocated or multiplied.
  CHECK(input_error("name: t\nmoe:\n  experts: 1000000000\n  top_k: 8\n  tokens: 8192\n  cards: 1\n  row_time: 1ns\n")
            .find("moe.experts: more than 65536") != std::string::npos);
  CHECK(input_error("name: t\nmoe:\n  experts: 2\n  top_k: 99999999999\n  tokens: 8\n  cards: 1\n  row_time: 1ns\n")
            .find("moe.top_k: 99999999999 is too large") != std::string::npos);
  CHECK(input_error("name: t\nmoe:\n  experts: 2\n  top_k: 1\n  tokens: 1000000000\n  cards: 1\n  row_time: 10s\n")
            .find("moe.row_time: a card's expert compute would take more than a century") != std::string::npos);
}
