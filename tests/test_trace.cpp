// The Chrome trace of a 1F1B run, parsed back and checked against the Trace Event Format; and the
// trace of every schedule on random durations.
#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "cli/input/scenario.hpp"
#include "cli/reports/pipeline_report.hpp"
#include "random_pipeline_spec.hpp"

using namespace stepsim;

TEST_CASE("1F1B trace: slices, tracks, flows and memory counters", "[trace]") {
  auto sc = cli::load_scenario(std::string(STEPSIM_SOURCE_DIR) + "/scenarios/book-pipeline.yaml");
  const auto run = simulate_pipeline(*sc.pipeline);
  const std::string text = cli::chrome_trace_text(cli::pipeline_trace, run);
  const auto doc = nlohmann::json::parse(text);
  REQUIRE(doc.contains("traceEvents"));
  const auto& events = doc["traceEvents"];

  std::map<int, std::string> process_names;
  std::set<std::pair<int, int>> named_threads;
  int slices = 0, compute_slices = 0, counters = 0;
  std::map<std::uint64_t, int> flow_phases;
  std::set<std::string> names;
  for (const auto& e : events) {
    REQUIRE(e.contains("ph"));
    REQUIRE(e.contains("pid"));
    const std::string ph = e["ph"];
    if (ph == "M") {
      if (e["name"] == "process_name") process_names[e["pid"]] = e["args"]["name"];
      if (e["name"] == "thread_name") named_threads.insert({e["pid"].get<int>(), e["tid"].get<int>()});
    } else if (ph == "X") {
      ++slices;
      REQUIRE(e["ts"].is_number());
      REQUIRE(e["dur"].is_number());
      REQUIRE(e["dur"].get<double>() >= 0);
      REQUIRE(named_threads.count({e["pid"].get<int>(), e["tid"].get<int>()}));
      names.insert(e["name"].get<std::string>());
      if (e["tid"] == 1) {
        ++compute_slices;
        if (e["cat"] != "update") {
          REQUIRE(e["args"].contains("stage"));
          REQUIRE(e["args"].contains("microbatch"));
          REQUIRE(e["args"].contains("start_ms"));
          REQUIRE(e["args"].contains("end_ms"));
        }
      }
    } else if (ph == "s" || ph == "f") {
      flow_phases[e["id"].get<std::uint64_t>()] += ph == "s" ? 1 : 10;
    } else if (ph == "C") {
      ++counters;
      REQUIRE(e["args"].contains("MiB"));
    } else {
      FAIL("unexpected phase " << ph);
    }
  }
  CHECK(process_names.size() == 4);
  CHECK(process_names[1] == "device 0");
  CHECK(slices == static_cast<int>(run.program->graph.op_count()));
  CHECK(compute_slices == 4 * (8 + 8 + 1));  // F, B, update per device
  CHECK(names.count("F mb3"));
  CHECK(names.count("B mb7"));
  // One start and one finish per message.
  CHECK(flow_phases.size() == 48);
  for (const auto& [id, phases] : flow_phases) CHECK(phases == 11);
  CHECK(counters > 0);
  // Deterministic: the same run gives the same bytes.
  CHECK(cli::chrome_trace_text(cli::pipeline_trace, simulate_pipeline(*sc.pipeline)) == text);
}

TEST_CASE("Chrome trace of every schedule parses and shows every op and message", "[schedules][trace]") {
  std::mt19937_64 rng(5);
  for (const auto& family : schedule_families()) {
    const PipelineSpec spec = test::spec_with(rng, family.name, 4, 8, 0);
    INFO(family.name);
    const auto run = simulate_pipeline(spec);
    const auto doc = nlohmann::json::parse(cli::chrome_trace_text(cli::pipeline_trace, run));
    int slices = 0, flow_starts = 0, overlap = 0, weight = 0;
    std::set<int> devices;
    for (const auto& e : doc["traceEvents"]) {
      const std::string ph = e["ph"];
      if (ph == "X") {
        ++slices;
        devices.insert(e["pid"].get<int>());
        if (e["cat"] == "overlap") ++overlap;
        if (e["cat"] == "W") ++weight;
      }
      if (ph == "s") ++flow_starts;
    }
    CHECK(slices == static_cast<int>(run.program->graph.op_count()));
    CHECK(flow_starts == run.stats.forward_messages + run.stats.backward_messages);
    CHECK(devices.size() == 4);
    CHECK((overlap > 0) == (family.name == "dualpipe" || family.name == "dualpipe-v"));
    CHECK((weight > 0) == family.split_backward);
  }
}
