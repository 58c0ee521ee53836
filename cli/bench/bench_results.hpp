#pragma once
// Results of a benchmark suite: one record per variant, their JSON and CSV forms, joining shard
// files, comparing against a baseline, and the "which schedule wins where" summary.
//
// The JSON holds nothing that varies between runs of the same suite (no dates, no wall times,
// no host names), so a result file is byte-identical on every machine and can be committed as
// a baseline. One result per line keeps a baseline's git diff readable.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/time.hpp"

namespace stepsim::cli {

using Settings = std::vector<std::pair<std::string, std::string>>;  // axis name -> value label

// "schedule=1f1b stages=4": how a variant is named in lists and matched against a baseline.
std::string settings_key(const Settings& settings);

enum class VariantStatus { Ok, Skipped, Failed };
const char* status_name(VariantStatus s);

struct VariantResult {
  std::size_t index = 0;
  Settings settings;
  VariantStatus status = VariantStatus::Ok;
  std::string reason;  // skipped / failed: why
  // Ok only:
  Time step_time = 0;
  double bubble_fraction = 0;
  std::vector<Bytes> peak_memory;  // per device
  std::vector<int> peak_resident;  // per device: micro-batches held at once
  int forward_messages = 0, backward_messages = 0;

  std::string key() const { return settings_key(settings); }
  Bytes max_peak_memory() const;
};

// How far a metric may get worse before it counts as a regression: `absolute` (in the metric's
// unit: ns, bytes, fraction, messages) plus `relative` x the baseline value. Default 0: the
// simulator is deterministic, so any change is real.
struct Tolerance {
  std::string text = "0";  // as written in the suite
  double absolute = 0;
  double relative = 0;
  double allowed(double baseline) const;
};

enum class Metric { StepTime, BubbleFraction, PeakMemory, Messages };
// "0", "2%" (of the baseline), or an absolute amount: a duration for step_time ("1us"), a size
// for peak_memory ("1MiB"), a number for bubble_fraction ("0.001") and messages ("2").
std::optional<Tolerance> parse_tolerance(Metric metric, const std::string& text, std::string* error);

struct Tolerances {
  Tolerance step_time, bubble_fraction, peak_memory, messages;
};

// What identifies a suite's variant list; shards must agree on it to be merged.
struct SuiteIdentity {
  std::string name;
  std::string scenario;
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;  // name -> value labels
  std::size_t variants = 0;
  Tolerances tolerance;
};

struct BenchResults {
  SuiteIdentity suite;
  std::string shard = "all";           // "I/N" for a shard's file, "all" for a whole run or a full merge
  std::vector<VariantResult> results;  // by variant index
};

using OrderedJson = nlohmann::ordered_json;

// Throws InputError naming `file` and the key at fault.
BenchResults results_from_json(const std::string& text, const std::string& file);

// Joins shard files of one suite. Throws InputError if they come from different suites or
// overlap. A merge that covers every variant is marked "all", like a single run.
BenchResults merge_results(const std::vector<BenchResults>& parts, const std::vector<std::string>& files);

struct Comparison {
  std::vector<std::string> regressions;   // worse past tolerance, or no longer runs
  std::vector<std::string> improvements;  // better past tolerance
  std::vector<std::string> notes;         // variants only on one side
  std::size_t compared = 0;
};
// Compares `current` against `baseline` variant by variant (matched by settings), with the
// current suite's tolerances.
Comparison compare_results(const BenchResults& baseline, const BenchResults& current, const Tolerances& tol);
std::string comparison_text(const Comparison& c, const std::string& baseline_file);

// Which schedule wins where: the variants grouped by every axis except `schedule_axis`; per
// group the fastest schedule (ties: lower peak memory, then axis order) and the one with the
// lowest peak memory. Empty when the suite has no such axis.
struct Win {
  Settings setting;  // the other axes
  std::string fastest, runner_up, lowest_memory;
  Time fastest_step = 0, runner_up_step = 0;
  Bytes lowest_peak = 0;
};
std::vector<Win> schedule_wins(const BenchResults& results, const std::string& schedule_axis = "schedule");
std::string wins_text(const std::vector<Win>& wins);

// One variant's line of the result file and row of the CSV. `stepsim bench` makes them on the
// worker that ran the variant, while the others still run.
struct ResultRows {
  std::string json, csv;
};
ResultRows result_rows(const VariantResult& r);
std::vector<ResultRows> result_rows(const BenchResults& results);  // per variant, in order

// The result file's text and the CSV from each variant's rows (rows[i] for results.results[i]);
// the file ends with the winners, `wins` (schedule_wins of the same results).
std::string results_json_text(const BenchResults& results, std::span<const ResultRows> rows,
                              const std::vector<Win>& wins);
std::string results_csv(const BenchResults& results, std::span<const ResultRows> rows);
// The same, with the rows and winners made here.
std::string results_json_text(const BenchResults& results);
std::string results_csv(const BenchResults& results);

}  // namespace stepsim::cli
