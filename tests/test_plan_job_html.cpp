// The planner's and the job simulation's HTML reports: well-formed, one bar (or cell) per case,
// bin or combination, the verdicts visible, deterministic; the new chart pieces (histogram bins
// and markers, emphasised bars, grids) on their own.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <numeric>

#include <fmt/format.h>
#include <unistd.h>

#include "cli/input/scenario.hpp"
#include "cli/reports/job_pictures.hpp"
#include "cli/reports/plan_pictures.hpp"
#include "cli/reports/svg_charts.hpp"
#include "models/plan_sweep.hpp"
#include "tests/html_checks.hpp"
#include "tests/test_files.hpp"

using namespace stepsim;
using namespace stepsim::cli;
using namespace stepsim::test;

namespace {

// The outline drawn around an emphasised bar (over capacity, late).
const std::string kOutline = "fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\" pointer-events=\"none\"";

std::size_t segments(const BarChart& c) {
  std::size_t n = 0;
  for (const auto& b : c.bars) n += b.segments.size();
  return n;
}

double total(const BarItem& b) {
  return std::accumulate(b.segments.begin(), b.segments.end(), 0.0,
                         [](double s, const BarSegment& x) { return s + x.value; });
}

struct Plan {
  Scenario sc;
  PlanEvaluation ev;
  explicit Plan(const std::string& file) : sc(load_scenario(scenario_path(file))) {
    ev = evaluate_cases(*sc.plan->spec, spec_step_comm(*sc.plan->spec));
  }
  const PlanSpec& spec() const { return *sc.plan->spec; }
  std::string html() const { return plan_html_report(sc.name, sc.description, *sc.plan, &ev); }
};

SweepAxis axis(const std::string& key, const std::vector<std::int64_t>& values) {
  SweepAxis a{*find_sweep_key(key), {}};
  for (auto v : values) a.values.push_back({v, 0, std::to_string(v)});
  return a;
}

SweepAxis fractions(const std::string& key, const std::vector<double>& values) {
  SweepAxis a{*find_sweep_key(key), {}};
  for (double v : values) a.values.push_back({0, v, fmt::format("{:g}", v)});
  return a;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / fmt::format("stepsim_{}_{}", getpid(), name)).string();
}

}  // namespace

TEST_CASE("plan report: memory bars per case against the usable memory, completion against the deadline",
          "[html][plan]") {
  const Plan p("design-case.yaml");
  const BarChart memory = plan_memory_chart(p.spec(), p.ev);
  REQUIRE(memory.bars.size() == 2);
  CHECK(memory.bars[0].label == "32 cards");
  CHECK(memory.bars[1].label == "48 cards");
  // Each bar stacks to the planned memory: weights, gradients, master + moments and the book's
  // 10 GiB allowance (no margin in this scenario, no derived activations).
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(memory.bars[i].segments.size() == 4);
    CHECK(total(memory.bars[i]) == Approx(static_cast<double>(p.ev.results[i].memory.planned) / (1 << 30)));
    CHECK_FALSE(memory.bars[i].emphasis);
  }
  REQUIRE(memory.lines.size() == 1);
  CHECK(memory.lines[0].label == "usable 22.0 GiB");

  const BarChart deadline = plan_deadline_chart(p.spec(), p.ev);
  REQUIRE(deadline.bars.size() == 2);
  // Reserved + training + checkpoint overhead = completion: 34.3 days (misses) and 24.6 (meets).
  CHECK(total(deadline.bars[0]) == Approx(to_s(p.ev.results[0].time->completion) / 86400));
  CHECK(deadline.bars[0].note == "34.3 misses");
  CHECK(deadline.bars[0].emphasis);
  CHECK(deadline.bars[1].note == "24.6 meets");
  CHECK_FALSE(deadline.bars[1].emphasis);
  CHECK(deadline.lines[0].value == 30);

  const std::string html = p.html();
  CHECK(markup_problem(html) == "");
  CHECK(count(html, "<svg ") == 2);
  CHECK(count(html, "<rect class=\"col\"") == segments(memory) + segments(deadline));
  CHECK(count(html, kOutline) == 1);  // only the late 32-card plan
  CHECK(count(html, ">34.3 misses</text>") == 1);
  CHECK(count(html, ">deadline 30 days</text>") == 1);
  CHECK(count(html, ">usable 22.0 GiB</text>") == 1);
  CHECK(count(html, "<title>master + moments: 2.9 GiB\n32 cards: 13.8 GiB planned per card, 22.0 GiB usable (fits)") ==
        1);
  // The book's table and the verdicts, as in the text report.
  CHECK(count(html, "<td class=\"num\">34.3 (misses)</td><td class=\"num\">24.6 (meets)</td>") == 1);
  CHECK(count(html, "<p>32 cards misses; levers: efficiency 40% -&gt; 47%") == 1);
  CHECK(count(html, "src=") == 0);
  CHECK(p.html() == html);
}

