// Pictures of data-parallel runs (cli/reports/data_parallel_pictures.hpp): the HTML report is well-formed,
// draws one bar per op of the shown cards, and its exposed-communication highlights add up to the
// exposed communication the simulation reports; the zoomed views and the text Gantt chart.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <regex>
#include <set>

#include <unistd.h>

#include "cli/input/scenario.hpp"
#include "cli/input/scenario_data_parallel.hpp"
#include "cli/reports/data_parallel_pictures.hpp"
#include "cli/reports/svg_charts.hpp"
#include "cli/reports/text_gantt.hpp"
#include "schedules/lowering/data_parallel/data_parallel.hpp"
#include "tests/html_checks.hpp"
#include "tests/test_files.hpp"

using namespace stepsim;
using namespace stepsim::cli;
using namespace stepsim::test;

namespace {

// The base spec and every variant of a data_parallel scenario, simulated.
struct DpRuns {
  Scenario sc;
  std::vector<std::unique_ptr<DataParallelRun>> runs;
  std::vector<DataParallelReportRun> view;
  explicit DpRuns(const std::string& file, const std::vector<std::string>& sets = {}, bool variants = true)
      : sc(load_scenario(scenario_path(file), sets)) {
    add("base", sc.data_parallel->spec);
    if (variants)
      for (const auto& [name, spec] : sc.data_parallel->variants) add(name, spec);
  }
  void add(const std::string& name, const DataParallelSpec& spec) {
    runs.push_back(std::make_unique<DataParallelRun>(run_data_parallel(spec)));
    view.push_back({name, runs.back().get(), &spec});
  }
  std::string html(bool compare = true) const {
    return data_parallel_html_report(sc.name, sc.description, view, compare);
  }
  const DataParallelRun& run(const std::string& name) const {
    for (const auto& v : view)
      if (v.name == name) return *v.run;
    FAIL("no run " << name);
    return *view.front().run;
  }
};

// The <svg> element with this id.
std::string svg_of(const std::string& html, const std::string& id) {
  const std::size_t at = html.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const std::size_t open = html.rfind("<svg ", at);
  return html.substr(open, html.find("</svg>", at) + 6 - open);
}

// The resources the pictures draw for a run: compute, input and link of every shown card.
std::set<ResourceId> shown_resources(const DataParallelRun& run) {
  const DataParallelProgram& p = *run.program;
  std::set<ResourceId> out;
  for (std::size_t rank : data_parallel_shown_ranks(run).ranks) {
    out.insert(p.compute[rank]);
    if (p.input[rank] != kNoResource) out.insert(p.input[rank]);
    const ResourceId link = run.plan.link == LinkKind::HostNic ? p.nic[p.card_host[rank]] : p.lane[rank];
    if (link != kNoResource) out.insert(link);
  }
  return out;
}

// Ops of the shown resources reaching into [from, to] (a zero-length op: lying inside it).
std::size_t ops_in(const DataParallelRun& run, Time from, Time to) {
  const OpGraph& g = run.program->graph;
  const std::set<ResourceId> shown = shown_resources(run);
  std::size_t n = 0;
  for (OpId op = 0; op < g.op_count(); ++op) {
    if (!shown.count(g.op_resource(op))) continue;
    const Time a = run.timeline.start[op], b = run.timeline.done(g, op);
    n += a == b ? (from <= a && a <= to) : (a < to && b > from);
  }
  return n;
}

// The exposed-communication highlights of an SVG: their count and their durations (from their
// hover text, rounded to the µs) summed.
struct Highlights {
  std::size_t count = 0;
  long long micros = 0;
};
Highlights highlights(const std::string& svg) {
  Highlights h;
  static const std::regex kWait(R"(<rect class="wait"[^>]*><title>card \d+: exposed communication (\d+)\.(\d{3}) ms)");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), kWait); it != std::sregex_iterator(); ++it) {
    ++h.count;
    h.micros += std::stoll((*it)[1]) * 1000 + std::stoll((*it)[2]);
  }
  return h;
}

// Whether the highlights' durations add up to `exposed`: exactly when every interval is a whole
// number of µs, else within the rounding of each (half a µs).
bool adds_up(const Highlights& h, Time exposed) {
  const Time diff = h.micros * kMicrosecond - exposed;
  return std::abs(diff) * 2 <= static_cast<Time>(h.count) * kMicrosecond;
}

Time sum(const std::vector<ExposedInterval>& list) {
  Time t = 0;
  for (const auto& e : list) t += e.end - e.start;
  return t;
}

}  // namespace

