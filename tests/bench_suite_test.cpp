// Regression-benchmark suites: reading suites, expanding variants, shards, results files,
// baseline comparison, merging and the per-setting winners.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "cli/bench/bench_runner.hpp"

using namespace stepsim;
using namespace stepsim::cli;

namespace {

// The shipped suite's base scenario, inline so that the tests do not depend on file layout.
const std::string kBase = R"(
name: base
pipeline:
  stages: 4
  microbatches: 8
  schedule: 1f1b
  time: {forward: 10ms, backward: 20ms, backward_input: 10ms, backward_weight: 10ms, update: 1ms}
  link: {latency: 1ms}
  memory: {activation: 230MiB, message: 1MiB}
)";

BenchResults run_suite(const BenchSuite& suite, unsigned jobs, Shard shard = {}) {
  std::vector<PreparedVariant> prepared;
  for (std::size_t i : shard_indices(suite.variant_count(), shard)) {
    BenchVariant v = variant_at(suite, i);
    PipelineSpec spec = variant_spec(suite, v);
    prepared.push_back({std::move(v), std::move(spec)});
  }
  BenchResults r;
  r.suite = suite.identity();
  r.shard = shard.count > 1 ? fmt::format("{}/{}", shard.index, shard.count) : "all";
  r.results = run_variants(prepared, jobs);
  return r;
}

const VariantResult& find(const BenchResults& r, const std::string& key) {
  for (const auto& v : r.results)
    if (v.key() == key) return v;
  FAIL("no variant " << key);
  throw;
}

}  // namespace

TEST_CASE("time ratios F:B:W are parsed exactly and derive the backward times from the forward", "[bench]") {
  std::string err;
  auto r = parse_time_ratio("1:2:1", &err);
  REQUIRE(r);
  CHECK(r->f == 1'000'000);
  CHECK(r->b == 2'000'000);
  CHECK(r->w == 1'000'000);
  auto half = parse_time_ratio("2:1.5:0.25", &err);
  REQUIRE(half);
  CHECK(half->b == 1'500'000);
  CHECK(half->w == 250'000);
  for (const char* bad : {"2:1", "1:2:3:4", "0:1:1", "a:b:c", "1:-1:1", "1:1.0000001:1", ""}) {
    INFO(bad);
    CHECK_FALSE(parse_time_ratio(bad, &err));
  }

  PipelineSpec spec;
  spec.forward = {10 * kMillisecond, 7};
  apply_time_ratio(spec, *r);
  CHECK(spec.backward_input == std::vector<Time>{20 * kMillisecond, 14});
  CHECK(spec.backward_weight == std::vector<Time>{10 * kMillisecond, 7});
  CHECK(spec.backward == std::vector<Time>{30 * kMillisecond, 21});
  // 7 ns x 1.5 / 2 = 5.25 -> 5; 7 x 0.25 / 2 = 0.875 -> 1 (nearest ns).
  apply_time_ratio(spec, *half);
  CHECK(spec.backward_input[1] == 5);
  CHECK(spec.backward_weight[1] == 1);
}

TEST_CASE("a suite's variants are the cross product of its axes, last axis fastest", "[bench]") {
  const BenchSuite suite = parse_suite(R"(
name: t
scenario: base.yaml
axes:
  schedule: [1f1b, {label: gpipe-2ms, set: {schedule: fill-drain, latency: 2ms}}]
  stages: [2, 4, 8]
  pipeline.memory.message: [2MiB]
  time_ratio: ["1:2:1"]
)",
                                       "t.yaml", kBase);
  REQUIRE(suite.variant_count() == 6);
  const BenchVariant v0 = variant_at(suite, 0), v4 = variant_at(suite, 4);
  CHECK(settings_key(v0.settings) == "schedule=1f1b stages=2 pipeline.memory.message=2MiB time_ratio=1:2:1");
  CHECK(settings_key(v4.settings) == "schedule=gpipe-2ms stages=4 pipeline.memory.message=2MiB time_ratio=1:2:1");
  const PipelineSpec s4 = variant_spec(suite, v4);
  CHECK(s4.schedule == "fill-drain");
  CHECK(s4.stages == 4);
  CHECK(s4.latency == 2 * kMillisecond);
  CHECK(s4.message == 2 * 1024 * 1024);
  CHECK(s4.backward_input == std::vector<Time>(4, 20 * kMillisecond));
  // The command line's --set applies to every variant, before the axes.
  const PipelineSpec s0 = variant_spec(suite, v0, {"pipeline.microbatches=3", "pipeline.stages=16"});
  CHECK(s0.microbatches == 3);
  CHECK(s0.stages == 2);

  CHECK(shard_indices(10, {1, 3}) == std::vector<std::size_t>{1, 4, 7});
  CHECK(shard_indices(2, {0, 1}) == std::vector<std::size_t>{0, 1});
  std::string err;
  auto sh = parse_shard("2/5", &err);
  REQUIRE(sh);
  CHECK(sh->index == 2);
  CHECK(sh->count == 5);
  for (const char* bad : {"5/5", "1/0", "1", "a/2", "1/2x", "-1/2"}) {
    INFO(bad);
    CHECK_FALSE(parse_shard(bad, &err));
  }
}

