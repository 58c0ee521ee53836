#include "cli/reports/job_step_pictures.hpp"
#include "cli/reports/quantities.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "cli/reports/html_report.hpp"
#include "cli/reports/job_step_report.hpp"
#include "cli/reports/svg_charts.hpp"
#include "cli/reports/text_gantt.hpp"
#include "cli/reports/timeline_pages.hpp"

namespace stepsim::cli {

namespace {

// Swatches of the timeline, in legend order.
enum JobSwatch { Fwd, Bwd, WGrad, Pair, Opt, Tp, Cp, Ep, Pp, Dp, Input, Other };
std::vector<Swatch> job_legend() {
  return {{"forward", "#4e79a7", 'F'},         {"backward", "#f28e2b", 'B'},
          {"weight gradient", "#59a14f", 'W'}, {"overlapped F&B pair", "#76b7b2", 'O'},
          {"optimizer", "#9b59b6", 'U'},       {"TP collective", "#e15759", 'T'},
          {"CP ring (K/V)", "#ff9da7", 'C'},   {"EP all-to-all", "#b07aa1", 'E'},
          {"PP send", "#a0cbe8", '>'},         {"DP/ZeRO collective", "#edc948", 'D'},
          {"input wait", "#bab0ac", 'N'},      {"other", "#79706e", '?'}};
}

int swatch_of(JobOpKind k) {
  switch (k) {
    case JobOpKind::Forward: return Fwd;
    case JobOpKind::Backward: return Bwd;
    case JobOpKind::BackwardWeight: return WGrad;
    case JobOpKind::InPassComm: return Tp;
    case JobOpKind::PpSend: return Pp;
    case JobOpKind::DpComm: return Dp;
    case JobOpKind::Optimizer: return Opt;
    case JobOpKind::Input: return Input;
    case JobOpKind::Other: return Other;
  }
  return Other;
}

TimeBar bar_of(const JobStepRun& run, OpId op, Time start, Time end, int swatch) {
  const OpGraph& g = run.graph();
  TimeBar b;
  b.start = start;
  b.end = end;
  b.swatch = swatch;
  const bool pipe = run.pipeline && op < run.pipeline->info.size();
  if (pipe && run.pipeline->info[op].kind != PipeOp::Update) b.label = std::to_string(run.pipeline->info[op].micro);
  if (run.fsdp && op < run.fsdp->info.size() && run.fsdp->info[op].micro >= 0)
    b.label = std::to_string(run.fsdp->info[op].micro);
  b.tip = fmt::format("{}: {}\nstart {} ms, end {} ms ({} ms)", g.op_name(op), job_legend()[swatch].label, ms3(start),
                      ms3(end), ms3(end - start));
  return b;
}

// The TP, CP and EP seconds of the pass an in-pass collective op follows (the op before it on
// the device, its compute op: lower() adds the collective right after it).
std::array<double, 3> comm_parts(const JobStepRun& run, OpId op) {
  const auto& info = run.pipeline->info;
  const auto& chunks = run.comm.chunks;
  std::array<double, 3> p{0, 0, 0};
  if (op == 0) return p;
  const PipeOpInfo& c = info[op - 1];
  const auto add = [&](const PassSeconds& s) {
    p[0] += s.tp;
    p[1] += s.cp;
    p[2] += s.ep;
  };
  const auto chunk = [&](int stage) -> const ChunkCost& { return chunks[static_cast<std::size_t>(stage)]; };
  switch (c.kind) {
    case PipeOp::Forward: add(chunk(c.stage).forward); break;
    case PipeOp::Backward:
    case PipeOp::BackwardInput: add(chunk(c.stage).backward_input); break;
    case PipeOp::Overlap:
      add(chunk(c.stage).forward);
      add(chunk(c.stage2()).backward_input);
      break;
    default: break;
  }
  return p;
}

// An in-pass collective drawn as its TP, CP and EP parts, one bar each, in proportion.
void add_comm_bars(const JobStepRun& run, const Interval& iv, TimeTrack& t) {
  const std::array<double, 3> p = comm_parts(run, iv.op);
  const double sum = p[0] + p[1] + p[2];
  if (sum <= 0) {
    t.bars.push_back(bar_of(run, iv.op, iv.start, iv.end, Tp));
    return;
  }
  const int last = p[2] > 0 ? 2 : p[1] > 0 ? 1 : 0;
  Time at = iv.start;
  for (int k = 0; k <= last; ++k) {
    if (p[static_cast<std::size_t>(k)] <= 0) continue;
    const Time len = static_cast<Time>(static_cast<double>(iv.end - iv.start) * p[static_cast<std::size_t>(k)] / sum);
    const Time end = k == last ? iv.end : at + len;
    t.bars.push_back(bar_of(run, iv.op, at, end, Tp + k));
    at = end;
  }
}

TimeTrack track_of(const JobStepRun& run, ResourceId r, std::string label, bool is_major) {
  const OpGraph& g = run.graph();
  const Timeline& tl = run.timeline;
  TimeTrack t;
  t.label = std::move(label);
  t.minor = !is_major;
  t.show_idle = is_major;
  const bool link = g.resource(r).name.rfind("link ", 0) == 0;
  for (const Interval& iv : resource_intervals(g, tl, r)) {
    if (iv.end == iv.start) continue;
    const JobOpKind k = run.kinds[iv.op];
    if (k == JobOpKind::InPassComm && run.pipeline) {
      add_comm_bars(run, iv, t);
      continue;
    }
    int sw = swatch_of(k);
    if (run.pipeline && iv.op < run.pipeline->info.size() && run.pipeline->info[iv.op].kind == PipeOp::Overlap)
      sw = Pair;
    // A message is drawn from sending to arrival, as the pipeline timeline draws it.
    t.bars.push_back(bar_of(run, iv.op, iv.start, link ? tl.done(g, iv.op) : iv.end, sw));
  }
  return t;
}

bool has_work(const OpGraph& g, const Timeline& tl, ResourceId r) {
  for (const Interval& iv : resource_intervals(g, tl, r))
    if (iv.end > iv.start) return true;
  return false;
}

// The pipeline path's resources grouped by device: compute, collectives, DP stream, links out.
std::vector<std::pair<ResourceId, std::string>> pipeline_tracks(const JobStepRun& run) {
  const PipelineProgram& prog = *run.pipeline;
  const OpGraph& g = prog.graph;
  std::vector<std::pair<ResourceId, std::string>> out;
  std::vector<bool> used(g.resource_count(), false);
  const auto put = [&](ResourceId r, std::string label) {
    used[r] = true;
    out.emplace_back(r, std::move(label));
  };
  for (int d = 0; d < prog.devices; ++d) {
    put(prog.compute[static_cast<std::size_t>(d)], fmt::format("device {}", d));
    if (!prog.comm.empty()) put(prog.comm[static_cast<std::size_t>(d)], fmt::format("d{} TP/CP/EP", d));
    for (ResourceId r = 0; r < g.resource_count(); ++r)
      if (g.resource(r).name == fmt::format("d{} dp", d)) put(r, fmt::format("d{} DP/ZeRO", d));
    for (const auto& [r, ends] : prog.link_ends)
      if (ends.first == d) put(r, fmt::format("d{} \u2192 d{}", ends.first, ends.second));
  }
  for (ResourceId r = 0; r < g.resource_count(); ++r)
    if (!used[r]) out.emplace_back(r, g.resource(r).name);
  return out;
}

}  // namespace

TimelineChart job_step_timeline(const JobStepRun& run) {
  const OpGraph& g = run.graph();
  TimelineChart chart;
  chart.legend = job_legend();
  chart.end = run.timeline.makespan;
  std::vector<std::pair<ResourceId, std::string>> tracks;
  if (run.pipeline) {
    tracks = pipeline_tracks(run);
  } else {
    for (ResourceId r = 0; r < g.resource_count(); ++r) tracks.emplace_back(r, g.resource(r).name);
  }
  for (const auto& [r, label] : tracks) {
    if (!has_work(g, run.timeline, r)) continue;
    const bool is_major = g.resource(r).name.find("compute") != std::string::npos;
    chart.tracks.push_back(track_of(run, r, label, is_major));
  }
  // The ZeRO-3 path's optimizer runs after the graph (run_job_step): drawn at the step's end.
  const Time tail = run.result.step_time - run.timeline.makespan;
  if (run.fsdp && tail > 0 && !chart.tracks.empty()) {
    TimeBar b;
    b.start = run.timeline.makespan;
    b.end = run.result.step_time;
    b.swatch = Opt;
    b.tip = fmt::format("optimizer step of the card's shard\nstart {} ms, end {} ms ({} ms)", ms3(b.start), ms3(b.end),
                        ms3(tail));
    chart.tracks.front().bars.push_back(std::move(b));
    chart.end = run.result.step_time;
  }
  return chart;
}

BarChart job_step_memory_chart(const JobStepRun& run) {
  const JobStepResult& r = run.result;
  const double gib = 1024.0 * 1024 * 1024;
  const auto of = [&](Bytes b) { return static_cast<double>(b) / gib; };
  BarChart chart;
  chart.unit = "memory per GPU (GiB)";
  chart.legend = {{"weights", "#4e79a7"},
                  {"gradients", "#f28e2b"},
                  {"optimizer state", "#e15759"},
                  {"activations (peak)", "#59a14f"},
                  {"buffers", "#edc948"}};
  chart.emphasis_label = "over the usable memory";
  chart.lines.push_back({of(r.capacity), fmt::format("usable {:.2f} GiB", of(r.capacity))});
  BarItem item;
  item.label = "most loaded GPU";
  item.emphasis = r.memory.total() > r.capacity;
  item.note = fmt::format("{:.2f} GiB{}", of(r.memory.total()), item.emphasis ? ": does not fit" : "");
  const Bytes parts[] = {r.memory.weights, r.memory.gradients, r.memory.optimizer, r.memory.activations,
                         r.memory.buffers};
  for (int k = 0; k < 5; ++k) {
    if (parts[k] <= 0) continue;
    item.segments.push_back({of(parts[k]), k,
                             fmt::format("{}: {:.2f} GiB of {:.2f} GiB ({:.2f} usable)", chart.legend[k].label,
                                         of(parts[k]), of(r.memory.total()), of(r.capacity))});
  }
  chart.bars.push_back(std::move(item));
  return chart;
}

namespace {

const char* kHowToRead =
    "Per simulated device its compute stream (hatched: idle, the bubble), then its in-pass TP/CP/EP collectives, "
    "its DP/ZeRO stream and its outgoing pipeline links (a message from sending to arrival). Numbers on the bars "
    "are micro-batches. Hover a bar for its op, start and end.";

void timeline_section(HtmlReport& page, const JobStepRun& run) {
  const TimelineChart chart = job_step_timeline(run);
  std::size_t bars = 0;
  for (const auto& t : chart.tracks) bars += t.bars.size();
  page.heading(2, "Timeline", "timeline");
  page.paragraph(fmt::format("{} {} bars on {} tracks.", kHowToRead, bars, chart.tracks.size()));
  page.figure(timeline_svg(chart, "timeline-full", chart.end));
  // The ends of the step, where the bubble and the DP collectives are, wide enough to read.
  const Time tenth = std::max<Time>(1, chart.end / 10);
  page.heading(3, "The first and the last tenth of the step", "timeline-ends");
  page.figure(timeline_svg(chart, "zoom-first", TimeWindow{0, tenth}), "the fill: the first tenth of the step");
  page.figure(timeline_svg(chart, "zoom-last", TimeWindow{chart.end - tenth, chart.end}),
              "the drain, the DP/ZeRO collectives and the optimizer: the last tenth");
}

}  // namespace

std::string job_step_html_report(const std::string& title, const std::string& description, const JobStepRun& run,
                                 const std::vector<std::pair<std::string, const JobStepRun*>>& variants) {
  const JobStepResult& r = run.result;
  HtmlReport page(title + " \u2014 stepsim report");
  page.heading(1, title);
  if (!description.empty()) page.paragraph(description);
  const std::string head = job_step_heading(title, run);
  for (std::size_t at = head.find('\n') + 1; at < head.size();) {  // the lines after the name
    const std::size_t nl = head.find('\n', at);
    page.paragraph(head.substr(at, nl - at));
    at = nl + 1;
  }
  page.heading(2, "Summary", "summary");
  page.table(job_step_summary_table(run, false));
  if (!variants.empty()) {
    page.heading(2, "Variants", "variants");
    page.paragraph("The scenario's variants beside the base (stepsim compare); the sections below are the base's.");
    page.table(job_step_compare_table(variants));
    page.paragraph("What limits each: its critical path through the executed op graph, as shares per kind of op.");
    page.table(job_step_limits_table(variants));
  }
  timeline_section(page, run);
  page.heading(2, "Memory per GPU", "memory");
  page.open_row();
  page.figure(bar_chart_svg(job_step_memory_chart(run), "memory-bars", 0, 0),
              "The most loaded GPU's memory at its peak, stacked by what holds it; the dashed line is the usable "
              "memory.");
  page.table(job_step_memory_table(run));
  page.close_row();
  if (run.spec.layout.pp > 1) {
    page.paragraph(
        "Every pipeline rank's memory at its own peak (GiB): the ends hold the embedding and the LM head's "
        "logits, the first ranks the most activations in flight under 1F1B.");
    page.table(job_step_rank_memory_table(run));
  }
  if (const std::string host = job_step_host_line(run); !host.empty()) page.paragraph(host.substr(0, host.size() - 1));
  page.heading(2, "Exposed communication", "exposed");
  page.paragraph("Communication on the critical path, by kind: what overlapping it with compute would save.");
  page.table(job_step_exposed_table(run));
  page.heading(2, "What limits the step", "critical");
  page.paragraph("The critical path through the executed op graph, summed per kind of op and per resource.");
  page.open_row();
  page.table(job_step_critical_table(r.critical_by_kind));
  page.table(job_step_critical_table(r.critical_by_resource));
  page.close_row();
  page.heading(2, "One layer by kind of kernel", "layer");
  page.paragraph(
      "One decoder layer's forward and backward on one GPU for one micro-batch (ms): GEMMs, the attention core "
      "(a recurrent mixer's scan with it), memory-bound kernels, and what each pass waits on; the backward "
      "holds the input and weight gradients and any recompute.");
  page.table(job_step_layer_table(run.spec.model, r));
  if (run.spec.layout.cp > 1) {
    page.heading(2, "Context parallelism: causal pairs per rank", "context-parallel");
    page.table(job_step_cp_table(run));
  }
  if (run.spec.reshard_tp > 0) {
    page.heading(2, "Resharding the checkpoint", "reshard");
    page.table(job_step_reshard_table(run));
  }
  return page.finish();
}

std::string job_step_gantt_text(const std::string& name, const JobStepRun& run, int width) {
  TitledTimeline t;
  t.title = job_step_heading(name, run);
  t.chart = job_step_timeline(run);
  t.axis_end = t.chart.end;
  return timeline_gantt_text({t}, width,
                             "A bar reads as its letter, its micro-batch if it fits, then lower case: F3ff = forward "
                             "of micro-batch 3; rows below a device are its collectives, DP stream and links.");
}

}  // namespace stepsim::cli
