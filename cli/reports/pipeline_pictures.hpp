#pragma once
// Pictures of pipeline runs: the charts of cli/charts.hpp built from a PipelineRun (plan,
// program, timeline, stats; nothing re-runs), the HTML report of `run --html` / `compare --html`
// and the terminal Gantt chart of `run --gantt` / `compare --gantt`.
//
// What they show, after the book's figures 10-17 to 10-24: per device a compute track (F, B, I,
// W, overlapped F&B pairs and the optimizer update in distinct colours, micro-batch numbers on
// the bars, idle gaps hatched) and a track per outgoing link (each message from sending to
// arrival); the memory curve per device with its peak; the peak resident micro-batches per stage.
#include <string>
#include <vector>

#include "cli/reports/charts.hpp"
#include "schedules/lowering/pipeline/pipeline_spec.hpp"

namespace stepsim::cli {

// One bar per op of the run's graph, in op order of the tracks' resources.
TimelineChart pipeline_timeline(const PipelineRun& run);
// Memory per device in MiB, peaks marked; the spec's capacity as a reference line.
CurveChart pipeline_memory_curves(const PipelineRun& run, const PipelineSpec& spec);
BarChart pipeline_resident_bars(const PipelineRun& run);

// The self-contained HTML page for one or more runs of one scenario (the same spec under
// different schedules), every chart on scales shared by all runs.
std::string pipeline_html_report(const std::string& title, const std::string& description,
                                 const std::vector<const PipelineRun*>& runs, const PipelineSpec& spec);

// Text Gantt charts of the runs' compute tracks on one time scale, `width` columns wide.
std::string pipeline_gantt_text(const std::vector<const PipelineRun*>& runs, const PipelineSpec& spec, int width);

}  // namespace stepsim::cli