TEST_CASE("variants that differ only in their time ratio share one read of the scenario", "[bench]") {
  const BenchSuite suite = parse_suite(R"(
name: t
scenario: base.yaml
axes:
  time_ratio: ["1:1:1", "1:2:1", "2:3:1"]
  schedule: [1f1b, zb-h1]
  stages: [2, 4]
)",
                                       "t.yaml", kBase);
  const std::vector<std::string> sets{"pipeline.microbatches=6"};
  for (const unsigned jobs : {1u, 2u}) {
    INFO("jobs " << jobs);
    const auto prepared = prepare_variants(suite, shard_indices(suite.variant_count(), {}), sets, jobs);
    REQUIRE(prepared.size() == 12);
    for (std::size_t i = 0; i < prepared.size(); ++i) {
      INFO("variant " << i);
      const PipelineSpec own = variant_spec(suite, variant_at(suite, i), sets);
      const PipelineSpec& got = prepared[i].spec;
      CHECK(prepared[i].variant.index == i);
      CHECK(got.schedule == own.schedule);
      CHECK(got.stages == own.stages);
      CHECK(got.microbatches == 6);
      CHECK(got.forward == own.forward);
      CHECK(got.backward == own.backward);
      CHECK(got.backward_input == own.backward_input);
      CHECK(got.backward_weight == own.backward_weight);
    }
    // Variants 0, 4 and 8 (1f1b on 2 stages at 1:1:1, 1:2:1 and 2:3:1) share one read, each
    // with its own ratio applied to the 10 ms forward.
    CHECK(prepared[0].spec.backward_input == std::vector<Time>(2, 10 * kMillisecond));
    CHECK(prepared[4].spec.backward_input == std::vector<Time>(2, 20 * kMillisecond));
    CHECK(prepared[8].spec.backward_input == std::vector<Time>(2, 15 * kMillisecond));
    CHECK(prepared[8].spec.backward_weight == std::vector<Time>(2, 5 * kMillisecond));
  }
  // A bad value fails naming the first variant that has it, as reading each variant would.
  const BenchSuite bad =
      parse_suite("scenario: b.yaml\naxes:\n  time_ratio: ['1:1:1', '1:2:1']\n  stages: [2, 0]\n", "s.yaml", kBase);
  for (const unsigned jobs : {1u, 2u}) {
    try {
      prepare_variants(bad, shard_indices(bad.variant_count(), {}), {}, jobs);
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()) ==
            "s.yaml:4: axes.stages: value '0' (pipeline.stages): must be at least 1 (got 0) "
            "[variant 1 (time_ratio=1:1:1 stages=0)]");
    }
  }
}

TEST_CASE("bad suites fail with file, line and key", "[bench]") {
  const auto error_of = [](const std::string& text) {
    try {
      const BenchSuite s = parse_suite(text, "s.yaml", kBase);
      for (std::size_t i = 0; i < s.variant_count(); ++i) variant_spec(s, variant_at(s, i));
    } catch (const InputError& e) { return std::string(e.what()); }
    return std::string("no error");
  };
  CHECK(error_of("scenario: b.yaml\naxes:\n  stage: [2]\n") ==
        "s.yaml:3: axes.stage: unknown axis; did you mean 'stages'?");
  CHECK(error_of("scenario: b.yaml\naxes:\n  stages: 2\n") ==
        "s.yaml:3: axes.stages: expected a non-empty list of values");
  CHECK(error_of("scenario: b.yaml\naxes:\n  stages: [2, 2]\n") == "s.yaml:3: axes.stages[1]: value '2' appears twice");
  CHECK(error_of("scenario: b.yaml\naxes:\n  time_ratio: ['2:1']\n") ==
        "s.yaml:3: axes.time_ratio[0]: '2:1' is not a time ratio F:B:W like 1:2:1 (three non-negative numbers)");
  CHECK(error_of("scenario: b.yaml\naxes:\n  stages: [2]\ntolerance: {step_time: 3kg}\n")
            .rfind("s.yaml:4: tolerance.step_time: '3kg' is not a duration", 0) == 0);
  CHECK(error_of("scenario: b.yaml\naxes:\n  stages: [2]\ntolerance: {speed: 0}\n") ==
        "s.yaml:4: tolerance.speed: unknown key (known here: step_time, bubble_fraction, peak_memory, messages)");
  // A value the scenario rejects points at the axis in the suite, naming the variant.
  CHECK(error_of("scenario: b.yaml\naxes:\n  schedule: [1f1b]\n  stages: [2, 0]\n") ==
        "s.yaml:4: axes.stages: value '0' (pipeline.stages): must be at least 1 (got 0) "
        "[variant 1 (schedule=1f1b stages=0)]");
  CHECK(error_of("scenario: b.yaml\naxes:\n  x: [{label: a, set: {latncy: 1ms}}]\n")
            .rfind("s.yaml:3: axes.x[0].set.latncy: unknown axis 'latncy'; did you mean 'latency'?", 0) == 0);
  CHECK(error_of("axes:\n  stages: [2]\n") == "s.yaml:1: scenario: missing (required)");
}

