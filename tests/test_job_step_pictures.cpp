// The job_step HTML report and text Gantt chart (cli/reports/job_step_pictures.hpp): one bar per
// op of the simulated step, the tracks and legend named, the memory split as `--json` gives it,
// the exposed-communication and critical-path tables, the long-context and resharding sections.
#include <catch2/catch.hpp>

#include <cstdio>

#include <fmt/format.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "cli/input/scenario.hpp"
#include "cli/reports/job_step_pictures.hpp"
#include "tests/html_checks.hpp"
#include "tests/test_files.hpp"

using namespace stepsim;
using namespace stepsim::cli;
using namespace stepsim::test;

namespace {

JobStepRun run_scenario(const std::string& name) {
  const Scenario sc = load_scenario(scenario_path(name));
  REQUIRE(sc.job_step.has_value());
  return run_job_step(sc.job_step->spec);
}

std::size_t bars(const TimelineChart& c) {
  std::size_t n = 0;
  for (const auto& t : c.tracks) n += t.bars.size();
  return n;
}

// The page `stepsim COMMAND SCENARIO --html FILE` writes, read back from a temporary directory.
std::string html_page(const std::string& command, const std::string& scenario) {
  char dir[] = "/tmp/stepsim-jobstep-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/page.html";
  std::string out;
  REQUIRE(run_cli(command + " " + scenario_path(scenario) + " --html " + path, &out) == 0);
  const std::string html = read_file(path);
  std::remove(path.c_str());
  rmdir(dir);
  return html;
}

std::string gib2(double bytes) { return fmt::format("{:.2f}", bytes / (1024.0 * 1024 * 1024)); }

}  // namespace

TEST_CASE("job_step timeline: one bar per op, tracks grouped by device", "[job_step][html]") {
  const JobStepRun run = run_scenario("job-llama70b-64xh100.yaml");
  const TimelineChart c = job_step_timeline(run);
  // pp 4 x v 5 x m 64: per device 640 passes + its optimizer, a TP collective after each pass,
  // 2 x 64 x 19 stage-boundary messages, per device 5 x 2 gradient reductions and one gather.
  CHECK(bars(c) == 4 * 641 + 4 * 640 + 2 * 64 * 19 + 4 * 11);
  CHECK(bars(c) == static_cast<std::size_t>(run.result.ops));
  REQUIRE(c.tracks.size() >= 12);
  CHECK(c.tracks[0].label == "device 0");
  CHECK_FALSE(c.tracks[0].minor);
  CHECK(c.tracks[0].show_idle);
  CHECK(c.tracks[1].label == "d0 TP/CP/EP");
  CHECK(c.tracks[2].label == "d0 DP/ZeRO");
  CHECK(c.tracks[3].label == "d0 \u2192 d1");
  CHECK(c.tracks[3].minor);
  CHECK(c.end == run.result.step_time);
  // Every compute bar carries its micro-batch; the first one is micro-batch 0's forward.
  CHECK(c.tracks[0].bars.front().label == "0");
  CHECK(c.legend[static_cast<std::size_t>(c.tracks[0].bars.front().swatch)].label == "forward");
}

TEST_CASE("job_step timeline of ZeRO-3: the card's ops and the optimizer after the graph", "[job_step][html]") {
  const JobStepRun run = run_scenario("job-fsdp-8.yaml");
  const TimelineChart c = job_step_timeline(run);
  CHECK(c.end == run.result.step_time);
  REQUIRE(!c.tracks.empty());
  const TimeBar& last = c.tracks.front().bars.back();
  CHECK(c.legend[static_cast<std::size_t>(last.swatch)].label == "optimizer");
  CHECK(last.end == run.result.step_time);
}

TEST_CASE("job_step --html: timeline, memory split as --json gives it, exposed and critical tables",
          "[job_step][html]") {
  const std::string html = html_page("run", "job-llama70b-64xh100.yaml");
  std::string out;
  REQUIRE(run_cli("run " + scenario_path("job-llama70b-64xh100.yaml") + " --json", &out) == 0);
  const auto j = nlohmann::json::parse(out);
  CHECK(markup_problem(html).empty());
  // The full timeline and two zoomed views; the full one holds every op.
  CHECK(count(html, "<h2 id=\"timeline\">") == 1);
  CHECK(html.find("7600 bars on 20 tracks") != std::string::npos);  // 4 x 3 streams + 8 links
  CHECK(count(html, "<svg") >= 4);
  for (const char* label : {">device 3<", ">d3 TP/CP/EP<", ">d2 DP/ZeRO<", "TP collective", "PP send"})
    CHECK(html.find(label) != std::string::npos);
  // Memory: the stacked parts carry the JSON's figures.
  const auto& m = j["memory_bytes"];
  const std::string total = gib2(m["total"].get<double>());
  for (const char* part : {"weights", "gradients", "activations"}) {
    const std::string key = std::string(part) == "activations" ? "activations (peak)" : part;
    const std::string want = fmt::format("{}: {} GiB of {} GiB", key, gib2(m[std::string(part)].get<double>()), total);
    CHECK(html.find(want) != std::string::npos);
  }
  CHECK(html.find(fmt::format("optimizer state: {} GiB", gib2(m["optimizer"].get<double>()))) != std::string::npos);
  CHECK(html.find(fmt::format("usable {} GiB", gib2(m["capacity"].get<double>()))) != std::string::npos);
  // Exposed communication by kind and what limits the step.
  const auto exposed = [](double ns) {
    return ns >= 1e9 ? fmt::format("{:.3f} s", ns / 1e9) : fmt::format("{:.2f} ms", ns / 1e6);
  };
  CHECK(html.find("<th>share of the step</th>") != std::string::npos);
  CHECK(html.find(fmt::format("<tr><td>DP/ZeRO</td><td class=\"num\">{}</td>",
                              exposed(j["exposed_ns"]["dp"].get<double>()))) != std::string::npos);
  CHECK(html.find(fmt::format("<tr><td>TP</td><td class=\"num\">{}</td>",
                              exposed(j["exposed_ns"]["tp"].get<double>()))) != std::string::npos);
  CHECK(html.find("<h2 id=\"critical\">What limits the step</h2>") != std::string::npos);
  CHECK(html.find("intra-pass collectives (TP/CP/EP links)") != std::string::npos);
}

