#include "cli/reports/pipeline_pictures.hpp"
#include "cli/reports/quantities.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cli/reports/html_report.hpp"
#include "cli/reports/pipeline_report.hpp"
#include "cli/reports/svg_charts.hpp"
#include "cli/reports/text_gantt.hpp"

namespace stepsim::cli {

namespace {

// Legend of the pipeline timeline, indexed by PipeOp (same order as the enum).
std::vector<Swatch> pipeline_legend() {
  return {{"forward", "#4e79a7", 'F'},
          {"backward", "#f28e2b", 'B'},
          {"input gradient", "#e15759", 'I'},
          {"weight gradient", "#59a14f", 'W'},
          {"overlapped F&B pair", "#76b7b2", 'O'},
          {"optimizer update", "#9b59b6", 'U'},
          {"forward message", "#a0cbe8", '>'},
          {"backward message", "#ffbe7d", '<'}};
}

// Memory curves: one colour per device (ColorBrewer Dark2), repeating after eight.
const char* device_colour(int d) {
  static const char* const kColours[] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a",
                                         "#66a61e", "#e6ab02", "#a6761d", "#666666"};
  return kColours[d % 8];
}

std::string describe(const PipeOpInfo& x) {
  switch (x.kind) {
    case PipeOp::Forward: return fmt::format("forward of micro-batch {}, stage {}", x.micro, x.stage);
    case PipeOp::Backward: return fmt::format("backward of micro-batch {}, stage {}", x.micro, x.stage);
    case PipeOp::BackwardInput: return fmt::format("input gradient of micro-batch {}, stage {}", x.micro, x.stage);
    case PipeOp::BackwardWeight: return fmt::format("weight gradient of micro-batch {}, stage {}", x.micro, x.stage);
    case PipeOp::Overlap:
      return fmt::format("forward of micro-batch {} (stage {}) overlapped with backward of micro-batch {} (stage {})",
                         x.micro, x.stage, x.micro2, x.stage2());
    case PipeOp::Update: return fmt::format("optimizer update of device {}", x.device);
    case PipeOp::SendForward:
      return fmt::format("activations of micro-batch {}, stage {} -> {}, device {} -> {}", x.micro, x.stage,
                         x.stage + 1, x.device, x.peer());
    case PipeOp::SendBackward:
      return fmt::format("gradients of micro-batch {}, stage {} -> {}, device {} -> {}", x.micro, x.stage, x.stage - 1,
                         x.device, x.peer());
    case PipeOp::Comm: return fmt::format("collectives of micro-batch {}, stage {}", x.micro, x.stage);
  }
  return "";
}

// The micro-batch on the bar, with its chunk where the device holds several ("0c1").
std::string bar_label(const PipeOpInfo& x, const std::vector<std::vector<int>>& chunks) {
  const auto chunk = [&](int stage) {
    const std::string c = chunk_suffix(chunks, x.device, stage);
    return c.empty() ? c : c.substr(1);
  };
  switch (x.kind) {
    case PipeOp::Update: return "";
    case PipeOp::Overlap: return fmt::format("{}{}/{}{}", x.micro, chunk(x.stage), x.micro2, chunk(x.stage2()));
    default: return fmt::format("{}{}", x.micro, chunk(x.stage));
  }
}

}  // namespace