TEST_CASE("variants a schedule cannot take are skipped with the reason; threads do not change the results", "[bench]") {
  const BenchSuite suite = parse_suite(R"(
name: t
scenario: base.yaml
axes:
  schedule: [fill-drain, 1f1b, zb-h1]
  virtual_stages: [1, 2]
  microbatches: [4, 8]
)",
                                       "t.yaml", kBase);
  const BenchResults one = run_suite(suite, 1), two = run_suite(suite, 2);
  CHECK(results_json_text(one) == results_json_text(two));
  CHECK(results_csv(one) == results_csv(two));
  const auto& skipped = find(one, "schedule=1f1b virtual_stages=2 microbatches=4");
  CHECK(skipped.status == VariantStatus::Skipped);
  CHECK(skipped.reason == "1f1b: 1f1b places one stage per device (use interleaved-1f1b for virtual_stages > 1)");
  // The book's figures (4 stages, 8 micro-batches; reference figure 10-24).
  const auto& zb = find(one, "schedule=zb-h1 virtual_stages=1 microbatches=8");
  CHECK(zb.status == VariantStatus::Ok);
  CHECK(zb.step_time == 283 * kMillisecond);
  CHECK(zb.forward_messages == 24);
  CHECK(zb.peak_memory.size() == 4);
  const auto& f1 = find(one, "schedule=1f1b virtual_stages=1 microbatches=8");
  CHECK(f1.step_time == 347 * kMillisecond);
  CHECK(f1.peak_resident == std::vector<int>{4, 3, 2, 1});

  // Winners per (virtual_stages, microbatches): only settings where something ran.
  const auto wins = schedule_wins(one);
  REQUIRE(wins.size() == 2);
  CHECK(settings_key(wins[1].setting) == "virtual_stages=1 microbatches=8");
  CHECK(wins[1].fastest == "zb-h1");
  CHECK(wins[1].runner_up == "fill-drain");
  CHECK(wins[1].lowest_memory == "1f1b");
  CHECK(wins_text(wins).find("fastest:       zb-h1 in 2") != std::string::npos);
}

TEST_CASE("result files round-trip, and shards merge into the whole run byte for byte", "[bench]") {
  const BenchSuite suite = parse_suite(R"(
name: t
scenario: base.yaml
axes:
  schedule: [1f1b, zb-h1]
  stages: [2, 4]
  microbatches: [4, 8]
  virtual_stages: [1, 2]
)",
                                       "t.yaml", kBase);
  const BenchResults all = run_suite(suite, 2);
  const std::string text = results_json_text(all);
  CHECK(results_json_text(results_from_json(text, "all.json")) == text);

  const BenchResults a = run_suite(suite, 1, {0, 3}), b = run_suite(suite, 1, {1, 3}), c = run_suite(suite, 1, {2, 3});
  CHECK(a.results.size() + b.results.size() + c.results.size() == 16);
  const BenchResults merged = merge_results({c, a, b}, {"c.json", "a.json", "b.json"});
  CHECK(merged.shard == "all");
  CHECK(results_json_text(merged) == text);
  CHECK(merge_results({a, b}, {"a.json", "b.json"}).shard == "partial");
  CHECK_THROWS_WITH(merge_results({a, a}, {"a.json", "a2.json"}),
                    Catch::StartsWith("a2.json: results: variant 0 (schedule=1f1b stages=2 microbatches=4 "
                                      "virtual_stages=1) is also in a.json"));
  BenchResults other = b;
  other.suite.axes[0].second.push_back("fill-drain");
  // The first field that differs is named (the two descriptions used to read alike).
  CHECK_THROWS_WITH(merge_results({a, other}, {"a.json", "o.json"}),
                    "o.json: suite: comes from a different suite (or suite version) than a.json: axis 1 schedule: "
                    "[1f1b, zb-h1, fill-drain] vs schedule: [1f1b, zb-h1]");
  CHECK_THROWS_WITH(results_from_json("{\"format\": \"x\"}", "x.json"),
                    "x.json: format: 'x' is not a stepsim bench result file (stepsim-bench/1)");
  CHECK_THROWS_WITH(results_from_json("[1,", "x.json"), Catch::StartsWith("x.json: not valid JSON"));
}

