// Schedules as CSV in PyTorch's torch.distributed.pipelining notation: export, import, round
// trips for every schedule, and hand-written schedules checked like any other.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <unistd.h>

#include "book_pipeline.hpp"
#include "cli/input/scenario.hpp"
#include "schedules/lowering/pipeline/pipeline_spec.hpp"
#include "schedules/pipeline/action_csv.hpp"
#include "schedules/pipeline/csv_records.hpp"

using namespace stepsim;

namespace {
PipelineSpec book(const std::string& schedule) { return test::book_pipeline(schedule); }

std::string error_of(const std::string& text, const std::string& name = "s.yaml") {
  try {
    cli::parse_scenario(text, name);
  } catch (const cli::InputError& e) { return e.what(); }
  return "";
}

// A scratch directory under the build tree's temp area, removed afterwards.
struct TempDir {
  std::filesystem::path path;
  TempDir() : path(std::filesystem::temp_directory_path() / ("stepsim_csv_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
    return (path / name).string();
  }
};
}  // namespace

TEST_CASE("CSV cells are PyTorch's str(_Action)", "[schedules][csv]") {
  CHECK(format_action_pytorch({ActionKind::Forward, 0, 3}) == "0F3");
  CHECK(format_action_pytorch({ActionKind::BackwardInput, 1, 3}) == "1I3");
  CHECK(format_action_pytorch({ActionKind::BackwardWeight, 1, 3}) == "1W3");
  CHECK(format_action_pytorch({ActionKind::Backward, 2, 0}) == "2B0");
  CHECK(format_action_pytorch({ActionKind::OverlapFB, 0, 3, 5, 1, ActionKind::Backward}) == "(0F3;5B1)OVERLAP_F_B");
  // One row per rank, comma-separated, rows ended like Python's csv.writer.
  CHECK(format_actions_csv({{{ActionKind::Forward, 0, 0}, {ActionKind::Backward, 0, 0}},
                            {{ActionKind::Forward, 1, 0}}}) == "0F0,0B0\r\n1F0\r\n");
  // Our own notation for a pair reads back too, as does PyTorch's.
  std::string err;
  CHECK(parse_action("0F3+5B1", &err) == parse_action("(0F3;5B1)OVERLAP_F_B", &err));
  CHECK_FALSE(parse_action("(0F3)OVERLAP_F_B", &err));
  CHECK(err.find("names two actions") != std::string::npos);
}

TEST_CASE("an action's stage is 16 bits: the largest is kMaxPipelineStages - 1", "[schedules][csv]") {
  std::string err;
  const auto last = parse_action("32766F7+32765B3", &err);
  REQUIRE(last);
  CHECK(last->stage == 32766);
  CHECK(last->stage2 == 32765);
  CHECK(last->micro2 == 3);
  CHECK(format_action(*last) == "32766F7+32765B3");
  CHECK_FALSE(parse_action("32767F0", &err));
  CHECK(err == "'32767F0': stage 32767 is too large (at most 32766)");
  CHECK_THROWS_AS(Action(ActionKind::Forward, kMaxPipelineStages, 0), std::length_error);
  CHECK_THROWS_WITH(Action(ActionKind::OverlapFB, 0, 0, 40000, 0),
                    "virtual stage 40000: a pipeline has at most 32767 virtual stages");
  static_assert(sizeof(Action) == 16);
}

TEST_CASE("CSV import: idle cells, comm actions, quoting, errors by row and column", "[schedules][csv]") {
  // Empty cells (None in PyTorch) are idle slots; compute_comms actions are derived by stepsim.
  const auto rows = parse_actions_csv("0F0,,0SEND_F0,0B0,0UNSHARD\n1RECV_F0, 1F0 ,\"1B0\",0REDUCE_GRAD\n\n");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0] == std::vector<Action>{{ActionKind::Forward, 0, 0}, {ActionKind::Backward, 0, 0}});
  CHECK(rows[1] == std::vector<Action>{{ActionKind::Forward, 1, 0}, {ActionKind::Backward, 1, 0}});
  try {
    parse_actions_csv("0F0,0B0\n1F0,1X0\n");
    FAIL("expected an error");
  } catch (const ActionCsvError& e) {
    CHECK(e.row() == 2);
    CHECK(e.column() == 2);
    CHECK(std::string(e.what()) == "row 2, column 2: '1X0': unknown op letter 'X' (expected F, B, I or W)");
  }
  CHECK_THROWS_WITH(parse_actions_csv("0F0,\"0B0\n"), Catch::Contains("unterminated quoted cell"));
  // A blank line between rows would be a device with nothing; blank lines at the end are none.
  CHECK_THROWS_WITH(parse_actions_csv("0F0,0B0\n\r\n1F0,1B0\n"),
                    "row 2, column 1: a blank line: each row lists one device's actions");
  CHECK(parse_actions_csv("0F0,0B0\n1F0,1B0\n\n\r\n").size() == 2);
}

