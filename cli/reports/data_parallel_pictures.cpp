#include "cli/reports/data_parallel_pictures.hpp"
#include "cli/reports/quantities.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "cli/reports/data_parallel_report.hpp"
#include "cli/reports/html_report.hpp"
#include "cli/reports/svg_charts.hpp"
#include "cli/reports/text_gantt.hpp"
#include "schedules/lowering/data_parallel/data_parallel.hpp"

namespace stepsim::cli {

namespace {

// Legend of the data-parallel timeline, indexed by DpSwatch.
enum DpSwatch : int {
  kInput,
  kForward,
  kBackward,
  kBackwardInput,
  kBackwardWeight,
  kGather,
  kReduceScatter,
  kAllReduce,
  kExposed
};

std::vector<Swatch> dp_legend() {
  return {{"input wait", "#bab0ac", '<'},
          {"forward", "#4e79a7", 'F'},
          {"backward", "#f28e2b", 'B'},
          {"input gradient (dX)", "#9c755f", 'I'},
          {"weight gradient (dW)", "#59a14f", 'W'},
          {"AllGather", "#76b7b2", 'G'},
          {"ReduceScatter", "#edc948", 'R'},
          {"AllReduce", "#b07aa1", 'A'},
          {"exposed communication: compute waits", "#ff9896", '!'}};
}

int swatch_of(DpOp kind) {
  switch (kind) {
    case DpOp::Input: return kInput;
    case DpOp::Forward: return kForward;
    case DpOp::Backward: return kBackward;
    case DpOp::BackwardInput: return kBackwardInput;
    case DpOp::BackwardWeight: return kBackwardWeight;
    case DpOp::Gather: return kGather;
    case DpOp::ReduceScatter: return kReduceScatter;
    case DpOp::AllReduce: return kAllReduce;
    case DpOp::Join: break;
  }
  return kInput;
}

std::string unit_name(const DataParallelRun& run, int unit) { return unit >= 0 ? run.plan.units[unit].name : ""; }

// What an op is, in words.
std::string describe(const DataParallelRun& run, const DpOpInfo& x) {
  const std::string unit = unit_name(run, x.unit);
  switch (x.kind) {
    case DpOp::Input: return "waiting for the step's input";
    case DpOp::Forward: return fmt::format("forward of {}, micro-batch {}", unit, x.micro);
    case DpOp::Backward: return fmt::format("backward of {}, micro-batch {}", unit, x.micro);
    case DpOp::BackwardInput: return fmt::format("input gradient (dX) of {}, micro-batch {}", unit, x.micro);
    case DpOp::BackwardWeight: return fmt::format("weight gradient (dW) of {}, micro-batch {}", unit, x.micro);
    case DpOp::Gather:
      return fmt::format("AllGather of {}'s weights for the {}, micro-batch {}", unit,
                         x.for_backward ? "backward" : "forward", x.micro);
    case DpOp::ReduceScatter: return fmt::format("ReduceScatter of {}'s gradient, micro-batch {}", unit, x.micro);
    case DpOp::AllReduce: {
      std::string units;
      const int bucket = run.program->bucket_of(x);
      for (int u : run.plan.buckets[static_cast<std::size_t>(bucket)].units)
        units += (units.empty() ? "" : ", ") + unit_name(run, u);
      return fmt::format("AllReduce of gradient bucket {} ({})", bucket, units);
    }
    case DpOp::Join: return "join";
  }
  return "";
}

std::string bar_label(const DataParallelRun& run, const DpOpInfo& x) {
  switch (x.kind) {
    case DpOp::Input: return "input";
    case DpOp::AllReduce: return fmt::format("bucket {}", run.program->bucket_of(x));
    default: return unit_name(run, x.unit);
  }
}

// The resource a simulated rank's collectives run on, or kNoResource without collectives.
ResourceId link_of(const DataParallelRun& run, std::size_t rank) {
  const DataParallelProgram& p = *run.program;
  return run.plan.link == LinkKind::HostNic ? p.nic[p.card_host[rank]] : p.lane[rank];
}

std::string link_label(const DataParallelRun& run, std::size_t rank) {
  const DataParallelProgram& p = *run.program;
  if (run.plan.link == LinkKind::HostNic) return fmt::format("host {} NIC", p.hosts[p.card_host[rank]]);
  return std::string(link_kind_name(run.plan.link));
}

// An anchor from a name: letters, digits and '-' only.
std::string slug(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return out;
}

// " in 3 intervals" after an exposed time; nothing for none.
std::string intervals(std::size_t n) { return n == 0 ? "" : fmt::format(" in {} interval{}", n, n == 1 ? "" : "s"); }

struct Zoom {
  Time span = 0;  // 0: no zoomed views
};

// Zoomed views when some run's cards have too many compute ops to see at full scale: the first
// and the last 1% of the longest step, rounded up to 1, 2 or 5 times a power of ten (1 s for
// the design case's 52.8 s). That is where a step's exposed communication sits: the first
// gathers after the input wait, and the reductions after the last backward.
Zoom zoom_for(const std::vector<DataParallelReportRun>& runs, Time axis_end) {
  bool dense = false;
  for (const auto& r : runs) {
    const auto& p = *r.run->program;
    std::size_t ops = 0;
    for (OpId op = p.graph.first_on(p.compute.front()); op != kNoOp; op = p.graph.next_on_resource(op)) ++ops;
    dense = dense || ops > kZoomComputeOps;
  }
  if (!dense) return {};
  const double ms = nice_step(to_ms(axis_end) / 100.0, 1);
  return {static_cast<Time>(ms * static_cast<double>(kMillisecond) + 0.5)};
}

}  // namespace

std::vector<ExposedInterval> exposed_intervals(const DataParallelRun& run, std::size_t rank) {
  const DataParallelProgram& p = *run.program;
  const OpGraph& g = p.graph;
  const Timeline& tl = run.timeline;
  const ResourceId compute = p.compute[rank];
  const ResourceId link = link_of(run, rank);
  const DataParallelRankStats& stats = run.result.ranks[rank];

  // For each compute op, the collective it waits for last (the latest done among its
  // collective predecessors).
  std::map<OpId, OpId> blocker;
  if (link != kNoResource) {
    for (OpId op = g.first_on(link); op != kNoOp; op = g.next_on_resource(op))
      g.for_each_successor(op, [&](OpId next) {
        if (g.op_resource(next) != compute) return;
        const auto it = blocker.find(next);
        if (it == blocker.end() || tl.done(g, it->second) < tl.done(g, op)) blocker[next] = op;
      });
  }

  std::vector<ExposedInterval> out;
  Time cursor = run.plan.input_wait;
  for (const Interval& iv : resource_intervals(g, tl, compute)) {
    if (iv.start > cursor) {
      const auto it = blocker.find(iv.op);
      out.push_back({cursor, iv.start, it != blocker.end() ? it->second : kNoOp});
    }
    cursor = std::max(cursor, iv.end);
  }
  if (stats.end > cursor) out.push_back({cursor, stats.end, kNoOp});
  return out;
}

ShownRanks data_parallel_shown_ranks(const DataParallelRun& run) {
  const auto& ranks = run.result.ranks;
  ShownRanks shown;
  if (ranks.size() <= kShownRanks) {
    for (std::size_t i = 0; i < ranks.size(); ++i) shown.ranks.push_back(i);
    if (run.result.folded)
      shown.note = fmt::format("Card 0 stands for all {} cards: no rank differs, so every rank's timeline is the same.",
                               run.result.cards);
    else if (ranks.size() > 1)
      shown.note = fmt::format("All {} cards are shown.", ranks.size());
    return shown;
  }
  // Ties go to the lower card.
  const auto slowest = std::max_element(ranks.begin(), ranks.end(),
                                        [](const auto& a, const auto& b) { return a.compute_busy < b.compute_busy; });
  const auto most_exposed =
      std::max_element(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.exposed < b.exposed; });
  const std::size_t s = static_cast<std::size_t>(slowest - ranks.begin());
  const std::size_t e = static_cast<std::size_t>(most_exposed - ranks.begin());
  shown.ranks = {0, 1, 2, 3};
  for (std::size_t extra : {s, e})
    if (std::find(shown.ranks.begin(), shown.ranks.end(), extra) == shown.ranks.end()) shown.ranks.push_back(extra);
  std::sort(shown.ranks.begin(), shown.ranks.end());
  const auto who = [&](std::size_t i) {
    return i < 4 ? fmt::format("card {}, one of the first four", ranks[i].card) : fmt::format("card {}", ranks[i].card);
  };
  shown.note = fmt::format(
      "{} cards simulated (they differ); shown: cards {} to {} (the first four), the slowest ({}: {:.3f} s of compute) "
      "and "
      "the one with the most exposed communication ({}: {:.3f} s).",
      ranks.size(), ranks[0].card, ranks[3].card, who(s), to_s(slowest->compute_busy), who(e),
      to_s(most_exposed->exposed));
  return shown;
}

