// `stepsim plan`'s per-tensor questions (plan.reshard, plan.kv_cache) and the checkpoint's average
// write rate in the design case (reference sections 5 and 6).
#include <catch2/catch.hpp>

#include <cmath>

#include "cli/input/scenario.hpp"
#include "cli/reports/plan_pictures.hpp"
#include "cli/reports/plan_report.hpp"
#include "cli/reports/plan_tensor_report.hpp"
#include "models/step_timing.hpp"
#include "plan_fixtures.hpp"

using namespace stepsim;
using namespace stepsim::cli;

namespace {
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string error_of(const std::string& yaml) {
  try {
    parse_scenario(yaml, "t.yaml");
  } catch (const InputError& e) { return e.what(); }
  return "";
}
}  // namespace

TEST_CASE("the design case saves ~115 GB every 1,800 s: ~64 MB/s on average", "[plan][arithmetic]") {
  const PlanSpec s = testing::design_case();
  const PlanResult r = evaluate_plan(s, cards_case(48, "48"), spec_step_comm(s));
  REQUIRE(r.time);
  CHECK(r.time->checkpoint_bytes == 114'670'295'040LL);
  CHECK(std::round(r.time->checkpoint_write_rate / 1e6) == 64);
}

TEST_CASE("tensor-sizes: gate projection TP4 -> TP8 and the 8K KV cache from the scenario", "[plan][arithmetic]") {
  const Scenario sc = load_scenario(std::string(STEPSIM_SOURCE_DIR) + "/scenarios/tensor-sizes.yaml");
  REQUIRE(sc.plan);
  REQUIRE(sc.plan->reshard);
  const ReshardQuestion& q = *sc.plan->reshard;
  CHECK(q.rows == 12288);
  CHECK(q.cols == 4096);
  CHECK(q.format.recoverable() == 14);
  const std::string text = reshard_table(q).render();
  CHECK(contains(text, "weights 96 MiB"));
  CHECK(contains(text, "in a checkpoint 672 MiB"));
  CHECK(contains(text, "old shard 3,072 rows (24 MiB of weights); new shard 1,536 rows (12 MiB)"));
  const auto j = reshard_json(q);
  CHECK(j["checkpoint_bytes"] == 672LL * 1024 * 1024);
  REQUIRE(j["reads"].size() == 8);
  CHECK(j["reads"][5]["old_rank"] == 2);
  CHECK(j["reads"][5]["old_offset"] == 1536);

  REQUIRE(sc.plan->kv_cache);
  CHECK(contains(kv_cache_table(*sc.plan->kv_cache).render(), "1,207,959,552  1.125"));
  CHECK(kv_cache_json(*sc.plan->kv_cache)["sequences"][0]["bytes"] == 1'207'959'552LL);
  // The plan's text carries both sections.
  const std::string plan = plan_text("t", *sc.plan, nullptr);
  CHECK(contains(plan, "from TP4 to TP8"));
  CHECK(contains(plan, "KV cache of one sequence (qwen3-8b)"));
  // And the HTML report (`plan --html`) shows the same tables.
  const std::string html = plan_html_report("t", "", *sc.plan, nullptr);
  CHECK(contains(html, "Tensors"));
  CHECK(contains(html, "in a checkpoint 672 MiB"));
  CHECK(contains(html, "1,207,959,552"));
}

TEST_CASE("plan.reshard and plan.kv_cache errors name the key", "[plan][arithmetic]") {
  CHECK(contains(error_of("plan:\n  reshard: {shape: [12288], from: 4, to: 8}\n"), "t.yaml:2: plan.reshard.shape:"));
  CHECK(contains(error_of("plan:\n  reshard: {shape: [12288, x], from: 4, to: 8}\n"), "plan.reshard.shape[1]"));
  CHECK(contains(error_of("plan:\n  reshard: {shape: [4, 4], from: 4, to: 8}\n"), "plan.reshard.to: more ranks"));
  CHECK(contains(error_of("plan:\n  reshard: {shape: [8, 4], from: 4}\n"), "plan.reshard.to"));
  CHECK(contains(error_of("plan:\n  kv_cache: {tokens: [8192]}\n"), "plan.kv_cache.model: missing"));
  CHECK(contains(error_of("plan:\n  kv_cache: {model: qwen3-8b}\n"), "plan.kv_cache.tokens"));
  CHECK(contains(error_of("plan:\n  kv_cache: {model: qwen3-8x, tokens: [1]}\n"), "plan.kv_cache.model"));
}