TEST_CASE("DP reports of the book's small examples: one bar per op, exposed highlights = exposed_comm", "[html][dp]") {
  for (const char* file : {"dp-buckets.yaml", "dp-overlap-order.yaml"}) {
    INFO(file);
    const DpRuns dp(file);
    const std::string html = dp.html();
    CHECK(markup_problem(html) == "");
    CHECK(html == dp.html());  // same input, same bytes
    // A timeline per run, no zoomed views; a variant with the base's very timeline is named, not
    // drawn twice.
    const auto durations = [&](std::size_t i) {
      std::vector<Time> d;
      const OpGraph& g = dp.view[i].run->program->graph;
      for (OpId op = 0; op < g.op_count(); ++op) d.push_back(g.op_duration(op));
      return d;
    };
    const auto same_as_earlier = [&](std::size_t i) {
      for (std::size_t j = 0; j < i; ++j)
        if (dp.view[j].run->timeline.start == dp.view[i].run->timeline.start && durations(j) == durations(i))
          return true;
      return false;
    };
    std::size_t drawn = 0;
    for (std::size_t i = 0; i < dp.view.size(); ++i) drawn += same_as_earlier(i) ? 0 : 1;
    // dp-buckets' three-buckets and dp-overlap-order's dw-first restate their base.
    CHECK(drawn == 2u);
    CHECK(dp.view.size() == 3u);
    CHECK(count(html, "<svg ") == drawn);
    CHECK(count(html, "so its timeline is not drawn again") == dp.view.size() - drawn);
    Time exposed_total = 0;
    for (std::size_t i = 0; i < dp.view.size(); ++i) {
      const DataParallelRun& run = *dp.view[i].run;
      INFO(dp.view[i].name);
      const std::string svg = svg_of(html, "timeline" + std::to_string(i));
      CHECK(svg.empty() == same_as_earlier(i));
      if (svg.empty()) continue;
      // Folded: the one simulated card is drawn whole; every op is one bar (no joins exist).
      REQUIRE(run.result.folded);
      CHECK(count(svg, "<rect class=\"bar\"") == run.program->graph.op_count());
      // The highlights add up to the step's exposed communication: in the page (hover texts
      // rounded to the µs) and to the nanosecond in the chart model.
      const Highlights h = highlights(svg);
      CHECK(adds_up(h, run.result.exposed_comm));
      CHECK(sum(exposed_intervals(run, 0)) == run.result.exposed_comm);
      Time waits = 0;
      for (const auto& t : data_parallel_timeline(run).tracks)
        for (const auto& w : t.waits) waits += w.end - w.start;
      CHECK(waits == run.result.exposed_comm);
      // The collectives in flight while the compute waits are outlined: one, the last reduction.
      CHECK(count(svg, "stroke=\"#d62728\" stroke-width=\"2\"><title>") == (h.count > 0 ? 1u : 0u));
      exposed_total += run.result.exposed_comm;
    }
    CHECK(exposed_total > 0);  // one variant exposes communication: the check above is not vacuous
  }
  // The named figures: one 72 MiB bucket sticks out after the backward; dX first exposes the
  // reduction after the frozen layer's backward.
  const DpRuns buckets("dp-buckets.yaml");
  const auto one = exposed_intervals(buckets.run("one-bucket"), 0);
  REQUIRE(one.size() == 1);
  CHECK(one[0].start == buckets.run("one-bucket").result.compute_time);
  CHECK(one[0].waits_for == kNoOp);  // after the last compute op
  CHECK(exposed_intervals(buckets.run("three-buckets"), 0).empty());
  const DpRuns order("dp-overlap-order.yaml");
  CHECK(exposed_intervals(order.run("dw-first"), 0).empty());
  CHECK(exposed_intervals(order.run("dx-first"), 0).size() == 1);
}