TimelineChart pipeline_timeline(const PipelineRun& run) {
  const PipelineProgram& prog = *run.program;
  const OpGraph& g = prog.graph;
  const Timeline& tl = run.timeline;
  TimelineChart chart;
  chart.legend = pipeline_legend();
  chart.end = run.stats.step_time;
  const std::vector<std::vector<int>> chunks = pipeline_chunks(run);
  const auto track_of = [&](ResourceId r, std::string label, bool link) {
    TimeTrack t;
    t.label = std::move(label);
    t.minor = link;
    t.show_idle = !link;
    for (const Interval& iv : resource_intervals(g, tl, r)) {
      const PipeOpInfo& x = prog.info[iv.op];
      TimeBar b;
      b.start = iv.start;
      // A message is drawn from sending to arrival: its link time plus its latency.
      b.end = link ? tl.done(g, iv.op) : iv.end;
      b.swatch = static_cast<int>(x.kind);
      b.label = bar_label(x, chunks);
      const std::string c = x.kind == PipeOp::Update ? "" : chunk_suffix(chunks, x.device, x.stage);
      const std::string what =
          c.empty() ? describe(x) : fmt::format("{}, chunk {} of device {}", describe(x), c.substr(2), x.device);
      b.tip = link ? fmt::format("{}: {}\nsent {} ms, arrives {} ms (link busy {} ms)", g.op_name(iv.op), what,
                                 ms3(iv.start), ms3(b.end), ms3(iv.end - iv.start))
                   : fmt::format("{}: {}\nstart {} ms, end {} ms ({} ms)", g.op_name(iv.op), what, ms3(iv.start),
                                 ms3(iv.end), ms3(iv.end - iv.start));
      t.bars.push_back(std::move(b));
    }
    return t;
  };
  for (int d = 0; d < prog.devices; ++d) {
    chart.tracks.push_back(track_of(prog.compute[d], fmt::format("device {}", d), false));
    for (const auto& [r, ends] : prog.link_ends)
      if (ends.first == d)
        chart.tracks.push_back(track_of(r, fmt::format("d{} \u2192 d{}", ends.first, ends.second), true));
  }
  return chart;
}

CurveChart pipeline_memory_curves(const PipelineRun& run, const PipelineSpec& spec) {
  CurveChart chart;
  chart.unit = "MiB";
  chart.end = run.stats.step_time;
  std::vector<LevelCurve> computed;
  const std::vector<LevelCurve>& memory = memory_curves(run, computed);
  for (std::size_t d = 0; d < memory.size(); ++d) {
    const LevelCurve& level = memory[d];
    CurveSeries s;
    s.label = fmt::format("device {}", d);
    s.colour = device_colour(static_cast<int>(d));
    for (const auto& [t, bytes] : level.steps) s.steps.emplace_back(t, mib(bytes));
    s.peak = std::make_pair(level.peak_time, mib(level.peak));
    s.peak_label = fmt::format("peak {:.1f} MiB at {} ms", mib(level.peak), ms3(level.peak_time));
    chart.series.push_back(std::move(s));
  }
  if (spec.capacity)
    chart.lines.push_back({mib(*spec.capacity), fmt::format("capacity {:.1f} MiB", mib(*spec.capacity))});
  return chart;
}

BarChart pipeline_resident_bars(const PipelineRun& run) {
  BarChart chart;
  chart.unit = "micro-batches";
  chart.integer_values = true;
  chart.legend = {{"peak resident micro-batches", "#4e79a7"}};
  for (const auto& d : run.stats.devices) {
    BarItem item;
    // A device holding several stages (chunks) is not "a stage".
    item.label = fmt::format("{} {}", run.plan.stages > run.plan.devices ? "device" : "stage", d.id);
    item.note = std::to_string(d.peak_resident);
    item.segments.push_back(
        {static_cast<double>(d.peak_resident), 0,
         fmt::format("{}: up to {} micro-batches' activations resident at once (peak memory {:.1f} MiB)", item.label,
                     d.peak_resident, mib(d.peak_memory))});
    chart.bars.push_back(std::move(item));
  }
  return chart;
}

