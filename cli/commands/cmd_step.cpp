// `stepsim run`, `compare`, `export-schedule` and `validate`: the commands on one simulated
// step. They read the scenario, ask the registry (scenario_kinds.hpp) which kind it is, and write
// what the kind's report gives; nothing here depends on the kind.
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/commands/commands.hpp"
#include "cli/commands/diagnostics.hpp"
#include "cli/commands/scenario_kinds.hpp"
#include "cli/input/input.hpp"
#include "cli/input/input_files.hpp"
#include "cli/input/scenario.hpp"
#include "cli/input/search_input.hpp"
#include "cli/reports/output.hpp"
#include "cli/reports/table.hpp"
#include "cli/reports/text_gantt.hpp"
#include "schedules/lowering/search/layout_search.hpp"
#include "schedules/pipeline/action_csv.hpp"
#include "sim/time.hpp"

namespace stepsim::cli {

namespace {

struct ScenarioArgs {
  std::string file;
  std::vector<std::string> sets;
};

// The --set list with `--schedule NAME` (of `run` and `export-schedule`) as one more override: of
// `job_step.layout.schedule` in a job step, else of `pipeline.schedule`.
std::vector<std::string> with_schedule(const std::string& file, std::vector<std::string> sets,
                                       const std::string& schedule) {
  if (schedule.empty()) return sets;
  check_schedule_name("--schedule", schedule);
  const auto src = Source::load(file, sets);
  const YAML::Node& root = src->root;
  if (root["job_step"].IsDefined())
    sets.push_back("job_step.layout.schedule=" + schedule);
  else if (root["pipeline"].IsDefined())
    sets.push_back("pipeline.schedule=" + schedule);
  else
    throw InputError("--schedule", 0, "",
                     fmt::format("{} has no pipeline to schedule (a pipeline or job_step scenario has)", file));
  return sets;
}

// `compare --schedules` on a job step: the step as its base row, then one row per schedule named
// (in place of the file's variants), each the scenario read again with job_step.layout.schedule
// set, so that each is checked as `run --schedule` would be, and allowed not to fit (a row says
// so). As a pipeline's compare does, a schedule that cannot run the step's chunks gets chunks it
// can run: one per device (v = 1), else two (v = 2), named in the row ("1f1b v=1"). A schedule
// that cannot run the step either way, or refused as read, is refused at --schedules.
Scenario with_schedule_variants(const std::string& file, const std::vector<std::string>& sets, Scenario sc,
                                const std::vector<std::string>& schedules) {
  sc.job_step->variants.clear();
  const int base_v = sc.job_step->spec.layout.vpp;
  for (const auto& name : schedules) {  // each a known schedule, named once (checked as read)
    std::vector<std::string> with = sets;
    with.push_back("job_step.layout.schedule=" + name);
    with.emplace_back("job_step.allow_oom=true");
    const auto read = [&](const std::vector<std::string>& s) {
      try {
        return load_scenario(file, s).job_step->spec;
      } catch (const InputError& e) {
        throw InputError("--schedules", 0, "", fmt::format("{}: {}", name, e.message()));
      }
    };
    JobStepVariant row{name, read(with), "--schedules"};
    const std::optional<std::string> problem = schedule_problem(row.spec.layout);
    for (const int v : {1, 2}) {
      if (!schedule_problem(row.spec.layout) || v == base_v) continue;
      std::vector<std::string> tried = with;
      tried.push_back(fmt::format("job_step.layout.virtual_stages={}", v));
      try {
        const JobStepSpec other = load_scenario(file, tried).job_step->spec;
        if (!schedule_problem(other.layout)) row = {fmt::format("{} v={}", name, v), other, "--schedules"};
      } catch (const InputError&) {  // v does not divide the layers: not a chunking this step has
      }
    }
    if (problem && schedule_problem(row.spec.layout))
      throw InputError(
          "--schedules", 0, "",
          fmt::format("{} cannot run this step ({}), with one chunk per device or two either", name, *problem));
    sc.job_step->variants.push_back(std::move(row));
  }
  return sc;
}

void add_scenario_args(CLI::App* cmd, ScenarioArgs& a) {
  cmd->add_option("file", a.file, "scenario YAML file")->required();
  cmd->add_option("--set", a.sets, "override a key, e.g. --set pipeline.microbatches=16 (repeatable)");
}

// --json, --html FILE, --gantt and --width N of `run` and `compare`.
struct OutputArgs {
  bool json = false;
  std::string trace;
  std::string html;
  bool gantt = false;
  int width = 0;  // 0: the terminal's
};

void add_output_args(CLI::App* cmd, OutputArgs& a, const char* json_help) {
  auto* json = cmd->add_flag("--json", a.json, json_help);
  cmd->add_option("--html", a.html, "write a self-contained HTML report (timelines, tables) to this file")
      ->check(file_beside_report());
  auto* gantt = cmd->add_flag("--gantt", a.gantt, "print the timeline as a text Gantt chart instead of the table");
  gantt->excludes(json);
  add_count_option(cmd, "--width", a.width, 1, std::numeric_limits<int>::max(),
                   "columns of the --gantt chart (default: $COLUMNS, the terminal's, or 100)")
      ->needs(gantt);
}

int gantt_width(const OutputArgs& a) {
  if (a.width == 0) return std::max(terminal_columns(), kMinGanttWidth);
  if (a.width < kMinGanttWidth)
    throw InputError("--width", 0, "",
                     fmt::format("{} columns is too narrow; the chart needs at least {}", a.width, kMinGanttWidth));
  // Every row is drawn at the width: 10^8 columns wrote 600 MB and took 1.8 GB.
  if (a.width > kMaxGanttWidth)
    throw InputError("--width", 0, "",
                     fmt::format("{} columns is too wide; the chart takes at most {}", a.width, kMaxGanttWidth));
  return a.width;
}

Scenario load(const std::string& file, const std::vector<std::string>& sets) {
  Scenario sc = load_scenario(file, sets);
  debug("{}: read '{}'", file, sc.name);
  return sc;
}

// The files a run writes are none it has read (the scenario, its model and hardware files) and
// have a folder to go in: checked once the scenario is loaded, before the run.
void check_outputs(const OutputArgs& a) {
  check_output_path("--trace", a.trace);
  check_output_path("--html", a.html);
}

// Files first (trace, HTML), then stdout: JSON, a Gantt chart or the table. A picture too large to
// draw refuses the command before anything is written.
void write_outputs(const KindReport& report, const OutputArgs& a) {
  for (const auto& [asked, option] : {std::pair{!a.html.empty(), "--html"}, std::pair{a.gantt, "--gantt"}})
    if (asked && report.drawn_bars > kMaxDrawnBars)
      throw InputError(option, 0, "",
                       fmt::format("{} bars to draw, past the {} a page or chart draws: write --trace "
                                   "FILE.pftrace (streamed to the file) and open it in ui.perfetto.dev",
                                   comma_grouped(static_cast<std::int64_t>(report.drawn_bars)),
                                   comma_grouped(static_cast<std::int64_t>(kMaxDrawnBars))));
  if (!a.trace.empty()) report.write_trace(a.trace);
  if (!a.html.empty()) write_file(a.html, report.html());
  if (a.json)
    fmt::print("{}", report.json());
  else if (a.gantt)
    fmt::print("{}", report.gantt(gantt_width(a)));
  else
    fmt::print("{}", report.text());
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<ScenarioArgs>();
  auto schedule = std::make_shared<std::string>();
  auto out = std::make_shared<OutputArgs>();
  auto* cmd = app.add_subcommand("run", "simulate one step of a scenario and print its table");
  add_scenario_args(cmd, *args);
  cmd->add_option("--schedule", *schedule, "schedule to run (overrides pipeline.schedule or job_step.layout.schedule)");
  cmd->add_option("--trace", out->trace,
                  "write a trace to this file: Perfetto protobuf if it ends in .pftrace, else Chrome JSON (both open "
                  "in ui.perfetto.dev)")
      ->check(file_beside_report());
  add_output_args(cmd, *out, "print a JSON summary instead of the table");
  cmd->callback([=] {
    const auto sets = with_schedule(args->file, args->sets, *schedule);
    const Scenario sc = load(args->file, sets);
    check_outputs(*out);
    const ScenarioKind& kind = step_kind(sc, "run");
    debug("{}: a '{}' scenario", sc.file, kind.section);
    const RunRequest req{!out->trace.empty() || !out->html.empty()};
    sc.blaming(kind.section, [&] { write_outputs(kind.run(sc, req), *out); });
  });
}

void add_compare_command(CLI::App& app) {
  auto args = std::make_shared<ScenarioArgs>();
  auto request = std::make_shared<CompareRequest>();
  auto out = std::make_shared<OutputArgs>();
  auto* cmd = app.add_subcommand("compare", "simulate the scenario under several schedules or variants, one row each");
  add_scenario_args(cmd, *args);
  add_list_option(cmd, "--schedules", request->schedules,
                  "comma-separated schedules (default: every one that can run it)");
  add_jobs_option(cmd, request->jobs,
                  "threads for a pipeline's schedules (default: every core); results do not depend on it");
  cmd->add_option("--trace", out->trace,
                  "write every row's trace to this file, a process group per schedule or variant on one time axis "
                  "(Perfetto protobuf if it ends in .pftrace, else Chrome JSON)")
      ->check(file_beside_report());
  add_output_args(cmd, *out, "print a JSON list of summaries instead of the table");
  cmd->callback([=] {
    std::vector<std::string> seen;  // each schedule once (a pipeline's compare printed a row per mention)
    for (const auto& name : request->schedules) {
      check_schedule_name("--schedules", name);
      const std::string canonical = find_schedule(name)->name;
      if (std::find(seen.begin(), seen.end(), canonical) != seen.end())
        throw InputError("--schedules", 0, "", fmt::format("{} named twice", canonical));
      seen.push_back(canonical);
    }
    request->json = out->json;
    Scenario sc = load(args->file, args->sets);
    check_outputs(*out);
    const ScenarioKind& kind = step_kind(sc, "compare");
    if (!request->schedules.empty() && kind.section == "job_step")
      sc = with_schedule_variants(args->file, args->sets, std::move(sc), request->schedules);
    else if (!request->schedules.empty() && kind.section != "pipeline")
      throw InputError("--schedules", 0, "",
                       fmt::format("a '{}' scenario compares its variants, not schedules", kind.section));
    debug("{}: a '{}' scenario", sc.file, kind.section);
    sc.blaming(kind.section, [&] { write_outputs(kind.compare(sc, *request), *out); });
  });
}

void add_export_schedule_command(CLI::App& app) {
  auto args = std::make_shared<ScenarioArgs>();
  auto schedule = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>("-");
  auto* cmd = app.add_subcommand("export-schedule",
                                 "write the scenario's schedule as CSV in PyTorch's notation (one row per device)");
  add_scenario_args(cmd, *args);
  cmd->add_option("--schedule", *schedule, "schedule to export (overrides pipeline.schedule)");
  cmd->add_option("-o,--output", *out, "CSV file to write ('-' = stdout, the default)")->check(file_name());
  cmd->callback([=] {
    const auto sets = with_schedule(args->file, args->sets, *schedule);
    const Scenario sc = load(args->file, sets);
    require_section(sc, "export-schedule", "pipeline");
    check_output_path("--output", *out);
    PipelinePlan plan;
    try {
      plan = plan_for(*sc.pipeline);
    } catch (const SpecError& e) { sc.fail(e.key(), e.what()); }
    write_file(*out, format_actions_csv(plan.actions));
  });
}

void add_validate_command(CLI::App& app) {
  auto args = std::make_shared<ScenarioArgs>();
  auto* cmd = app.add_subcommand("validate", "check a scenario file (and that its schedule runs) without output");
  add_scenario_args(cmd, *args);
  cmd->callback([=] {
    Scenario sc;
    try {
      sc = load(args->file, args->sets);
    } catch (const InputError& e) {
      if (e.key() != "search") throw;
      load_search(args->file, args->sets);  // a layout search: read whole (its errors at file, line and key)
      fmt::print("{}: ok\n", args->file);
      return;
    }
    for (const auto& kind : scenario_kinds())
      if (kind.validate && kind.present(sc)) {
        debug("{}: checking the '{}' section", sc.file, kind.section);
        sc.blaming(kind.section, [&] { kind.validate(sc); });
      }
    fmt::print("{}: ok\n", sc.file);
  });
}

}  // namespace stepsim::cli