namespace {
// Every record of `text`: its line, then its cells joined by '|'.
std::vector<std::string> records_of(std::string_view text, char comment = '\0') {
  std::vector<std::string> out;
  CsvReader in(text, comment);
  for (CsvRecord r; in.next(r);) {
    std::string joined = std::to_string(r.line) + ":";
    for (std::size_t i = 0; i < r.cells.size(); ++i) joined += (i ? "|" : "") + r.cells[i];
    if (r.open_quote_line > 0) joined += " (open since line " + std::to_string(r.open_quote_line) + ")";
    out.push_back(joined);
  }
  return out;
}
}  // namespace

TEST_CASE("CSV records: quoted commas, line ends and quotes, CRLF, comments", "[csv]") {
  using V = std::vector<std::string>;
  CHECK(records_of("a,\"b,c\",d\n") == V{"1:a|b,c|d"});
  // "" in a quoted cell is one quote; a quoted cell may span lines, and the record keeps the line
  // it starts on while the next record's is counted past it.
  CHECK(records_of("x,\"say \"\"hi\"\"\",\"\"\ny,\"two\nlines, \"\"3\"\"\",z\nw\n") ==
        V{"1:x|say \"hi\"|", "2:y|two\nlines, \"3\"|z", "4:w"});
  // CRLF line ends, inside a quoted cell too (read as LF), and a last line without one.
  CHECK(records_of("a,b\r\n\"c\r\nd\",e\r\nf\r") == V{"1:a|b", "2:c\nd|e", "4:f"});
  // A blank line is one empty cell; a comment line is skipped whole, a quote in it unread, but
  // not inside a quoted cell.
  CHECK(records_of("# a \"quote\nh,\"v\n# not a comment\"\n\r\nz\n", '#') == V{"2:h|v\n# not a comment", "4:", "5:z"});
  // A quote left open runs to the end of the text: the last record says where it opened.
  CHECK(records_of("a,\"b\nc\",\"d\ne\nf") == V{"1:a|b\nc|d\ne\nf (open since line 2)"});
  CHECK(records_of("\xEF\xBB\xBFk,v\n") == V{"1:k|v"});
  // A quote inside a cell that does not start with one, or after a closing quote, is a plain
  // character, marked for the readers to refuse (it opened a part that ran over the rows after).
  for (const auto& [text, cell, line] : std::vector<std::tuple<std::string, int, int>>{
           {"a,12\" disk\nb,5\" disk\n", 1, 1}, {"a,\"3\"2\n", 1, 1}, {"x\ny, \"q\"\n", 1, 2}}) {
    CsvReader st(text);
    CsvRecord rec;
    while (st.next(rec) && rec.stray_quote_cell < 0) {}
    INFO(text);
    CHECK(rec.stray_quote_cell == cell);
    CHECK(rec.stray_quote_line == line);
  }
  CHECK(records_of("a,12\" disk\nb,5\" disk\n") == V{"1:a|12\" disk", "2:b|5\" disk"});
  CHECK_THROWS_WITH(parse_actions_csv("0F0,0\"B0\n"), Catch::Contains("row 1, column 2: a quote inside a cell"));
  CsvReader in("a\n\"b\"\r\nc");
  CsvRecord r;
  REQUIRE(in.next(r));
  REQUIRE(in.next(r));
  CHECK(r.text == "\"b\"");  // as written, without the line end
  REQUIRE(in.next(r));
  CHECK_FALSE(in.next(r));
  CHECK(in.lines() == 3);
}