namespace {

// A compute stream's exposed-communication interval as a wait bar, with what it waits for.
TimeBar exposed_wait(const DataParallelRun& run, std::size_t rank, const ExposedInterval& e) {
  const DataParallelProgram& p = *run.program;
  const OpGraph& g = p.graph;
  TimeBar w;
  w.start = e.start;
  w.end = e.end;
  w.swatch = kExposed;
  // Its own fill says what it is; the red outline is kept for the collectives in flight, so
  // that no red edge sits on a red-ish fill.
  w.emphasis = false;
  const std::string cause =
      e.waits_for != kNoOp
          ? fmt::format("waits for {}: {} (ends {} ms)", g.op_name(e.waits_for), describe(run, p.info[e.waits_for]),
                        ms3(run.timeline.done(g, e.waits_for)))
          : fmt::format(
                "its last compute op is done; waits for the collectives still running on the {} (the last ends {} ms)",
                link_label(run, rank), ms3(e.end));
  w.tip = fmt::format("card {}: exposed communication {} ms, from {} to {} ms\n{}", p.cards[rank], ms3(e.end - e.start),
                      ms3(e.start), ms3(e.end), cause);
  return w;
}

}  // namespace

TimelineChart data_parallel_timeline(const DataParallelRun& run) {
  const DataParallelProgram& p = *run.program;
  const OpGraph& g = p.graph;
  const Timeline& tl = run.timeline;
  TimelineChart chart;
  chart.legend = dp_legend();
  chart.end = run.result.step_time;
  chart.emphasis_label = "communication in flight while the compute waits";
  const ShownRanks shown = data_parallel_shown_ranks(run);

  // Exposed intervals of the shown ranks, and per resource the intervals of the ranks it serves.
  std::map<std::size_t, std::vector<ExposedInterval>> exposed;
  std::map<ResourceId, std::vector<ExposedInterval>> exposed_on;
  for (std::size_t rank : shown.ranks) {
    exposed[rank] = exposed_intervals(run, rank);
    if (const ResourceId link = link_of(run, rank); link != kNoResource) {
      auto& list = exposed_on[link];
      list.insert(list.end(), exposed[rank].begin(), exposed[rank].end());
    }
  }
  // Each list by start, with its longest interval: a bar meets only those that start within that
  // much before it (a scan of them all per bar grew with the square of the micro-batches).
  std::map<ResourceId, Time> longest_on;
  for (auto& [res, list] : exposed_on) {
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
    Time longest = 0;
    for (const auto& e : list) longest = std::max(longest, e.end - e.start);
    longest_on[res] = longest;
  }

  const auto track_of = [&](ResourceId r, std::string label, bool minor) {
    TimeTrack t;
    t.label = std::move(label);
    t.minor = minor;
    t.show_idle = !minor;
    const auto it = exposed_on.find(r);
    for (const Interval& iv : resource_intervals(g, tl, r)) {
      const DpOpInfo& x = p.info[iv.op];
      TimeBar b;
      b.start = iv.start;
      b.end = tl.done(g, iv.op);
      b.swatch = swatch_of(x.kind);
      b.label = bar_label(run, x);
      b.tip = fmt::format("{}: {}\nstart {} ms, end {} ms ({} ms)", g.op_name(iv.op), describe(run, x), ms3(b.start),
                          ms3(b.end), ms3(b.end - b.start));
      if (it != exposed_on.end()) {
        Time waited = 0;
        const auto& list = it->second;
        const Time from = b.start - longest_on.at(r);
        auto e = std::lower_bound(list.begin(), list.end(), from,
                                  [](const ExposedInterval& interval, Time at) { return interval.start < at; });
        for (; e != list.end() && e->start < b.end; ++e)
          waited += std::max<Time>(0, std::min(e->end, b.end) - std::max(e->start, b.start));
        if (waited > 0) {
          b.emphasis = true;
          b.tip +=
              fmt::format("\nin flight during {} ms of exposed communication (the compute stream waits)", ms3(waited));
        }
      }
      t.bars.push_back(std::move(b));
    }
    return t;
  };

  std::vector<ResourceId> nic_drawn;
  for (std::size_t rank : shown.ranks) {
    const int card = p.cards[rank];
    TimeTrack compute = track_of(p.compute[rank], fmt::format("card {}", card), false);
    const ResourceId link = link_of(run, rank);
    for (const auto& e : exposed[rank]) compute.waits.push_back(exposed_wait(run, rank, e));
    chart.tracks.push_back(std::move(compute));
    if (p.input[rank] != kNoResource) chart.tracks.push_back(track_of(p.input[rank], "input", true));
    if (link != kNoResource && std::find(nic_drawn.begin(), nic_drawn.end(), link) == nic_drawn.end()) {
      chart.tracks.push_back(track_of(link, link_label(run, rank), true));
      if (run.plan.link == LinkKind::HostNic) nic_drawn.push_back(link);
    }
  }
  return chart;
}

