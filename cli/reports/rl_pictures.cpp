#include "cli/reports/rl_pictures.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/units.hpp"

namespace stepsim::cli {

namespace {

// One legend for every rl chart, so that a page's charts and the text legend agree.
enum Swatches { kGenerate, kVerify, kLearn, kSync, kLoad, kOffload, kSend };
std::vector<Swatch> rl_legend() {
  return {{"generate (trajectory)", "#4e79a7", 'G'},
          {"verify", "#76b7b2", 'V'},
          {"learn / train", "#f28e2b", 'L'},
          {"weight sync", "#b07aa1", 'S'},
          {"load (+)", "#59a14f", '+'},
          {"offload / release (-)", "#bab0ac", '-'},
          {"send weights", "#edc948", '>'}};
}

std::string when(Time start, Time end) {
  return fmt::format("{} to {} ({})", format_duration(start), format_duration(end), format_duration(end - start));
}

TimeTrack track(std::string label) { return TimeTrack{std::move(label), {}, false, true, {}}; }

TitledTimeline loop_timeline(const RlLoopRun& l, Time axis_end, bool named) {
  const RlLoopProgram& p = *l.program;
  const Timeline& tl = l.timeline;
  TimelineChart chart;
  chart.legend = rl_legend();
  chart.end = l.stats.makespan;
  chart.emphasis_label = "interrupted and discarded";
  std::vector<TimeTrack> gen, ver, learn;
  for (std::size_t w = 0; w < p.generators.size(); ++w) gen.push_back(track(fmt::format("generator {}", w)));
  for (std::size_t w = 0; w < p.verifiers.size(); ++w) ver.push_back(track(fmt::format("verifier {}", w)));
  for (std::size_t w = 0; w < p.learners.size(); ++w) learn.push_back(track(fmt::format("learner {}", w)));
  // A trajectory is drawn as one bar per stretch generated with one policy version, as in the trace.
  for (const GenerationStretch& g : generation_stretches(l)) {
    const RlTrajectory& t = *g.trajectory;
    const Time start = tl.start[g.first_op], end = tl.end(p.graph, g.last_op);
    gen[static_cast<std::size_t>(t.generator)].bars.push_back(
        {start, end, kGenerate, fmt::format("{}", t.id),
         fmt::format("trajectory {} (batch {}), policy v{}{}{}, {}", t.id, t.batch, g.version,
                     t.interrupted ? ", interrupted" : "", t.learned ? ", learned" : ", not learned", when(start, end)),
         t.interrupted && !t.learned});
  }
  for (OpId op = 0; op < p.graph.op_count(); ++op) {
    const RlOpInfo& x = p.info[op];
    const auto w = static_cast<std::size_t>(x.worker);
    if (x.kind == RlOpKind::Verify)
      ver[w].bars.push_back(
          {tl.start[op], tl.end(p.graph, op), kVerify, fmt::format("{}", x.sample),
           fmt::format("verify trajectory {} ({}), {}", x.sample,
                       p.trajectories[static_cast<std::size_t>(x.sample)].verified_kept ? "kept" : "dropped",
                       when(tl.start[op], tl.end(p.graph, op)))});
    else if (x.kind == RlOpKind::Learn)
      learn[w].bars.push_back({tl.start[op], tl.end(p.graph, op), kLearn, fmt::format("{}", x.batch),
                               fmt::format("learn batch {}, {}", x.batch, when(tl.start[op], tl.end(p.graph, op)))});
    else if (x.kind == RlOpKind::Sync && tl.end(p.graph, op) > tl.start[op])  // a sync that takes no time is no bar
      (x.stage == 0 ? gen : learn)[w].bars.push_back(
          {tl.start[op], tl.end(p.graph, op), kSync, "",
           fmt::format("weight sync to v{}, {}", x.batch + 1, when(tl.start[op], tl.end(p.graph, op)))});
  }
  for (auto* group : {&gen, &ver, &learn})
    for (auto& t : *group) {
      sort_bars(t);
      chart.tracks.push_back(std::move(t));
    }
  const std::string title =
      fmt::format("{}loop: {} batches in {}, {}/batch in the steady state", named ? l.spec.name + ": " : "",
                  l.spec.batches, format_duration(l.stats.makespan), format_duration(l.stats.period));
  return {title, "", std::move(chart), axis_end};
}

TitledTimeline colocate_timeline(const ColocateRun& o) {
  TimelineChart chart;
  chart.legend = rl_legend();
  chart.end = o.timeline.makespan;
  TimeTrack card = track("shared card");
  for (OpId op = 0; op < o.graph.op_count(); ++op) {
    const std::string& step = o.step[op];
    const int swatch = step == "training"        ? kLearn
                       : step == "generation"    ? kGenerate
                       : step.rfind('+', 0) == 0 ? kLoad
                                                 : kOffload;
    card.bars.push_back({o.timeline.start[op], o.timeline.end(o.graph, op), swatch, "",
                         fmt::format("{}, {}", step, when(o.timeline.start[op], o.timeline.end(o.graph, op)))});
  }
  sort_bars(card);
  chart.tracks.push_back(std::move(card));
  return {fmt::format("shared card, order {}: peak {:.2f} GiB during {}{}", o.order,
                      static_cast<double>(o.peak) / (1 << 30), o.peak_step, o.fits ? "" : " (over capacity)"),
          "", std::move(chart), 0};
}

std::vector<TitledTimeline> transfer_timelines(const std::vector<TransferRun>& runs) {
  Time axis_end = 0;
  for (const auto& r : runs) axis_end = std::max(axis_end, r.timeline.makespan);
  std::vector<TitledTimeline> out;
  for (const auto& r : runs) {
    TimelineChart chart;
    chart.legend = rl_legend();
    chart.end = r.timeline.makespan;
    std::vector<TimeTrack> links;
    for (std::size_t s = 0; s < r.links.size(); ++s) links.push_back(track(fmt::format("sender {} link", s)));
    for (const auto& send : r.sends)
      links[static_cast<std::size_t>(send.sender)].bars.push_back(
          {r.timeline.start[send.op], r.timeline.end(r.graph, send.op), kSend, fmt::format("{}", send.receiver),
           fmt::format("to receiver {}: {:.3f} GiB, {}", send.receiver, static_cast<double>(send.bytes) / (1 << 30),
                       when(r.timeline.start[send.op], r.timeline.end(r.graph, send.op)))});
    for (auto& t : links) {
      sort_bars(t);
      chart.tracks.push_back(std::move(t));
    }
    out.push_back({fmt::format("weight distribution {}: {}", distribution_name(r.mode), format_duration(r.time)), "",
                   std::move(chart), axis_end});
  }
  return out;
}

}  // namespace

std::size_t rl_drawn_bars(const RlRun& run) {
  std::size_t bars = 0;
  for (const auto& l : run.loops) {
    bars += generation_stretches(l).size();
    for (OpId op = 0; op < l.program->graph.op_count(); ++op) {
      const RlOpKind k = l.program->info[op].kind;
      bars += k == RlOpKind::Verify || k == RlOpKind::Learn || k == RlOpKind::Sync;
    }
  }
  for (const auto& o : run.colocate) bars += o.graph.op_count();
  for (const auto& t : run.weight_transfer) bars += t.sends.size();
  return bars;
}

namespace {

const char* kHowToRead =
    "Loop variants: a track per worker, all variants on one time axis. A generator's bar is a stretch of one "
    "trajectory "
    "generated with one policy version (its id on the bar; a weight sync in flight cuts it); outlined: interrupted and "
    "discarded. Verifiers show one bar per trajectory, learners one per batch. Shared card: training, the switch steps "
    "(+ loads, - offloads or releases) and generation. Weight distribution: a track per sender link, one bar per "
    "receiver.";

}  // namespace

std::vector<TitledTimeline> rl_timelines(const RlRun& run) {
  std::vector<TitledTimeline> out;
  Time axis_end = 0;
  for (const auto& l : run.loops) axis_end = std::max(axis_end, l.stats.makespan);
  for (const auto& l : run.loops) out.push_back(loop_timeline(l, axis_end, run.loops.size() > 1));
  for (const auto& o : run.colocate) out.push_back(colocate_timeline(o));
  for (auto& t : transfer_timelines(run.weight_transfer)) out.push_back(std::move(t));
  return out;
}

std::string rl_html_report(const std::string& title, const std::string& description, const std::string& text_report,
                           const RlRun& run) {
  return timeline_html_report(title, description, text_report, kHowToRead, rl_timelines(run));
}

std::string rl_gantt_text(const RlRun& run, int width) {
  return timeline_gantt_text(
      rl_timelines(run), width,
      "A bar reads as its letter, its trajectory, batch or receiver if it fits, then lower case; an op "
      "shorter than a cell still takes one.");
}

}  // namespace stepsim::cli
