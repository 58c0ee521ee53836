#pragma once
// The registry of scenario kinds, as schedules/pipeline/registry.hpp registers schedule families.
// A kind is named by the YAML section that makes a scenario of it (pipeline, data_parallel, rl,
// moe, job, plan) and says, for the commands:
//  * which command takes it (`run`, `compare`, `validate` for step kinds; `job`, `plan` for the
//    others), so that a command given the wrong kind names the right one;
//  * how it is checked beyond reading (validate), run and compared;
//  * how a run is reported and drawn: KindReport gives the table, the JSON document, the Chrome
//    trace, the HTML page and the text Gantt chart.
// Reading is cli/input's (load_scenario reads every section); the commands loop over this
// registry and never test the sections one by one. A new kind adds one entry in
// scenario_kinds.cpp (and its kind_<name>.cpp).
#include <functional>
#include <string>
#include <vector>

#include "cli/input/scenario.hpp"

namespace stepsim::cli {

// The outputs of one `run` or `compare`, each made only when asked for.
struct KindReport {
  std::function<std::string()> text;                         // the table as printed (scenario name first)
  std::function<std::string()> json;                         // the --json document, newline included
  std::function<void(const std::string& path)> write_trace;  // Chrome trace to a file (`run --trace`)
  std::function<std::string()> html;                         // `--html` page
  std::function<std::string(int)> gantt;                     // `--gantt` chart, this many columns wide
  // Bars the HTML page and the Gantt chart draw: an op each (every row's, for compare), an RL
  // trajectory's stretch per policy version.
  std::size_t drawn_bars = 0;
};

// An HTML page or a Gantt chart draws a bar an op: past this many, a browser would not open the
// page (about 1 KB of SVG a bar) and the chart would take gigabytes to build. A trace, streamed to its
// file, is the way to look at a larger step.
inline constexpr std::size_t kMaxDrawnBars = 200'000;

// What `run` may be told besides the file.
struct RunRequest {
  bool timelines = false;  // --trace or --html: keep what they draw over time while measuring
};

// What `compare` may be told besides the file.
struct CompareRequest {
  std::vector<std::string> schedules;  // pipeline: --schedules (empty: every one that runs)
  bool json = false;                   // --json: no progress line
  unsigned jobs = 0;                   // -j: threads for the pipeline's schedules (0: every core)
};

struct ScenarioKind {
  std::string section;  // YAML section, also the kind's name
  std::string command;  // the command that takes it: "run" (and compare, validate), "job", "plan"
  std::string what;     // a few words for the overview and messages: "one pipeline-parallel step"
  std::function<bool(const Scenario&)> present;
  // Step kinds (command "run"); empty for kinds with a command of their own.
  std::function<KindReport(const Scenario&, const RunRequest&)> run;
  std::function<KindReport(const Scenario&, const CompareRequest&)> compare;
  // Simulates what `run` and `compare` would (variants included) and fails like them; empty:
  // reading the section is the whole check.
  std::function<void(const Scenario&)> validate;
};

// In the order `run` picks a kind when a file holds several sections.
const std::vector<ScenarioKind>& scenario_kinds();

// The step kind `command` (run, compare) simulates for this scenario. A scenario without one
// fails at its first section, naming the command that takes it ("... use `stepsim job FILE`").
const ScenarioKind& step_kind(const Scenario& sc, const std::string& command);

// `command` needs `section` (export-schedule: pipeline; job; plan): fails naming the command
// that takes the scenario's kind instead.
void require_section(const Scenario& sc, const std::string& command, const std::string& section);

// A schedule name typed after `option` (--schedule, --schedules): an InputError with a
// did-you-mean unless it is a known schedule or 'custom'.
void check_schedule_name(const std::string& option, const std::string& name);

// `--case NAME`: an InputError listing the cases (with a did-you-mean) unless `name` is one.
void check_case_name(const std::string& name, const std::vector<std::string>& cases);

// The kinds' entries (kind_*.cpp).
ScenarioKind pipeline_kind();
ScenarioKind data_parallel_kind();
ScenarioKind rl_kind();
ScenarioKind moe_kind();
ScenarioKind job_step_kind();

}  // namespace stepsim::cli
