// The pictures: the HTML report (well-formed, one bar per op, shared scales, the book's points
// findable in it) and the terminal Gantt chart (exact layout, determinism, width).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <unistd.h>

#include "cli/input/scenario.hpp"
#include "cli/reports/html_report.hpp"
#include "cli/reports/pipeline_pictures.hpp"
#include "cli/reports/svg_charts.hpp"
#include "cli/reports/text_gantt.hpp"
#include "tests/html_checks.hpp"
#include "tests/test_files.hpp"

using namespace stepsim;
using namespace stepsim::cli;
using namespace stepsim::test;

namespace {

const std::string kBook = std::string(STEPSIM_SOURCE_DIR) + "/scenarios/book-pipeline.yaml";

struct BookRuns {
  Scenario sc = load_scenario(kBook);
  std::vector<std::unique_ptr<PipelineRun>> runs;
  std::vector<const PipelineRun*> view;
  explicit BookRuns(const std::vector<std::string>& schedules) {
    for (const auto& s : schedules) {
      PipelineSpec spec = *sc.pipeline;
      spec.schedule = s;
      runs.push_back(std::make_unique<PipelineRun>(simulate_pipeline(spec)));
      view.push_back(runs.back().get());
    }
  }
  std::string html() const { return pipeline_html_report(sc.name, sc.description, view, *sc.pipeline); }
};

}  // namespace

TEST_CASE("the markup checker catches what it should", "[html]") {
  CHECK(markup_problem("<p>a &amp; b<br/></p>") == "");
  CHECK(markup_problem("<p><b>x</p></b>") != "");
  CHECK(markup_problem("<p>a & b</p>") != "");
  CHECK(markup_problem("<p id=\"a\"></p><p id=\"a\"></p>") != "");
  CHECK(markup_problem("<rect x=1/>") != "");
  CHECK(markup_problem("<div>") != "");
  CHECK(markup_problem("<script>if (a < b && c) {}</script>") == "");
}

TEST_CASE("the compare report is well-formed and holds one bar per op", "[html]") {
  const BookRuns book({"fill-drain", "1f1b", "zb-h1"});
  const std::string html = book.html();
  CHECK(markup_problem(html) == "");
  std::size_t ops = 0;
  for (const auto* r : book.view) ops += r->program->graph.op_count();
  // 4 devices x (8 F + 8 B + update) + 48 messages; ZB-H1 has 8 W per device more.
  CHECK(ops == 116 + 116 + 148);
  CHECK(count(html, "<rect class=\"bar\"") == ops);
  // One timeline, one memory curve and one resident-bars chart per schedule.
  CHECK(count(html, "<svg ") == 9);
  CHECK(count(html, "class=\"timeline\"") == 3);
  // Self-contained: nothing is fetched.
  CHECK(count(html, "src=") == 0);
  CHECK(count(html, "href=") == 0);
  CHECK(count(html, "http://") == count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(count(html, "https://") == 0);
  // Same input, same bytes.
  CHECK(book.html() == html);
}

TEST_CASE("the report shows the book's points", "[html]") {
  const BookRuns book({"fill-drain", "1f1b", "zb-h1"});
  const std::string html = book.html();
  // Figure 10-18's text: in 1F1B stage 3 is idle from 93 to 95 ms (its 2nd backward is done,
  // its 3rd forward's input has not arrived); the gap is drawn and named on hover.
  CHECK(count(html, "device 3: idle from 93.000 to 95.000 ms (2.000 ms)") == 1);
  // Hover text of a bar: op, micro-batch, start and end.
  CHECK(count(html, "3B1: backward of micro-batch 1, stage 3\nstart 73.000 ms, end 93.000 ms (20.000 ms)") == 1);
  // ZB-H1's W ops are drawn (8 per device), in their own colour.
  CHECK(count(html, "weight gradient of micro-batch") == 32);
  CHECK(count(html, "fill=\"#59a14f\" stroke=\"#fff\"") == 32);
  // All timelines share one time axis: each ends its own run with an end line, and all are as
  // wide as the longest (fill-drain 337 ms, 1F1B 347 ms, ZB-H1 283 ms).
  CHECK(count(html, ">end 337.000 ms</text>") == 1);
  CHECK(count(html, ">end 347.000 ms</text>") == 1);
  CHECK(count(html, ">end 283.000 ms</text>") == 1);
  // Peak memory marked per device: 1F1B's stage 0 peak (920 MiB) vs fill-drain's 1840 MiB.
  CHECK(count(html, "device 0: peak 920.0 MiB at 30.000 ms") == 2);  // legend and dot
  CHECK(count(html, "device 0: peak 1840.0 MiB") == 2);
}

TEST_CASE("a single run's report and escaping of names", "[html]") {
  const Scenario sc = parse_scenario(R"(name: "a <b> & 'c'"
description: "x \"y\" < z"
pipeline: {stages: 2, microbatches: 3, time: {forward: 1ms, backward: 2ms, update: 0ms}, memory: {capacity: 1GiB}})",
                                     "test.yaml");
  const PipelineRun run = simulate_pipeline(*sc.pipeline);
  const std::string html = pipeline_html_report(sc.name, sc.description, {&run}, *sc.pipeline);
  CHECK(markup_problem(html) == "");
  CHECK(count(html, "<rect class=\"bar\"") == run.program->graph.op_count());
  CHECK(count(html, "a &lt;b&gt; &amp; &#39;c&#39;") >= 2);  // <title> and <h1>
  CHECK(count(html, "<b>") == 0);
  CHECK(count(html, "capacity 1024.0 MiB") >= 2);  // reference line and verdict
}