namespace {
// Whether two runs put the same ops at the same times (the same picture).
bool same_timeline(const DataParallelRun& a, const DataParallelRun& b) {
  const OpGraph& ga = a.program->graph;
  const OpGraph& gb = b.program->graph;
  if (ga.op_count() != gb.op_count() || a.timeline.start != b.timeline.start) return false;
  for (OpId op = 0; op < ga.op_count(); ++op)
    if (ga.op_duration(op) != gb.op_duration(op) || ga.op_name(op) != gb.op_name(op) ||
        ga.op_resource(op) != gb.op_resource(op))
      return false;
  return true;
}

// One run's part of the timelines section: its step split per shown card, its timeline and the
// zoomed ends; a run that repeats an earlier one's timeline is named instead of drawn again.
void run_timeline_section(HtmlReport& page, const std::vector<DataParallelReportRun>& runs, std::size_t i,
                          const std::string& anchor, bool compare, bool seconds, const Zoom& zoom, Time axis_end) {
  const DataParallelRun& run = *runs[i].run;
  const DataParallelResult& r = run.result;
  page.heading(3, runs[i].name, "timeline-" + anchor);
  const auto lines = data_parallel_run_lines(run, *runs[i].spec);
  if (compare) page.paragraph(lines.front());
  // A variant that only restates the base (dp-buckets' three-buckets) would draw the same rows
  // twice: say so instead.
  if (const auto same = std::find_if(runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(i),
                                     [&](const DataParallelReportRun& e) { return same_timeline(*e.run, run); });
      same != runs.begin() + static_cast<std::ptrdiff_t>(i)) {
    page.paragraph(
        fmt::format("The same step as {}: every op starts and ends at the same time, so its timeline is not "
                    "drawn again.",
                    same->name));
    return;
  }
  const ShownRanks shown = data_parallel_shown_ranks(run);
  if (!shown.note.empty()) page.paragraph(shown.note);
  for (std::size_t rank : shown.ranks) {
    const auto exposed = exposed_intervals(run, rank);
    Time sum = 0;
    for (const auto& e : exposed) sum += e.end - e.start;
    page.paragraph(fmt::format("card {}: step {} = input wait {} + compute {} + exposed communication {}{}",
                               r.ranks[rank].card, seconds_or_ms(r.step_time, seconds),
                               seconds_or_ms(r.input_wait, seconds), seconds_or_ms(r.ranks[rank].compute_busy, seconds),
                               seconds_or_ms(sum, seconds), intervals(exposed.size())));
  }
  const TimelineChart chart = data_parallel_timeline(run);
  SvgLayout full;
  full.sliver_tips = zoom.span == 0;  // with zoomed views, hover the narrow ops there
  page.figure(timeline_svg(chart, fmt::format("timeline{}", i), axis_end, full));
  if (zoom.span > 0) {
    const TimeWindow first{0, zoom.span};
    const TimeWindow last{std::max<Time>(0, r.step_time - zoom.span), r.step_time};
    page.figure(
        timeline_svg(chart, fmt::format("zoom{}-first", i), first),
        fmt::format("{}: the first {} of the step", runs[i].name, seconds_or_ms(zoom.span, zoom.span >= kSecond)));
    page.figure(timeline_svg(chart, fmt::format("zoom{}-last", i), last),
                fmt::format("{}: the last {} of the step ({} to {} ms)", runs[i].name,
                            seconds_or_ms(zoom.span, zoom.span >= kSecond), ms3(last.start), ms3(last.end)));
  }
}

}  // namespace