TEST_CASE("every schedule survives export and import unchanged", "[schedules][csv]") {
  for (const auto& family : schedule_families()) {
    INFO(family.name);
    const PipelineSpec named = book(family.name);
    const auto original = simulate_pipeline(named);
    PipelineSpec custom = named;
    custom.schedule = "custom";
    const PipelinePlan order = plan_for(named);
    custom.custom_actions = parse_actions_csv(format_actions_csv(order.actions));
    const auto imported = simulate_pipeline(custom);
    CHECK(plan_for(custom).actions == order.actions);
    // Placement read back from the lists: DualPipe's two mirrored routes included.
    CHECK(imported.plan.routes.size() == original.plan.routes.size());
    for (int s = 0; s < original.plan.stages; ++s)
      for (int i = 0; i < original.plan.microbatches; ++i)
        CHECK(imported.plan.device_of(s, i) == original.plan.device_of(s, i));
    CHECK(imported.stats.step_time == original.stats.step_time);
    CHECK(imported.timeline.start == original.timeline.start);
  }
}

TEST_CASE("pipeline.actions_csv reads a schedule relative to the scenario file", "[schedules][csv][scenario]") {
  TempDir dir;
  dir.write("order.csv", format_actions_csv(plan_for(book("zb-h1")).actions));
  const std::string scenario = dir.write("s.yaml", R"(pipeline:
  stages: 4
  microbatches: 8
  actions_csv: order.csv
  time: {forward: 10ms, backward: 20ms, backward_input: 10ms, backward_weight: 10ms, update: 1ms}
  link: {latency: 1ms}
)");
  const auto sc = cli::load_scenario(scenario);
  REQUIRE(sc.pipeline);
  CHECK(sc.pipeline->schedule == "custom");
  CHECK(simulate_pipeline(*sc.pipeline).stats.step_time == 283 * kMillisecond);  // the book's ZB-H1

  // A bad cell is reported against the scenario key, with the CSV's row and column.
  dir.write("bad.csv", "0F0,0B0\n1F0,1Q0\n");
  const std::string bad = dir.write("bad.yaml", R"(pipeline:
  stages: 2
  microbatches: 1
  actions_csv: bad.csv
  time: {forward: 1ms, backward: 2ms}
)");
  try {
    cli::load_scenario(bad);
    FAIL("expected an InputError");
  } catch (const cli::InputError& e) {
    CHECK(e.line() == 4);
    CHECK(e.key() == "pipeline.actions_csv");
    CHECK(e.message().find("bad.csv: row 2, column 2: '1Q0': unknown op letter 'Q'") != std::string::npos);
  }
  const std::string missing = dir.write("missing.yaml", R"(pipeline:
  stages: 2
  microbatches: 1
  actions_csv: nowhere.csv
  time: {forward: 1ms, backward: 2ms}
)");
  CHECK_THROWS_WITH(cli::load_scenario(missing),
                    Catch::Contains("nowhere.csv': cannot open the file (no such file or directory)"));
  CHECK(error_of("pipeline: {stages: 1, microbatches: 1, actions: [\"0F0 0B0\"], actions_csv: x.csv, time: {forward: "
                 "1ms, backward: 1ms}}")
            .find("give either actions or actions_csv") != std::string::npos);
}