TEST_CASE("a schedule listed twice keeps ids unique", "[html]") {
  const BookRuns book({"1f1b", "1f1b"});
  CHECK(markup_problem(book.html()) == "");
}

TEST_CASE("a compare report without runs says so", "[html]") {
  const Scenario sc = load_scenario(kBook);
  const std::string html = pipeline_html_report(sc.name, sc.description, {}, *sc.pipeline);
  CHECK(markup_problem(html) == "");
  CHECK(count(html, "No schedule could run this scenario.") == 1);
}

TEST_CASE("HtmlReport pieces", "[html]") {
  HtmlReport page("t");
  page.heading(2, "Tables & <things>", "anchor");
  Table t({{"name", false}, {"value"}});
  t.add_row({"x<y", "1.0"});
  page.table(t);
  BarChart bars;
  bars.unit = "GiB";
  bars.legend = {{"weights", "#4e79a7"}, {"activations", "#f28e2b"}};
  bars.bars.push_back({"plan A", {{10, 0, "weights 10 GiB"}, {30, 1, "activations 30 GiB"}}, "40"});
  bars.lines.push_back({80, "capacity 80 GiB"});
  page.open_row();
  page.figure(bar_chart_svg(bars, "b", 0), "memory against capacity");
  page.close_row();
  const std::string html = page.finish();
  CHECK(markup_problem(html) == "");
  CHECK(count(html, "<h2 id=\"anchor\">Tables &amp; &lt;things&gt;</h2>") == 1);
  CHECK(count(html, "<td>x&lt;y</td><td class=\"num\">1.0</td>") == 1);
  CHECK(count(html, "<rect class=\"col\"") == 2);
  CHECK(count(html, "capacity 80 GiB") == 1);
  CHECK(count(html, "<figcaption>memory against capacity</figcaption>") == 1);
}

TEST_CASE("nice_step picks 1-2-5 steps", "[html]") {
  CHECK(nice_step(347, 10) == 50);
  CHECK(nice_step(100, 10) == 10);
  CHECK(nice_step(2448 * 1.08, 5) == 1000);
  CHECK(nice_step(8, 5) == 2);
  CHECK(nice_step(0, 5) == 1);
}