TEST_CASE("plan report: cases over the usable memory are outlined; memory-only plans have no deadline chart",
          "[html][plan]") {
  const Plan p("resource-bill.yaml");
  const BarChart memory = plan_memory_chart(p.spec(), p.ev);
  REQUIRE(memory.bars.size() == 5);
  // Examples 27.1-27.3 in decimal MB: 21,638,400 B planned for one worker (16 B per parameter +
  // 1,310,720 B of activations, + 25% margin) against 10,000,000 B.
  CHECK(total(memory.bars[0]) == Approx(21.6384));
  CHECK(memory.bars[0].segments.back().swatch == 6);  // the margin on top
  CHECK(memory.lines[0].label == "usable 10.0 MB");
  std::vector<bool> over;
  for (const auto& b : memory.bars) over.push_back(b.emphasis);
  CHECK(over == std::vector<bool>{true, true, true, false, false});
  const std::string html = p.html();
  CHECK(markup_problem(html) == "");
  CHECK(count(html, "<svg ") == 1);
  CHECK(count(html, kOutline) == 3);
  CHECK(count(html, ">21.6: no fit</text>") == 1);
  CHECK(count(html, "<rect class=\"col\"") == segments(memory));
}

TEST_CASE("plan report of a scale-out question alone: its table, no charts", "[html][plan]") {
  const Scenario sc = load_scenario(scenario_path("scale-out.yaml"));
  REQUIRE_FALSE(sc.plan->spec);
  const std::string html = plan_html_report(sc.name, sc.description, *sc.plan, nullptr);
  CHECK(markup_problem(html) == "");
  CHECK(count(html, "<svg ") == 0);
  CHECK(count(html, "<h2 id=\"scale-out\">Scale-out</h2>") == 1);
  CHECK(count(html, "<table>") == 1);
}

TEST_CASE("sweep report: one heat-map cell per combination, coloured by the verdict", "[html][plan]") {
  const Plan p("design-case.yaml");
  const std::vector<SweepAxis> axes{axis("cards", {16, 24, 32, 40, 48, 56, 64}),
                                    fractions("efficiency", {0.30, 0.35, 0.40, 0.45, 0.50})};
  const auto points = sweep_plan(p.spec(), p.spec().cases.front(), axes, spec_step_comm(p.spec()));
  const auto grids = sweep_grids(axes, points, p.spec());
  REQUIRE(grids.size() == 1);
  CHECK(grids[0].chart.rows.size() == 7);
  CHECK(grids[0].chart.columns.size() == 5);
  // 32 cards at 50%: 28.5 days, ok; at 40%: 34.3 days, late (the text sweep's matrix).
  CHECK(grids[0].chart.cells[2 * 5 + 4].label == "28.5");
  CHECK(grids[0].chart.cells[2 * 5 + 4].swatch == 0);
  CHECK(grids[0].chart.cells[2 * 5 + 2].label == "34.3");
  CHECK(grids[0].chart.cells[2 * 5 + 2].swatch == 1);
  const std::string html = sweep_html_report(p.sc.name, p.sc.description, "32 cards", axes, points, p.spec());
  CHECK(markup_problem(html) == "");
  CHECK(count(html, "<rect class=\"cell\"") == 35);
  CHECK(count(html, "fill=\"#59a14f\" stroke=\"#fff\" stroke-width=\"1\"") == 18);  // ok
  CHECK(count(html, "fill=\"#f28e2b\" stroke=\"#fff\" stroke-width=\"1\"") == 17);  // late
  CHECK(count(html, "18 of 35 combinations fit in memory and meet the deadline.") == 1);
  CHECK(count(html, "<title>cards = 32, efficiency = 0.4\nmisses (34.3 late)\n34.3 days of 30;") == 1);
  CHECK(sweep_html_report(p.sc.name, p.sc.description, "32 cards", axes, points, p.spec()) == html);
}