namespace {
// The page of `scenario` holds `line` (its start) between the memory's heading and the exposed
// communication's, and `rest` (its end) too; a step that does not offload has no `words`.
void check_host_line(const char* scenario, const std::string& line, const std::string& rest, const char* words) {
  const std::string html = html_page("run", scenario);
  CHECK(markup_problem(html).empty());
  const auto host = html.find(line);
  REQUIRE(host != std::string::npos);
  CHECK(host > html.find("<h2 id=\"memory\">"));
  CHECK(host < html.find("<h2 id=\"exposed\">"));
  CHECK(html.find(rest) != std::string::npos);
  CHECK(html_page("run", "job-fsdp-8.yaml").find(words) == std::string::npos);
}
}  // namespace

TEST_CASE("job_step --html: the optimizer on the host in words under the memory", "[job_step][html][offload]") {
  check_host_line("job-offload-8x4090.yaml", "optimizer on the host: 15.26 GiB a GPU, 122.1 of 512.0 GiB a node;",
                  "BF16 weights up 0.080 s: 1.047 s a step", "optimizer on the host");
}

TEST_CASE("job_step --html: the activations on the host in words under the memory",
          "[job_step][html][offload_activations]") {
  check_host_line("job-offload-activations-8xh100.yaml",
                  "activations on the host: the first 22 of 32 layers, 46.75 GiB a GPU, 374.0 of 1862.6 GiB",
                  "the compute waiting 0.323 s in its forward and 0.002 s in its backward: 2.601 s a step",
                  "activations on the host");
}

TEST_CASE("job_step --gantt: one row per track, the legend", "[job_step][html]") {
  std::string out;
  REQUIRE(run_cli("run " + scenario_path("job-fsdp-8.yaml") + " --gantt --width 80", &out) == 0);
  CHECK(out.find("job-fsdp-8\n") == 0);
  CHECK(out.find("card 0") != std::string::npos);
  CHECK(out.find("F forward") != std::string::npos);
  CHECK(out.find("U optimizer") != std::string::npos);
}

TEST_CASE("job_step compare --html: the variants' table and what limits each after the base's summary",
          "[job_step][html]") {
  const std::string html = html_page("compare", "job-moe-routing-256xh100.yaml");
  CHECK(markup_problem(html).empty());
  CHECK(count(html, "<h2 id=\"variants\">Variants</h2>") == 1);
  CHECK(html.find("<h2 id=\"summary\">") < html.find("<h2 id=\"variants\">"));
  for (const char* row :
       {"<tr><td>base</td><td class=\"num\">12.863 s</td>", "<tr><td>round-robin</td><td class=\"num\">10.080 s</td>",
        "<tr><td>capacity-1.25</td><td class=\"num\">11.431 s</td>", "181.7 / 74.5"})
    CHECK(html.find(row) != std::string::npos);
  // What limits each: the critical path's shares per kind, a column per kind any row names. TP 4
  // with the experts split 4 ways is bound by its expert collectives (67.5 %: the EP exchange
  // across 4 nodes, the copies gathered among expert TP), folded to expert TP 1 by its compute again.
  const auto limits = html.find("What limits each");
  REQUIRE(limits != std::string::npos);
  CHECK(limits < html.find("<h2 id=\"timeline\">"));
  for (const char* row : {"<tr><th>variant</th><th>backward</th><th>TP/CP/EP collectives</th><th>forward</th>",
                          "<tr><td>base</td><td class=\"num\">56.5%</td><td class=\"num\">21.1%</td>",
                          "<tr><td>tp4</td><td class=\"num\">23.9%</td><td class=\"num\">67.5%</td>",
                          "<tr><td>tp4-expert-tp1</td><td class=\"num\">50.9%</td><td class=\"num\">24.0%</td>"})
    CHECK(html.find(row, limits) != std::string::npos);
  // The timeline below is the base's: its 368 ops.
  CHECK(html.find("368 bars on") != std::string::npos);
}
