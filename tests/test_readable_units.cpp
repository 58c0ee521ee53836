// Units a person reads (issue 15, item 3): durations in the largest unit that keeps 3-4
// significant digits, counts with their noun in the singular for one, time axes in s / min / h
// when the span calls for it, and the chunk a pipeline op belongs to where a device holds several.
#include <catch2/catch.hpp>

#include <string>

#include "cli/reports/charts.hpp"
#include "cli/reports/pipeline_report.hpp"
#include "cli/reports/table.hpp"
#include "cli/reports/text_gantt.hpp"
#include "models/units.hpp"
#include "schedules/lowering/pipeline/pipeline_spec.hpp"

using namespace stepsim;
using namespace stepsim::cli;

TEST_CASE("durations read in the largest unit with 3-4 significant digits", "[units][readable]") {
  // The cases: "background write 4000.000 ms", "redo 9000.000 ms", a 52.8 s step.
  CHECK(format_duration(4 * kSecond) == "4.0 s");
  CHECK(format_duration(9 * kSecond) == "9.0 s");
  CHECK(format_duration(52'825'429'000) == "52.8 s");
  CHECK(format_duration(78'937'148'000) == "78.9 s");  // seconds up to 100 s
  CHECK(format_duration(100 * kSecond) == "1.7 min");
  CHECK(format_duration(120 * kSecond) == "2.0 min");
  CHECK(format_duration(1'814'700 * kMillisecond) == "30.2 min");
  CHECK(format_duration(99 * 60 * kSecond) == "99.0 min");
  CHECK(format_duration(100 * 60 * kSecond) == "1.7 h");
  CHECK(format_duration(47 * 3'600 * kSecond) == "47.0 h");
  CHECK(format_duration(48 * 3'600 * kSecond) == "2.0 d");
  CHECK(format_duration(337 * 86'400 * kSecond) == "337 d");
  CHECK(format_duration(500 * kMillisecond) == "500 ms");
  CHECK(format_duration(16'381'470'720) == "16.4 s");
  CHECK(format_duration(999'960'000) == "1000 ms");  // one decimal would print 100.0-and-more digits
  CHECK(format_duration(1'500 * kMicrosecond) == "1.5 ms");
  CHECK(format_duration(393 * kMicrosecond) == "393 us");
  CHECK(format_duration(7) == "7.0 ns");
  CHECK(format_duration(0) == "0 s");
  CHECK(format_duration(-4 * kSecond) == "-4.0 s");
}

TEST_CASE("a count with its noun: singular for one", "[units][readable]") {
  CHECK(counted(1, "card") == "1 card");
  CHECK(counted(0, "card") == "0 cards");
  CHECK(counted(48, "card") == "48 cards");
  CHECK(counted(1, "run") == "1 run");
  CHECK(counted(1000, "run") == "1000 runs");
  CHECK(counted(1, "micro-batch", "micro-batches") == "1 micro-batch");
  CHECK(counted(8, "micro-batch", "micro-batches") == "8 micro-batches");
}

TEST_CASE("time axes switch to s, min or h once ms ticks would read like 50000", "[units][readable]") {
  CHECK(std::string(axis_unit(347.0).name) == "ms");
  CHECK(std::string(axis_unit(19'999.0).name) == "ms");
  CHECK(std::string(axis_unit(52'825.429).name) == "s");
  CHECK(axis_unit(52'825.429).ms == 1000.0);
  CHECK(std::string(axis_unit(20.0 * 60'000).name) == "min");
  CHECK(std::string(axis_unit(20.0 * 3'600'000).name) == "h");
  // The text Gantt of a 52.8 s timeline labels its axis in s: 0, 10, 20, ... not 0, 10000, ...
  TimelineChart chart;
  chart.legend = {{"forward", "#4e79a7", 'F'}};
  chart.end = 52'825'429'000;
  TimeTrack t;
  t.label = "card 0";
  t.bars.push_back({0, chart.end, 0, "", "", false});
  chart.tracks.push_back(t);
  const std::string text = timeline_text(chart, chart.end, 80, false);
  CHECK(text.find("\ns  ") != std::string::npos);
  CHECK(text.find(" 10 ") != std::string::npos);
  CHECK(text.find("10000") == std::string::npos);
}

TEST_CASE("chunks are named where a device holds more than one", "[units][readable][trace]") {
  PipelineSpec spec;
  spec.stages = 4;
  spec.microbatches = 8;
  spec.forward.assign(4, 10 * kMillisecond);
  spec.backward.assign(4, 20 * kMillisecond);
  spec.backward_input.assign(4, 10 * kMillisecond);
  spec.backward_weight.assign(4, 10 * kMillisecond);
  spec.update.assign(4, 1 * kMillisecond);
  spec.latency = 1 * kMillisecond;
  spec.activation.assign(4, 230LL << 20);
  spec.message = 1LL << 20;

  spec.schedule = "1f1b";
  const PipelineRun one = simulate_pipeline(spec);
  for (const auto& device : pipeline_chunks(one))
    for (int c : device) CHECK(c == -1);  // one chunk per device: no label
  CHECK(chrome_trace_text(pipeline_trace, one).find("\"chunk\"") == std::string::npos);

  // Interleaved, two chunks per device: device 0 holds stages 0 and 4, device 3 stages 3 and 7.
  spec.schedule = "interleaved-1f1b";
  spec.virtual_stages = 2;
  const PipelineRun il = simulate_pipeline(spec);
  const auto chunks = pipeline_chunks(il);
  REQUIRE(chunks.size() == 4);
  CHECK(chunks[0][0] == 0);
  CHECK(chunks[0][4] == 1);
  CHECK(chunks[3][3] == 0);
  CHECK(chunks[3][7] == 1);
  CHECK(chunks[0][1] == -1);  // not on device 0
  CHECK(chunk_suffix(chunks, 0, 4) == " c1");
  const std::string trace = chrome_trace_text(pipeline_trace, il);
  // Micro-batch 0's forward once through each of device 0's chunks, told apart.
  CHECK(trace.find("\"name\":\"F mb0 c0\"") != std::string::npos);
  CHECK(trace.find("\"name\":\"F mb0 c1\"") != std::string::npos);
  CHECK(trace.find("\"chunk\":1") != std::string::npos);

  // DualPipe: each device holds its own stage and the mirrored one (two parameter copies).
  spec.schedule = "dualpipe";
  spec.virtual_stages = 0;
  const PipelineRun dp = simulate_pipeline(spec);
  const auto dchunks = pipeline_chunks(dp);
  CHECK(dchunks[0][0] == 0);
  CHECK(dchunks[0][3] == 1);
  CHECK(dchunks[3][0] == 0);
  CHECK(dchunks[3][3] == 1);
}
