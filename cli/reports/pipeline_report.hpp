#pragma once
// What a pipeline run looks like to people and scripts: tables, JSON summaries, traces.
// Everything is derived from the PipelineRun (plan, program, timeline, stats); nothing re-runs.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/reports/table.hpp"
#include "cli/reports/trace_writer.hpp"
#include "schedules/lowering/pipeline/pipeline_spec.hpp"

namespace stepsim::cli {

using Json = nlohmann::ordered_json;

Json pipeline_summary_json(const PipelineRun& run, const PipelineSpec& spec);

// Whether each run fits the spec's per-device capacity (true when no capacity is set).
bool fits_capacity(const PipelineRun& run, const PipelineSpec& spec);

// The schedule's name as tables show it (with its chunk count where the scenario chooses it).
std::string pipeline_schedule_label(const PipelineRun& run);
// One line each: the run's headline (schedule, counts), its times, its messages; and the
// capacity verdict ("" without a capacity). Shared by the text and HTML reports.
std::string pipeline_run_title(const PipelineRun& run, const PipelineSpec& spec);
std::string pipeline_run_times(const PipelineRun& run);
std::string pipeline_run_messages(const PipelineRun& run);
std::string pipeline_capacity_verdict(const PipelineRun& run, const PipelineSpec& spec);
// One row per device: busy, idle, peak memory and when, peak resident micro-batches.
Table pipeline_device_table(const PipelineRun& run);
// One row per run, like the book's figure 10-24. With a capacity, runs that fit come first.
Table pipeline_compare_table(const std::vector<const PipelineRun*>& runs, const PipelineSpec& spec);
std::string pipeline_compare_title(const PipelineSpec& spec);

std::string pipeline_run_text(const PipelineRun& run, const PipelineSpec& spec);
std::string pipeline_compare_text(const std::vector<const PipelineRun*>& runs, const PipelineSpec& spec);

// Which of its device's model chunks each stage is, per device: chunks[d][stage] = 0, 1, ... in
// stage order, or -1 when device d holds one chunk only (then no label needs to say which).
// Interleaved schedules and DualPipe put several stages on a device; without the chunk, two
// slices "F mb0" on device 0 cannot be told apart.
std::vector<std::vector<int>> pipeline_chunks(const PipelineRun& run);
// " c1" for a stage in chunk 1 of `device`, "" when the device holds one chunk.
std::string chunk_suffix(const std::vector<std::vector<int>>& chunks, int device, int stage);

// The run's trace: a process per device with a compute track and one track per outgoing link,
// flow arrows from each send to its consumer, memory counters per device.
void pipeline_trace(TraceWriter& out, const PipelineRun& run);

}  // namespace stepsim::cli
