#pragma once
// Published (or a user's own) measured runs as CSV, one measurement per row with the layout that
// produced it (validation/*.csv; columns in docs/validation.md). Lines starting with '#' are comments; a
// quoted cell may span lines (schedules/pipeline/csv_records.hpp), its row's line the first.
#include <string>
#include <vector>

#include "cli/input/input.hpp"
#include "schedules/lowering/job/job_step.hpp"

namespace stepsim::cli {

enum class MeasuredMetric {
  TflopsSc21,          // SC21's count of TFLOP/s per GPU (sec. 5.1, with the recompute)
  TflopsHardware,      // hardware FLOPs (with recompute) per GPU per second
  TflopsModel,         // model FLOPs (no recompute) per GPU per second
  MfuPercent,          // model FLOPs utilization, in per cent of the BF16 (or FP8) peak
  TokensPerGpuSecond,  // training tokens per GPU per second
  IterationSeconds,
  LayerForwardMs,
  LayerBackwardMs,
  MoeForwardMs,  // an MoE layer's MoE block alone (Megatron-Core's MoELayer benchmarked by itself)
  MoeBackwardMs
};

struct MeasuredRun {
  int line = 0;
  std::string label;  // table + model + GPUs
  std::string file;   // the CSV it was read from
  std::string table;  // "Table 1", ...
  JobStepSpec spec;
  MeasuredMetric metric = MeasuredMetric::IterationSeconds;
  double value = 0;
  bool fit = false;  // used by the calibration
  std::string hw;    // accelerator preset (one calibration per accelerator)
};

// Throws InputError (file:line: column: message).
std::vector<MeasuredRun> read_measured_runs(const std::string& file);
inline constexpr std::size_t kMaxMeasuredRows = 10'000;  // per table
// The same from the file's text (`file` names it in errors).
std::vector<MeasuredRun> parse_measured_runs(const std::string& text, const std::string& file);

// The prediction of a row's metric from a simulated step (and the per-layer times).
double predicted_metric(const MeasuredRun& row, const JobStepResult& r);

// A refusal of the row's simulation (a SpecError's `key` below job_step, "layout.schedule") as the
// row's error: its file, line and the column that holds the key.
InputError row_error(const MeasuredRun& row, const std::string& key, const std::string& message);

const char* metric_unit(MeasuredMetric m);

}  // namespace stepsim::cli