std::string pipeline_html_report(const std::string& title, const std::string& description,
                                 const std::vector<const PipelineRun*>& runs, const PipelineSpec& spec) {
  // Scales shared by every run, so that lengths and heights compare by eye.
  Time axis_end = 0;
  double memory_max = spec.capacity ? mib(*spec.capacity) : 0.0;
  int resident_max = 0;
  for (const PipelineRun* r : runs) {
    axis_end = std::max(axis_end, r->stats.step_time);
    for (const auto& d : r->stats.devices) {
      memory_max = std::max(memory_max, mib(d.peak_memory));
      resident_max = std::max(resident_max, d.peak_resident);
    }
  }
  const bool several = runs.size() != 1;
  // Anchors per run: the schedule's name, made unique if a schedule is listed twice.
  std::vector<std::string> anchors;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const bool repeated = std::any_of(runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(i),
                                      [&](const PipelineRun* r) { return r->schedule == runs[i]->schedule; });
    anchors.push_back(repeated ? fmt::format("{}-{}", runs[i]->schedule, i) : runs[i]->schedule);
  }

  HtmlReport page(title + " \u2014 stepsim report");
  page.heading(1, title);
  if (!description.empty()) page.paragraph(description);
  page.paragraph(several ? pipeline_compare_title(spec) : pipeline_run_title(*runs.front(), spec));
  if (runs.empty()) {
    page.paragraph("No schedule could run this scenario.");
    return page.finish();
  }
  if (several) {
    page.heading(2, "Summary", "summary");
    page.table(pipeline_compare_table(runs, spec));
  }

  const bool any_chunks = std::any_of(runs.begin(), runs.end(), [](const PipelineRun* r) {
    for (const auto& device : pipeline_chunks(*r))
      if (std::any_of(device.begin(), device.end(), [](int c) { return c >= 0; })) return true;
    return false;
  });
  page.heading(2, "Timelines", "timelines");
  page.paragraph(
      std::string("Every op of one training step: per device its compute stream and, below it, each outgoing link "
                  "(a message from sending to arrival). Numbers on the bars are micro-batches; hatched: idle. "
                  "Hover a bar for its op, micro-batch, start and end.") +
      (any_chunks ? " Where a device holds several model chunks, c0, c1, ... say which (in stage order: 3c1 is "
                    "micro-batch 3 in the device's second chunk)."
                  : "") +
      (several ? " All schedules share one time axis." : ""));
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const PipelineRun& r = *runs[i];
    page.heading(3, pipeline_schedule_label(r), "timeline-" + anchors[i]);
    page.paragraph(pipeline_run_times(r) + "; " + pipeline_run_messages(r));
    page.figure(timeline_svg(pipeline_timeline(r), fmt::format("timeline{}", i), axis_end));
  }

  page.heading(2, "Memory", "memory");
  page.paragraph(
      std::string("Bytes held per device over the step (activations of resident micro-batches and received messages "
                  "waiting for their consumer), each peak marked; and the peak number of micro-batches whose "
                  "activations are resident at once, per stage.") +
      (several ? " Scales are shared by all schedules." : ""));
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const PipelineRun& r = *runs[i];
    page.heading(3, pipeline_schedule_label(r), "memory-" + anchors[i]);
    const std::string verdict = pipeline_capacity_verdict(r, spec);
    if (!verdict.empty()) page.paragraph(verdict);
    page.figure(curve_svg(pipeline_memory_curves(r, spec), fmt::format("memory{}", i), axis_end, memory_max * 1.08));
    page.open_row();
    page.figure(bar_chart_svg(pipeline_resident_bars(r), fmt::format("resident{}", i), resident_max * 1.15));
    page.table(pipeline_device_table(r));
    page.close_row();
  }
  return page.finish();
}

std::string pipeline_gantt_text(const std::vector<const PipelineRun*>& runs, const PipelineSpec& spec, int width) {
  Time axis_end = 0;
  for (const PipelineRun* r : runs) axis_end = std::max(axis_end, r->stats.step_time);
  std::string out;
  TimelineChart all;  // every run's tracks, for one legend naming what any of them uses
  all.legend = pipeline_legend();
  for (const PipelineRun* r : runs) {
    TimelineChart chart = pipeline_timeline(*r);
    out += fmt::format("{}\n{}\n", pipeline_run_title(*r, spec), pipeline_run_times(*r));
    out += timeline_text(chart, axis_end, width) + "\n";
    for (auto& t : chart.tracks) all.tracks.push_back(std::move(t));
  }
  const std::string legend = timeline_text_legend(all);
  out += legend + "\n";
  out += "A bar reads as its letter, its micro-batch if it fits, then lower case: F3ff = forward of micro-batch 3";
  if (legend.find("O overlapped") != std::string::npos) out += "; O3/5 = forward of 3 with backward of 5";
  out += ".\n";
  return out;
}

}  // namespace stepsim::cli