TEST_CASE("hand-written schedules: missing, duplicate, mixed and deadlocking orders are named",
          "[schedules][csv][custom]") {
  PipelineSpec s;
  s.stages = 2;
  s.microbatches = 2;
  s.schedule = "custom";
  s.forward.assign(2, kMillisecond);
  s.backward.assign(2, 2 * kMillisecond);
  s.backward_input.assign(2, kMillisecond);
  s.backward_weight.assign(2, kMillisecond);
  s.update.assign(2, 0);
  const auto problems_of = [&](const std::string& csv) -> std::string {
    s.custom_actions = parse_actions_csv(csv);
    try {
      simulate_pipeline(s);
    } catch (const SpecError& e) { return e.what(); }
    return "";
  };
  CHECK(problems_of("0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n").empty());
  CHECK(problems_of("0F0,0F1,0B0\n1F0,1B0,1F1,1B1\n").find("0B1 is missing (device 0)") != std::string::npos);
  CHECK(
      problems_of("0F0,0F1,0B0,0B1,0F1\n1F0,1B0,1F1,1B1\n").find("device 0: 0F1 is listed twice (also on device 0)") !=
      std::string::npos);
  // A hostile list repeating one action 100,000 times: every repeat is named, in one pass.
  {
    std::string csv = "0F0,0F1,0B0,0B1";
    for (int i = 0; i < 100'000; ++i) csv += ",0F1";
    const std::string why = problems_of(csv + "\n1F0,1B0,1F1,1B1\n");
    CHECK(why.find("device 0: 0F1 is listed twice (also on device 0)") != std::string::npos);
  }
  // A backward either full or split, per (stage, micro-batch); both at once is an error.
  CHECK(problems_of("0F0,0F1,0B0,0I1,0W1\n1F0,1B0,1F1,1I1,1W1\n").empty());
  CHECK(problems_of("0F0,0F1,0B0,0B1,0I1,0W1\n1F0,1B0,1F1,1B1\n").find("0B1 is both a full backward and split") !=
        std::string::npos);
  CHECK(problems_of("0F0,0F1,0B0,0I1\n1F0,1B0,1F1,1B1\n").find("0W1 is missing (device 0)") != std::string::npos);
  // A deadlock names the stuck ops, in the same notation.
  s.custom_actions = parse_actions_csv("0F0,0B0,0F1,0B1\n1F1,1B1,1F0,1B0\n");
  try {
    simulate_pipeline(s);
    FAIL("expected a deadlock");
  } catch (const DeadlockError& e) {
    CHECK(std::string(e.what()).find("d1 compute stuck at 1F1 waiting on send 0F1 d0->d1") != std::string::npos);
  }
}

TEST_CASE("hand-written V placement and mirrored routes are read from the lists", "[schedules][csv][custom]") {
  // PyTorch's V-shaped placement (ZBV, DualPipeV): stage 3 on rank 0, stage 2 on rank 1.
  PipelineSpec s = book("1f1b");
  s.stages = 2;
  s.microbatches = 1;
  s.schedule = "custom";
  for (auto* v : {&s.forward, &s.backward, &s.backward_input, &s.backward_weight, &s.update}) v->resize(2);
  s.activation.resize(2);
  s.custom_actions = parse_actions_csv("0F0,3F0,3B0,0B0\n1F0,2F0,2B0,1B0\n");
  const auto run = simulate_pipeline(s);
  CHECK(run.plan.routes == std::vector<std::vector<int>>{{0, 1, 1, 0}});
  // Messages: 0->1 (d0->d1), 1->2 (same device), 2->3 (d1->d0): 2 forward, 2 backward.
  CHECK(run.stats.forward_messages == 2);
  CHECK(run.stats.backward_messages == 2);
  // An explicit virtual_stages must agree with the stages named.
  s.virtual_stages = 3;
  CHECK_THROWS_WITH(simulate_pipeline(s),
                    Catch::Contains("the custom actions name 4 stages, but stages x virtual_stages = 2 x 3"));
}