TEST_CASE("sweep report: a third axis gives one grid per value", "[html][plan]") {
  const Plan p("resource-bill.yaml");
  const std::vector<SweepAxis> axes{axis("cards", {1, 2, 3, 4, 5, 6, 7, 8}), axis("zero", {0, 1, 2, 3}),
                                    fractions("margin", {0, 0.25})};
  const auto points = sweep_plan(p.spec(), p.spec().cases.front(), axes, spec_step_comm(p.spec()));
  const auto grids = sweep_grids(axes, points, p.spec());
  REQUIRE(grids.size() == 2);
  CHECK(grids[0].heading == "margin = 0");
  CHECK(grids[1].heading == "margin = 0.25");
  const std::string html = sweep_html_report(p.sc.name, p.sc.description, "1 worker", axes, points, p.spec());
  CHECK(markup_problem(html) == "");
  CHECK(count(html, "<rect class=\"cell\"") == 64);
  CHECK(count(html, "fill=\"#59a14f\" stroke=\"#fff\" stroke-width=\"1\"") == 35);  // fits
  CHECK(count(html, "fill=\"#e15759\" stroke=\"#fff\" stroke-width=\"1\"") == 29);  // no fit
  CHECK(count(html, "<figcaption>margin = 0.25</figcaption>") == 1);
}

TEST_CASE("job report: completion histogram with P50/P90/P99 and the deadline, overhead split", "[html][job]") {
  const Scenario sc = load_scenario(scenario_path("job-design-48.yaml"));
  const JobAnalysis a = analyse_job(sc, 200, 1, 0);
  const BarChart h = job_completion_histogram(a, 24);
  REQUIRE(h.bins);
  REQUIRE(h.bars.size() == 24);
  double runs = 0;
  for (const auto& b : h.bars) runs += total(b);
  CHECK(runs == 200);
  CHECK(h.bins->unit == "completion (days)");
  REQUIRE(h.markers.size() == 4);
  CHECK(h.markers[0].label.rfind("P50 ", 0) == 0);
  CHECK(h.markers[0].value == Approx(to_s(a.summary.completion.p50) / 86400));
  CHECK(h.markers[2].value == Approx(to_s(a.summary.completion.p99) / 86400));
  CHECK(h.markers[3].label == "deadline 30 days");
  const BarChart o = job_overhead_chart(a);
  REQUIRE(o.bars.size() == 1);
  CHECK(total(o.bars[0]) == Approx(100 * a.summary.overhead.mean));

  const std::string html = job_html_report(sc.name, sc.description, {&a});
  CHECK(markup_problem(html) == "");
  CHECK(count(html, "class=\"bars histogram\"") == 1);
  CHECK(count(html, "<rect class=\"col\"") == 24 + segments(o));
  // All runs end near 24.6 days, weeks before the deadline: it is named at the edge.
  CHECK(count(html, ">deadline 30 days \u2192</text>") == 1);
  CHECK(count(html, "<p>deadline 30.00 d: met in 100.0% of runs -&gt; meets</p>") == 1);
  CHECK(count(html, "<th>P99</th>") == 1);
  // The same seed gives the same page.
  const JobAnalysis again = analyse_job(sc, 200, 1, 0);
  CHECK(job_html_report(sc.name, sc.description, {&again}) == html);
}