std::string data_parallel_html_report(const std::string& title, const std::string& description,
                                      const std::vector<DataParallelReportRun>& runs, bool compare) {
  Time axis_end = 0;
  for (const auto& r : runs) axis_end = std::max(axis_end, r.run->result.step_time);
  const bool seconds = axis_end >= 10 * kSecond;
  const Zoom zoom = zoom_for(runs, axis_end);
  std::vector<std::string> anchors;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const bool repeated = std::any_of(runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(i),
                                      [&](const auto& r) { return r.name == runs[i].name; });
    anchors.push_back(repeated ? fmt::format("{}-{}", slug(runs[i].name), i) : slug(runs[i].name));
  }

  HtmlReport page(title + " \u2014 stepsim report");
  page.heading(1, title);
  if (!description.empty()) page.paragraph(description);
  if (compare)
    page.paragraph(fmt::format("Data-parallel step: the base spec and {} variant{}.", runs.size() - 1,
                               runs.size() == 2 ? "" : "s"));
  else
    for (const auto& line : data_parallel_run_lines(*runs.front().run, *runs.front().spec)) page.paragraph(line);

  page.heading(2, "Summary", "summary");
  std::vector<std::pair<std::string, const DataParallelRun*>> rows;
  for (const auto& r : runs) rows.emplace_back(r.name, r.run);
  page.table(data_parallel_compare_table(rows));
  if (!compare && runs.front().run->result.ranks.size() <= 16)
    page.table(data_parallel_resource_table(*runs.front().run));

  page.heading(2, "Timelines", "timelines");
  page.paragraph(
      "Every op of one training step: per card its compute stream, below it its input wait and the link its "
      "collectives "
      "run on (its PCIe lane or peer link, or its host's NIC), each collective from start to end. Hover a bar for its "
      "op, "
      "unit, micro-batch, start and end.");
  page.paragraph(
      "Exposed communication (light red): the intervals in which a card's compute stream stands idle after its input "
      "wait \u2014 waiting for an AllGather of weights it needs next, or, after its last compute op, for the "
      "reductions still "
      "running. They add up to the card's exposed communication (step = input wait + compute + exposed communication). "
      "Collectives outlined in red were in flight during such an interval: the communication the compute waits on. "
      "Hatched: idle for another reason (the input wait, or a card that finished before the slowest)." +
      std::string(compare ? " All runs share one time axis." : ""));
  if (zoom.span > 0)
    page.paragraph(
        fmt::format("The step holds too many ops to see each at full scale (bars narrower than a pixel are still "
                    "drawn, one per op, "
                    "unlabelled and without hover text). Below each timeline: the step's first and last {} zoomed, "
                    "where the exposed "
                    "communication sits (the first gathers after the input wait; the last reductions).",
                    seconds_or_ms(zoom.span, zoom.span >= kSecond)));

  for (std::size_t i = 0; i < runs.size(); ++i)
    run_timeline_section(page, runs, i, anchors[i], compare, seconds, zoom, axis_end);
  return page.finish();
}