TEST_CASE("the baseline comparison lists regressions past tolerance, one line per variant", "[bench]") {
  const std::string suite_text = R"(
name: t
scenario: base.yaml
axes:
  schedule: [1f1b, zb-h1]
  microbatches: [4, 8]
)";
  const BenchSuite suite = parse_suite(suite_text, "t.yaml", kBase);
  const BenchResults base = run_suite(suite, 1);
  Tolerances exact;
  const Comparison same = compare_results(base, base, exact);
  CHECK(same.compared == 4);
  CHECK(same.regressions.empty());
  CHECK(same.improvements.empty());

  // A deliberately changed schedule: "1f1b" now runs fill-drain's order.
  const BenchSuite changed = parse_suite(R"(
name: t
scenario: base.yaml
axes:
  schedule: [{label: 1f1b, set: {schedule: fill-drain}}, zb-h1]
  microbatches: [4, 8]
)",
                                         "t.yaml", kBase);
  const BenchResults cur = run_suite(changed, 1);
  const Comparison c = compare_results(base, cur, exact);
  REQUIRE(c.regressions.size() == 2);
  // 1F1B holds 4/3/2/1 micro-batches (230 MiB each, plus a 1 MiB message waiting) on the four
  // stages; fill-drain holds all 8 everywhere.
  CHECK(c.regressions[1] ==
        "schedule=1f1b microbatches=8: peak memory d3 231.000 -> 1840.000 MiB (+696.54%), "
        "d2 461.000 -> 1840.000 MiB (+299.13%), d1 691.000 -> 1840.000 MiB (+166.28%) and 1 more devices");
  REQUIRE(c.improvements.size() == 2);  // fill-drain is faster than 1F1B here (337 vs 347 ms)
  CHECK(c.improvements[1].rfind("schedule=1f1b microbatches=8: step time 347.000 -> 337.000 ms (-2.88%)", 0) == 0);
  const std::string text = comparison_text(c, "base.json");
  CHECK(text.rfind("baseline base.json: 4 variants compared, 2 regressions, 2 improvements\n"
                   "regressions past tolerance (2):\n  schedule=1f1b microbatches=4: peak memory",
                   0) == 0);

  // A tolerance wide enough lets it pass; a relative one scales with the baseline.
  Tolerances loose;
  std::string err;
  loose.peak_memory = *parse_tolerance(Metric::PeakMemory, "800%", &err);
  CHECK(compare_results(base, cur, loose).regressions.empty());
  loose.peak_memory = *parse_tolerance(Metric::PeakMemory, "1000MiB", &err);
  CHECK(compare_results(base, cur, loose).regressions.size() == 1);  // 8 micro-batches: d1..d3 grow by more
  CHECK_FALSE(parse_tolerance(Metric::StepTime, "3", &err));         // a step time tolerance has a unit
  CHECK(parse_tolerance(Metric::StepTime, "0", &err));
  CHECK(parse_tolerance(Metric::Messages, "2", &err)->absolute == 2);
  CHECK(parse_tolerance(Metric::BubbleFraction, "0.5%", &err)->relative == Approx(0.005));

  // A variant that ran and now is skipped is a regression; a new one is a note.
  BenchResults skipped = base;
  skipped.results[0].status = VariantStatus::Skipped;
  skipped.results[0].reason = "no longer takes it";
  skipped.results[1].settings[1].second = "16";
  const Comparison s = compare_results(base, skipped, exact);
  REQUIRE(s.regressions.size() == 1);
  CHECK(s.regressions[0] == "schedule=1f1b microbatches=4: ran in the baseline, now skipped: no longer takes it");
  CHECK(s.notes == std::vector<std::string>{"schedule=1f1b microbatches=16: not in the baseline",
                                            "schedule=1f1b microbatches=8: in the baseline, not in this run"});
}