TEST_CASE("job report: late runs and compared checkpoint intervals", "[html][job]") {
  const Scenario late = load_scenario(scenario_path("job-design-32.yaml"));
  const JobAnalysis a = analyse_job(late, 100, 1, 0);
  const BarChart h = job_completion_histogram(a, 24);
  for (const auto& b : h.bars) CHECK(b.segments[0].swatch == 1);  // every bin after the deadline
  CHECK(count(job_html_report(late.name, "", {&a}), ">\u2190 deadline 30 days</text>") == 1);

  const Scenario sweep = load_scenario(scenario_path("job-1024.yaml"));
  const JobAnalysis b = analyse_job(sweep, 50, 1, 0);
  const BarChart o = job_overhead_chart(b);
  // The six intervals compared; the scenario's own (900 s) is one of them, starred.
  REQUIRE(o.bars.size() == 6);
  CHECK(o.bars[0].label == "every 5.0 min");
  CHECK(o.bars[3].label == "every 15.0 min *");
  const std::string html = job_html_report(sweep.name, sweep.description, {&b});
  CHECK(markup_problem(html) == "");
  CHECK(count(html, "<th>every (steps)</th>") == 1);

  // Every run alike (one injected failure, no random ones): one bin around the value.
  const Scenario same = load_scenario(scenario_path("job-async-save.yaml"));
  const JobAnalysis c = analyse_job(same, 20, 1, 0);
  const BarChart one = job_completion_histogram(c, 24);
  REQUIRE(one.bars.size() == 1);
  CHECK(total(one.bars[0]) == 20);
  CHECK(markup_problem(job_html_report(same.name, "", {&c})) == "");
}

TEST_CASE("job report: one job per plan case, their completion against the deadline first", "[html][job]") {
  const Scenario sc = load_scenario(scenario_path("design-case.yaml"));
  std::vector<std::string> names;
  std::vector<JobAnalysis> jobs;
  for (auto& [name, an] : analyse_plan_jobs(sc, 100, 1, 0, "")) {
    names.push_back(name);
    jobs.push_back(std::move(an));
  }
  REQUIRE(jobs.size() == 2);
  const std::vector<const JobAnalysis*> all{&jobs[0], &jobs[1]};
  const BarChart cases = job_cases_chart(all, names);
  REQUIRE(cases.bars.size() == 2);
  CHECK(cases.bars[0].label == "32 cards");
  CHECK(cases.bars[0].emphasis);  // misses the 30-day deadline
  CHECK_FALSE(cases.bars[1].emphasis);
  CHECK(cases.lines[0].label == "deadline 30 days");
  const std::string html = job_html_report(sc.name, sc.description, all, names);
  CHECK(markup_problem(html) == "");
  CHECK(count(html, "class=\"bars histogram\"") == 2);
  CHECK(count(html, "<h2 id=\"case-1\">32 cards</h2>") == 1);
  CHECK(count(html, "<h2 id=\"case-2\">48 cards</h2>") == 1);
  CHECK(count(html, "<th>verdict</th>") == 1);  // the summary table
  CHECK(count(html, kOutline) == 1);
}