std::string data_parallel_gantt_text(const std::vector<DataParallelReportRun>& runs, int width) {
  Time axis_end = 0;
  for (const auto& r : runs) axis_end = std::max(axis_end, r.run->result.step_time);
  const bool seconds = axis_end >= 10 * kSecond;
  std::string out;
  TimelineChart all;  // every run's tracks, for one legend naming what any of them uses
  all.legend = dp_legend();
  for (const auto& r : runs) {
    TimelineChart chart = data_parallel_timeline(*r.run);
    const auto lines = data_parallel_run_lines(*r.run, *r.spec);
    out += fmt::format("{}: {}\n", r.name, lines.front());
    for (const auto& line : lines)
      if (line.rfind("step ", 0) == 0) out += line + "\n";
    const ShownRanks shown = data_parallel_shown_ranks(*r.run);
    if (!shown.note.empty()) out += shown.note + "\n";
    out += timeline_text(chart, axis_end, width, true);
    for (std::size_t rank : shown.ranks) {
      const auto exposed = exposed_intervals(*r.run, rank);
      Time sum = 0;
      for (const auto& e : exposed) sum += e.end - e.start;
      out += fmt::format("card {}: exposed communication {}{}\n", r.run->result.ranks[rank].card,
                         seconds_or_ms(sum, seconds), intervals(exposed.size()));
    }
    out += "\n";
    for (auto& t : chart.tracks) all.tracks.push_back(std::move(t));
  }
  out += timeline_text_legend(all, true) + "\n";
  out +=
      "A bar reads as its letter, its unit (or bucket) if it fits, then lower case; ! marks the compute waiting on "
      "communication (exposed); an op shorter than a cell still takes one.\n";
  return out;
}

}  // namespace stepsim::cli
