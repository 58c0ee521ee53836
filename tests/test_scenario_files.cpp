// The shipped scenario files read to the specs the simulation tests build in C++, and reproduce
// their figures; errors in them point at file, line and key. (The tests of the simulation itself
// build their specs in C++: tests/lowering/.)
#include <catch2/catch.hpp>

#include "book_pipeline.hpp"
#include "cli/input/scenario.hpp"
#include "dp_design.hpp"
#include "schedules/lowering/data_parallel/data_parallel_spec.hpp"

using namespace stepsim;

namespace {

constexpr Time ms = kMillisecond;

DataParallelSpec design_spec(int cards, int microbatches) { return test::zero3_design(cards, microbatches); }

}  // namespace

TEST_CASE("book-pipeline.yaml reads to the spec the pipeline tests build", "[pipeline][scenarios]") {
  const auto sc = cli::load_scenario(std::string(STEPSIM_SOURCE_DIR) + "/scenarios/book-pipeline.yaml");
  REQUIRE(sc.pipeline);
  const PipelineSpec& f = *sc.pipeline;
  const PipelineSpec c = test::book_pipeline("1f1b");
  CHECK(f.stages == c.stages);
  CHECK(f.microbatches == c.microbatches);
  CHECK(f.virtual_stages == c.virtual_stages);
  CHECK(f.schedule == c.schedule);
  CHECK(f.layers == c.layers);
  CHECK(f.chunk_layers == c.chunk_layers);
  CHECK(f.forward == c.forward);
  CHECK(f.backward == c.backward);
  CHECK(f.backward_input == c.backward_input);
  CHECK(f.backward_weight == c.backward_weight);
  CHECK(f.update == c.update);
  CHECK(f.activation == c.activation);
  CHECK(f.overlap_fb == c.overlap_fb);
  CHECK(f.latency == c.latency);
  CHECK(f.bandwidth == c.bandwidth);
  CHECK(f.message == c.message);
  CHECK(f.wrap_latency == c.wrap_latency);
  CHECK(f.capacity == c.capacity);
  CHECK(f.custom_actions.empty());
  // And with the overrides the tests use: the same as changing the field.
  const auto six = cli::load_scenario(std::string(STEPSIM_SOURCE_DIR) + "/scenarios/book-pipeline.yaml",
                                      {"pipeline.schedule=dualpipe", "pipeline.microbatches=6"});
  CHECK(six.pipeline->schedule == "dualpipe");
  CHECK(six.pipeline->microbatches == 6);
}

TEST_CASE("shipped data-parallel scenarios load and reproduce their figures", "[data_parallel][scenarios]") {
  const std::string dir = STEPSIM_SOURCE_DIR "/scenarios/";
  const auto sc = cli::load_scenario(dir + "dp-buckets.yaml");
  REQUIRE(sc.data_parallel);
  REQUIRE(sc.data_parallel->variants.size() == 2);
  const auto one = simulate_data_parallel(sc.data_parallel->variants[1].second);
  CHECK(one.exposed_comm == one.link_time - 2 * ms);  // 4.55 - 2 = 2.55 ms
  const auto order = cli::load_scenario(dir + "dp-overlap-order.yaml");
  CHECK(simulate_data_parallel(order.data_parallel->variants[1].second).exposed_comm == 500 * kMicrosecond);
  const auto z48 = cli::load_scenario(dir + "zero3-design-48.yaml");
  const auto r48 = simulate_data_parallel(z48.data_parallel->spec);
  CHECK(r48.step_time == simulate_data_parallel(design_spec(48, 8)).step_time);
  const auto z32 = cli::load_scenario(dir + "zero3-design-32.yaml");
  CHECK(simulate_data_parallel(z32.data_parallel->spec).step_time ==
        simulate_data_parallel(design_spec(32, 12)).step_time);
  // The model file is the built-in shape.
  CHECK(count_parameters(*z48.data_parallel->spec.model).total == 8'190'735'360LL);
}

TEST_CASE("data_parallel scenario errors point at file, line and key", "[data_parallel][scenarios]") {
  const auto bad = [](const std::string& text) {
    try {
      cli::parse_scenario(text, "bad.yaml");
    } catch (const cli::InputError& e) { return std::string(e.what()); }
    return std::string("no error");
  };
  CHECK_THAT(bad("data_parallel:\n  cards: 4\n  prefetsh: 2\n"),
             Catch::Contains("bad.yaml:3") && Catch::Contains("did you mean 'prefetch'"));
  CHECK_THAT(bad("data_parallel:\n  model: qwen3-7b\n"), Catch::Contains("did you mean 'qwen3-8b'"));
  CHECK_THAT(bad("data_parallel:\n  backward_order: sideways\n"), Catch::Contains("data_parallel.backward_order"));
  CHECK_THAT(bad("data_parallel:\n  zero_stage: 2\n"), Catch::Contains("zero_stage 2 is not simulated"));
  CHECK_THAT(bad("data_parallel:\n  model: qwen3-8b\n  layers: {a: {forward: 1ms}}\n"), Catch::Contains("not both"));
  CHECK_THAT(bad("data_parallel:\n  layers:\n    a: {backward_input: 1ms}\n"), Catch::Contains("come together"));
  CHECK_THAT(bad("data_parallel:\n  stragglers: {x: 2}\n"), Catch::Contains("card number"));
  CHECK_THAT(bad("data_parallel:\n  model: {file: nowhere.yaml}\n"), Catch::Contains("cannot open"));
  CHECK_THAT(bad("data_parallel:\n  variants: {v: {cardz: 3}}\n"), Catch::Contains("data_parallel.variants.v.cardz"));
}