TEST_CASE("chart pieces: histogram bins, markers off the axis, emphasis, grid", "[html]") {
  BarChart h;
  h.unit = "runs";
  h.integer_values = true;
  h.legend = {{"runs", "#4e79a7"}};
  h.bins = BinAxis{10, 0.5, "completion (days)"};
  for (int n : {1, 3, 2}) h.bars.push_back({"", {{static_cast<double>(n), 0, "bin"}}, ""});
  h.markers = {{10.7, "P50 10.7", "#333"}, {11.0, "near", ""}, {40, "far", ""}, {-20, "before", ""}};
  const std::string svg = bar_chart_svg(h, "h", 0, 600);
  CHECK(count(svg, "<rect class=\"col\"") == 3);
  CHECK(count(svg, ">P50 10.7</text>") == 1);
  CHECK(count(svg, ">near</text>") == 1);
  CHECK(count(svg, ">far \u2192</text>") == 1);  // beyond one span of the bins: at the edge
  CHECK(count(svg, ">\u2190 before</text>") == 1);
  CHECK(count(svg, "stroke-dasharray=\"5 3\"") == 2);  // lines only for markers on the axis
  CHECK(count(svg, ">bin</text>") == 0);

  BarChart e;
  e.legend = {{"a", "#4e79a7"}};
  e.emphasis_label = "over";
  e.bars.push_back({"x", {{2, 0, ""}}, "2"});
  BarItem over{"y", {{5, 0, ""}}, "5"};
  over.emphasis = true;
  e.bars.push_back(over);
  const std::string bars = bar_chart_svg(e, "e", 0, 0);
  CHECK(count(bars, kOutline) == 1);
  CHECK(count(bars, ">over</text>") == 1);           // in the legend
  CHECK(count(bars, "width=\"420\" height=") == 1);  // automatic width: at least 420 pixels
  // ... or as wide as two slots for 44-character labels need: 68 + 2 x (44 x 7.2 + 14).
  e.bars[1].label = std::string(44, 'x');
  CHECK(count(bar_chart_svg(e, "e", 0, 0), "width=\"730\" height=") == 1);

  GridChart g;
  g.row_title = "r";
  g.column_title = "c";
  g.rows = {"1", "2"};
  g.columns = {"a", "b", "c"};
  g.legend = {{"yes", "#59a14f"}, {"no", "#e15759"}};
  for (int i = 0; i < 6; ++i) g.cells.push_back({i % 2, std::to_string(i), fmt::format("cell {}", i)});
  const std::string grid = grid_svg(g, "g");
  CHECK(markup_problem(grid) == "");
  CHECK(count(grid, "<rect class=\"cell\"") == 6);
  CHECK(count(grid, "<title>cell 5</title>") == 1);
  CHECK(grid_svg(g, "g") == grid);
}

TEST_CASE("CLI: plan --html, plan --sweep --html, job --html", "[html][plan][job][cli]") {
  const std::string path = temp_path("report.html");
  std::string with, without;
  REQUIRE(run_cli("plan " + scenario_path("design-case.yaml") + " --html " + path, &with) == 0);
  REQUIRE(run_cli("plan " + scenario_path("design-case.yaml"), &without) == 0);
  CHECK(with == without);  // the text report still prints, unchanged
  std::string html = read_file(path);
  CHECK(markup_problem(html) == "");
  CHECK(count(html, ">34.3 misses</text>") == 1);
  std::remove(path.c_str());

  REQUIRE(run_cli("plan " + scenario_path("design-case.yaml") +
                      " --sweep cards=16:64:8 --sweep efficiency=0.3:0.5:0.05 --csv --html " + path,
                  &with) == 0);
  CHECK(with.rfind("cards,efficiency,", 0) == 0);
  html = read_file(path);
  CHECK(markup_problem(html) == "");
  CHECK(count(html, "<rect class=\"cell\"") == 35);
  std::remove(path.c_str());

  REQUIRE(run_cli("job " + scenario_path("job-design-48.yaml") + " --runs 100 --html " + path, &with) == 0);
  REQUIRE(run_cli("job " + scenario_path("job-design-48.yaml") + " --runs 100", &without) == 0);
  CHECK(with == without);
  html = read_file(path);
  CHECK(markup_problem(html) == "");
  CHECK(count(html, "class=\"bars histogram\"") == 1);
  std::remove(path.c_str());

  CHECK(run_cli("plan " + scenario_path("design-case.yaml") + " --html /nonexistent-dir/x.html", &with) != 0);
}