TEST_CASE("text Gantt: cells, labels, idle, axis", "[gantt]") {
  TimelineChart c;
  c.legend = {{"forward", "#000", 'F'}, {"backward", "#111", 'B'}, {"tick", "#222"}};
  TimeTrack t{"d0", {}, false, true, {}};
  t.bars.push_back({0, 20 * kMillisecond, 0, "0", ""});
  t.bars.push_back({30 * kMillisecond, 70 * kMillisecond, 1, "12", ""});
  t.bars.push_back({70 * kMillisecond, 70 * kMillisecond + 1, 2, "", ""});  // too short: takes a cell
  TimeTrack link{"a link", {{0, 5, 0, "", ""}}, true, false, {}};           // minor: not a row
  c.tracks = {t, link};
  c.end = 80 * kMillisecond;
  // 40 columns: "d0 |" + 35 cells + "|"; a cell is 100/35 ms. F: cells 0..6 (0 and 20 ms round
  // to boundaries 0 and 7), idle 7..10, B: 11..24 (boundaries of 30 and 70 ms), the 1 ns op
  // takes cell 24 (where 70 ms falls), idle up to boundary 28 (80 ms), blank after the end.
  const std::string text = timeline_text(c, 100 * kMillisecond, 40);
  CHECK(text ==
        "d0 |F0fffff....B12bbbbbbbbbb#...       |\n"
        "    +-----------------+----------------+\n"
        "ms  0                 50               100\n");
  CHECK(timeline_text_legend(c) == "F forward  B backward  # tick  . idle");
  // Narrower than the minimum: drawn at the minimum.
  CHECK(timeline_text(c, 100 * kMillisecond, 10) == text);
}

TEST_CASE("text Gantt of the book's pipeline", "[gantt]") {
  const BookRuns book({"1f1b"});
  for (int width : {60, 100, 200}) {
    const std::string text = pipeline_gantt_text(book.view, *book.sc.pipeline, width);
    CHECK(text == pipeline_gantt_text(book.view, *book.sc.pipeline, width));
    int rows = 0;
    for (const auto& line : lines_of(text)) {
      if (line.rfind("device ", 0) == 0) {
        ++rows;
        CHECK(line.size() == static_cast<std::size_t>(width));
      }
    }
    CHECK(rows == 4);
  }
  // At 200 columns (189 cells of 347/189 ms), stage 3's idle 93..95 ms is one '.' between its
  // 2nd backward (B1) and its 3rd forward (F2).
  const std::string wide = pipeline_gantt_text(book.view, *book.sc.pipeline, 200);
  const auto lines = lines_of(wide);
  const auto row3 =
      std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("device 3", 0) == 0; });
  REQUIRE(row3 != lines.end());
  CHECK(row3->find("bb.F2") != std::string::npos);
}

TEST_CASE("terminal width comes from $COLUMNS, else 100 off a terminal", "[gantt]") {
  const char* saved = std::getenv("COLUMNS");
  const std::string keep = saved ? saved : "";
  setenv("COLUMNS", "123", 1);
  CHECK(terminal_columns() == 123);
  setenv("COLUMNS", "12x", 1);
  const int fallback = terminal_columns();
  unsetenv("COLUMNS");
  CHECK(terminal_columns() == fallback);
  if (saved) setenv("COLUMNS", keep.c_str(), 1);
}

TEST_CASE("CLI: run --html, compare --html, --gantt --width", "[html][cli]") {
  const std::string html_path =
      (std::filesystem::temp_directory_path() / ("stepsim_test_report_" + std::to_string(getpid()) + ".html")).string();
  std::string out;
  REQUIRE(run_cli("run " + kBook + " --html " + html_path, &out) == 0);
  CHECK(out.find("device  busy (ms)") != std::string::npos);  // the table still prints
  const std::string html = read_file(html_path);
  CHECK(markup_problem(html) == "");
  CHECK(count(html, "<rect class=\"bar\"") == 116);
  std::remove(html_path.c_str());

  REQUIRE(run_cli("compare " + kBook + " --schedules 1f1b,zb-h1 --html " + html_path, &out) == 0);
  CHECK(count(read_file(html_path), "<rect class=\"bar\"") == 116 + 148);
  std::remove(html_path.c_str());

  REQUIRE(run_cli("run " + kBook + " --gantt --width 80", &out) == 0);
  CHECK(out.rfind("book-pipeline\nschedule 1f1b", 0) == 0);
  for (const auto& line : lines_of(out))
    if (line.rfind("device", 0) == 0) CHECK(line.size() == 80);
  REQUIRE(run_cli("compare " + kBook + " --schedules fill-drain,1f1b,zb-h1 --gantt --width 120", &out) == 0);
  CHECK(count(out, "device 0 |") == 3);
  CHECK(run_cli("run " + kBook + " --gantt --width 10", &out) == 2);  // bad input
  CHECK(run_cli("run " + kBook + " --width 100", &out) != 0);         // --width needs --gantt
  CHECK(run_cli("run " + kBook + " --gantt --json", &out) != 0);
}