TEST_CASE("DP report of the design case: every op drawn, narrow ones unlabelled, zoomed ends", "[html][dp]") {
  const DpRuns dp("zero3-design-48.yaml", {}, false);
  const DataParallelRun& run = *dp.view.front().run;
  const std::string html = dp.html(false);
  CHECK(markup_problem(html) == "");
  const std::string full = svg_of(html, "timeline0");
  CHECK(count(full, "<rect class=\"bar\"") == run.program->graph.op_count());
  // 52.8 s on 1,160 px: a layer's forward (~40 ms) is under a pixel wide, drawn but unlabelled.
  CHECK(count(full, ">layer 3</text>") == 0);
  // Exposed: the first two gathers after the input wait and the last ReduceScatters: 0.100 s.
  const auto exposed = exposed_intervals(run, 0);
  CHECK(exposed.size() == 3);
  CHECK(exposed.front().start == run.result.input_wait);
  REQUIRE(exposed.front().waits_for != kNoOp);
  CHECK(run.program->info[exposed.front().waits_for].kind == DpOp::Gather);
  CHECK(exposed.back().end == run.result.step_time);
  CHECK(adds_up(highlights(full), run.result.exposed_comm));
  // Zoomed views of the first and last second (1% of the step rounded up to 1-2-5): every op
  // reaching into them is a bar, and the highlights are all there.
  const std::string first = svg_of(html, "zoom0-first"), last = svg_of(html, "zoom0-last");
  REQUIRE(!first.empty());
  REQUIRE(!last.empty());
  CHECK(count(first, "<rect class=\"bar\"") == ops_in(run, 0, kSecond));
  CHECK(count(last, "<rect class=\"bar\"") == ops_in(run, run.result.step_time - kSecond, run.result.step_time));
  CHECK(count(first, ">layer 3</text>") == 1);  // wide enough for a label here
  const Highlights a = highlights(first), b = highlights(last);
  CHECK(a.count + b.count == 3);
  CHECK(adds_up({a.count + b.count, a.micros + b.micros}, run.result.exposed_comm));
  CHECK(html == dp.html(false));
}

TEST_CASE("DP compare report of the design case: shared axis, NIC tracks, every variant's exposure", "[html][dp]") {
  const DpRuns dp("zero3-design-48.yaml");
  const std::string html = dp.html();
  CHECK(markup_problem(html) == "");
  for (std::size_t i = 0; i < dp.view.size(); ++i) {
    const DataParallelRun& run = *dp.view[i].run;
    INFO(dp.view[i].name);
    const std::string svg = svg_of(html, "timeline" + std::to_string(i));
    CHECK(count(svg, "<rect class=\"bar\"") == run.program->graph.op_count());
    CHECK(adds_up(highlights(svg), run.result.exposed_comm));
    CHECK(sum(exposed_intervals(run, 0)) == run.result.exposed_comm);
    CHECK(count(svg, run.plan.link == LinkKind::HostNic ? ">host 0 NIC</text>" : ">PCIe</text>") == 1);
  }
  // no-prefetch: every gather is waited for; the whole link time is exposed.
  const DataParallelRun& none = dp.run("no-prefetch");
  CHECK(none.result.exposed_comm == none.result.link_time);
  CHECK(exposed_intervals(none, 0).size() > 600);
}

TEST_CASE("DP report of an unfolded run: the first cards, the slowest, per-card exposure", "[html][dp]") {
  const DpRuns dp("zero3-design-48.yaml", {"data_parallel.stragglers.5=1.02"}, false);
  const DataParallelRun& run = *dp.view.front().run;
  REQUIRE(!run.result.folded);
  const ShownRanks shown = data_parallel_shown_ranks(run);
  CHECK(shown.ranks == std::vector<std::size_t>{0, 1, 2, 3, 5});
  CHECK(shown.note.find("the slowest (card 5:") != std::string::npos);
  const std::string html = dp.html(false);
  CHECK(markup_problem(html) == "");
  CHECK(count(html, "48 cards simulated (they differ); shown: cards 0 to 3") == 1);
  const std::string full = svg_of(html, "timeline0");
  CHECK(count(full, "<rect class=\"bar\"") == ops_in(run, 0, run.result.step_time));
  // Each card's highlights add up to its own exposed communication.
  for (std::size_t rank : shown.ranks) CHECK(sum(exposed_intervals(run, rank)) == run.result.ranks[rank].exposed);
  // The straggler computes longest; the others wait for it at every collective.
  CHECK(run.result.ranks[0].exposed > run.result.ranks[5].exposed);
}

TEST_CASE("text Gantt of DP runs: compute and link rows, ! where the compute waits", "[gantt][dp]") {
  const DpRuns dp("dp-buckets.yaml");
  const std::string text = data_parallel_gantt_text(dp.view, 100);
  CHECK(text == data_parallel_gantt_text(dp.view, 100));
  std::vector<std::string> rows;
  for (const auto& line : lines_of(text))
    if (line.rfind("card 0 |", 0) == 0 || line.rfind("  PCIe |", 0) == 0) {
      CHECK(line.size() == 100u);
      rows.push_back(line);
    }
  REQUIRE(rows.size() == 6);  // base, three-buckets, one-bucket
  // 10.55 ms in 91 cells: one-bucket's compute ends at 8 ms (boundary 69 = 8 / 10.55 x 91), then
  // the compute waits for its AllReduce to the end: 22 cells of '!'.
  CHECK(rows[0].find('!') == std::string::npos);
  CHECK(rows[4].find("Bfrozen-inputbbbb" + std::string(22, '!') + "|") != std::string::npos);
  CHECK(rows[5].find("Abucket 0aaa") != std::string::npos);
  CHECK(count(text, "card 0: exposed communication 2.550 ms in 1 interval\n") == 1);
  CHECK(count(text, "! exposed communication: compute waits") == 1);
}

