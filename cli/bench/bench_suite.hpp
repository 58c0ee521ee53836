#pragma once
// Benchmark suites: a base scenario plus axes to vary. The cross product of the axes' values is
// the list of variants `stepsim bench` runs; variant i is the i-th element of that product with
// the first axis outermost, so an index names the same variant on every machine and shard.
//
// Suite file (paths relative to the suite file):
//   name: pipeline
//   scenario: pipeline-base.yaml          # the base scenario every variant starts from
//   baseline: pipeline.baseline.json      # optional: where --write-baseline writes
//   axes:                                 # each: a list of values, applied like --set
//     schedule: [fill-drain, 1f1b, zb-h1]
//     stages: [2, 4, 8, 16]
//     time_ratio: ["1:1:1", "1:2:1"]      # F:B:W, see apply_time_ratio
//     pipeline.memory.message: [1MiB, 4MiB]   # any dotted scenario key
//     variant:                            # a value may set several keys under one label
//       - {label: interleaved-v2, set: {schedule: interleaved-1f1b, virtual_stages: 2}}
//   tolerance: {step_time: 0, bubble_fraction: 0, peak_memory: "1%", messages: 0}
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "cli/bench/bench_results.hpp"
#include "cli/input/input.hpp"
#include "schedules/lowering/pipeline/pipeline_spec.hpp"

namespace stepsim::cli {

// F:B:W in zero-bubble notation (Qi et al. 2024): B is the input-gradient half of the backward,
// W the weight-gradient half; a full backward takes B + W. Terms are decimals, kept exactly as
// millionths.
struct TimeRatio {
  std::int64_t f = 0, b = 0, w = 0;
};
std::optional<TimeRatio> parse_time_ratio(std::string_view text, std::string* error);
// Keeps each stage's forward time and derives the rest from it:
// backward_input = forward * B / F, backward_weight = forward * W / F (nearest ns),
// backward = backward_input + backward_weight.
void apply_time_ratio(PipelineSpec& spec, const TimeRatio& ratio);

// One value of an axis: the scenario overrides it stands for, under a label.
struct AxisValue {
  std::string label;
  std::vector<std::pair<std::string, std::string>> sets;  // dotted scenario key -> YAML text
  std::optional<TimeRatio> time_ratio;
};

struct BenchAxis {
  std::string name;
  int line = 0;  // in the suite file, for errors
  std::vector<AxisValue> values;
};

struct BenchSuite {
  std::string file;  // the suite file as given
  std::string name;
  std::string description;
  std::string scenario;       // as written in the suite (relative to it); results record this
  std::string scenario_file;  // the path it resolves to from here; errors name this
  std::string scenario_text;
  // The base scenario parsed once (null if it does not parse: each variant then reports the
  // error from the text); variants copy it and apply their overrides.
  std::shared_ptr<const YAML::Node> scenario_root;
  std::optional<std::string> baseline_path;  // resolved against the suite's directory
  std::vector<BenchAxis> axes;
  Tolerances tolerance;

  std::size_t variant_count() const;
  SuiteIdentity identity() const;
};

// Reads the suite and its base scenario. Throws InputError ("suite.yaml:line: key: message").
BenchSuite load_suite(const std::string& file);
// The same from text, with the base scenario given as text (tests, benchmarks).
BenchSuite parse_suite(const std::string& text, const std::string& name, const std::string& scenario_text);

// `--shard I/N`: this process runs variants I, I+N, I+2N, ... (I counts from 0).
struct Shard {
  std::size_t index = 0;
  std::size_t count = 1;
};
std::optional<Shard> parse_shard(std::string_view text, std::string* error);
std::vector<std::size_t> shard_indices(std::size_t total, Shard shard);

struct BenchVariant {
  std::size_t index = 0;
  Settings settings;                   // axis name -> value label, in axis order
  std::vector<std::string> overrides;  // "key=value", applied to the base scenario in order
  std::optional<TimeRatio> time_ratio;
};

BenchVariant variant_at(const BenchSuite& suite, std::size_t index);

// The variant's scenario: base text, then `extra_sets` (the command line's --set), then the
// variant's overrides and time ratio. Throws InputError naming the suite, the axis and the variant.
PipelineSpec variant_spec(const BenchSuite& suite, const BenchVariant& variant,
                          const std::vector<std::string>& extra_sets = {});
// The same before the time ratio: what every variant with the same overrides shares.
PipelineSpec variant_scenario(const BenchSuite& suite, const BenchVariant& variant,
                              const std::vector<std::string>& extra_sets = {});

}  // namespace stepsim::cli