TEST_CASE("timeline pieces: a window clips, waits render", "[html][gantt][dp]") {
  TimelineChart c;
  c.legend = {{"work", "#4e79a7", 'F'}, {"waiting", "#ff9896", '!'}};
  TimeTrack t{"d0", {}, false, true, {}};
  t.bars.push_back({0, 10 * kMillisecond, 0, "a", "first"});
  t.bars.push_back({20 * kMillisecond, 30 * kMillisecond, 0, "b", "second"});
  t.waits.push_back({10 * kMillisecond, 15 * kMillisecond, 1, "", "waits", true});
  TimeTrack link{"link", {{12 * kMillisecond, 18 * kMillisecond, 0, "", "msg", true}}, true, false, {}};
  c.tracks = {t, link};
  c.end = 30 * kMillisecond;
  c.emphasis_label = "in flight";
  const std::string all = timeline_svg(c, "w", c.end);
  CHECK(count(all, "<rect class=\"bar\"") == 3);
  CHECK(count(all, "<rect class=\"wait\"") == 1);
  CHECK(count(all, ">in flight</text>") == 1);  // the emphasis legend entry
  const std::string part = timeline_svg(c, "w2", TimeWindow{11 * kMillisecond, 19 * kMillisecond});
  CHECK(count(part, "<rect class=\"bar\"") == 1);  // only the message
  CHECK(count(part, "<rect class=\"wait\"") == 1);
  CHECK(count(part, ">F work</text>") == 1);     // legend: what is visible
  CHECK(count(part, ">! waiting</text>") == 0);  // the wait has no letter in SVG legends
  CHECK(count(part, ">waiting</text>") == 1);
  CHECK(count(part, "end 30.000 ms") == 0);
  // Text: 31 cells of 30/31 ms; the wait takes the free cells between its rounded ends; minor
  // rows on request, indented.
  CHECK(timeline_text(c, 30 * kMillisecond, 40, true) ==
        "d0     |Faffffffff!!!!!!.....Fbffffffff|\n"
        "  link |............Fffffff............|\n"
        "        +---------+----------+---------+\n"
        "ms      0         10         20        30\n");
  CHECK(timeline_text_legend(c, true) == "F work  ! waiting  . idle");
  CHECK(timeline_text(c, 30 * kMillisecond, 40).find("link") == std::string::npos);
}

TEST_CASE("CLI: run and compare --html and --gantt on data_parallel scenarios", "[html][dp][cli]") {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("stepsim_test_dp_" + std::to_string(getpid()) + ".html")).string();
  const std::string buckets = scenario_path("dp-buckets.yaml");
  std::string out;
  REQUIRE(run_cli("run " + buckets + " --html " + path, &out) == 0);
  CHECK(out.find("step 8.000 ms = input wait") != std::string::npos);  // the table still prints
  std::string html = read_file(path);
  CHECK(markup_problem(html) == "");
  CHECK(count(html, "<rect class=\"bar\"") == DpRuns("dp-buckets.yaml", {}, false).runs[0]->program->graph.op_count());
  REQUIRE(run_cli("compare " + buckets + " --html " + path, &out) == 0);
  html = read_file(path);
  const DpRuns dp("dp-buckets.yaml");
  CHECK(html == dp.html());  // the CLI writes the report the library builds
  std::remove(path.c_str());

  REQUIRE(run_cli("run " + buckets + " --set data_parallel.bucket_size=72MiB --gantt --width 80", &out) == 0);
  CHECK(out.rfind("dp-buckets\nbase: DDP over 4 cards", 0) == 0);
  CHECK(count(out, "card 0 |") == 1);
  CHECK(count(out, "  PCIe |") == 1);
  CHECK(out.find("!!!|") != std::string::npos);
  REQUIRE(run_cli("compare " + buckets + " --gantt --width 120", &out) == 0);
  CHECK(count(out, "card 0 |") == 3);
  CHECK(run_cli("run " + buckets + " --gantt --width 10", &out) == 2);
  CHECK(run_cli("run " + buckets + " --gantt --json", &out) != 0);
}
