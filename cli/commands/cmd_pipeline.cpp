// `stepsim run`, `stepsim compare`, `stepsim export-schedule` and `stepsim validate` for pipeline
// scenarios.
#include <fmt/format.h>
#include <memory>

#include "cli/commands/cmd_data_parallel.hpp"
#include "cli/commands/cmd_moe.hpp"
#include "cli/commands/job_step_commands.hpp"
#include "cli/commands/commands.hpp"
#include "cli/reports/output.hpp"
#include "cli/reports/pipeline_pictures.hpp"
#include "cli/reports/pipeline_report.hpp"
#include "cli/input/scenario.hpp"
#include "cli/reports/text_gantt.hpp"
#include "schedules/pipeline/action_csv.hpp"

namespace stepsim::cli {

namespace {

struct ScenarioArgs {
  std::string file;
  std::vector<std::string> sets;
};

void add_scenario_args(CLI::App* cmd, ScenarioArgs& a) {
  cmd->add_option("file", a.file, "scenario YAML file")->required();
  cmd->add_option("--set", a.sets, "override a key, e.g. --set pipeline.microbatches=16 (repeatable)");
}

// Runs the spec; spec errors are reported against the scenario file.
PipelineRun simulate_or_fail(const Scenario& sc, const PipelineSpec& spec) {
  try {
    return simulate_pipeline(spec);
  } catch (const SpecError& e) {
    sc.fail(e.key(), e.what());
  }
}

const PipelineSpec& pipeline_of(const Scenario& sc) {
  if (!sc.pipeline) sc.fail("pipeline", "this command needs a 'pipeline' section");
  return *sc.pipeline;
}

// --html FILE, --gantt and --width N of `run` and `compare` (cli/pipeline_pictures.hpp,
// cli/data_parallel_pictures.hpp).
struct PictureArgs {
  std::string html;
  bool gantt = false;
  int width = 0;  // 0: the terminal's
};

void add_picture_args(CLI::App* cmd, PictureArgs& a, CLI::Option* json) {
  cmd->add_option("--html", a.html, "write a self-contained HTML report (timelines, memory, tables) to this file");
  auto* gantt = cmd->add_flag("--gantt", a.gantt, "print the timeline as a text Gantt chart instead of the table");
  gantt->excludes(json);
  cmd->add_option("--width", a.width, "columns of the --gantt chart (default: $COLUMNS, the terminal's, or 100)")
      ->needs(gantt);
}

// The pictures exist for pipeline and data_parallel runs; say so rather than ignore the options.
void pictures_need_timeline(const Scenario& sc, const PictureArgs& a) {
  if ((sc.rl || sc.moe || sc.job_step) && (!a.html.empty() || a.gantt))
    throw InputError(!a.html.empty() ? "--html" : "--gantt", 0, "",
                     fmt::format("HTML reports and text Gantt charts are available for pipeline and data_parallel "
                                 "scenarios, not yet for {} ones (use --trace for a timeline)", sc.rl ? "rl" : sc.moe ? "moe" : "job_step"));
}

int gantt_width(const PictureArgs& a) {
  if (a.width == 0) return std::max(terminal_columns(), kMinGanttWidth);
  if (a.width < kMinGanttWidth)
    throw InputError("--width", 0, "", fmt::format("{} columns is too narrow; the chart needs at least {}", a.width, kMinGanttWidth));
  return a.width;
}

// The scenario's spec under another schedule. `virtual_stages` is a parameter of the schedules
// that take it (interleaved-1f1b); the others keep their own placement in a comparison.
PipelineSpec spec_for_schedule(const PipelineSpec& base, const std::string& name) {
  PipelineSpec spec = base;
  spec.schedule = name;
  const ScheduleFamily* family = find_schedule(name);
  if (family && !family->takes_virtual_stages) spec.virtual_stages = 0;
  return spec;
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<ScenarioArgs>();
  auto schedule = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto trace = std::make_shared<std::string>();
  auto pictures = std::make_shared<PictureArgs>();
  auto* cmd = app.add_subcommand("run", "simulate one step of a scenario and print its table");
  add_scenario_args(cmd, *args);
  cmd->add_option("--schedule", *schedule, "schedule to run (overrides pipeline.schedule)");
  auto* json_flag = cmd->add_flag("--json", *json, "print a JSON summary instead of the table");
  cmd->add_option("--trace", *trace, "write a Chrome trace (Perfetto / chrome://tracing) to this file");
  add_picture_args(cmd, *pictures, json_flag);
  cmd->callback([=] {
    auto sets = args->sets;
    if (!schedule->empty()) {
      if (!find_schedule(*schedule)) {
        const auto near = nearest(*schedule, schedule_names());
        throw InputError("--schedule", 0, "", near.empty() ? fmt::format("unknown schedule '{}'", *schedule)
                                                           : fmt::format("unknown schedule '{}'; did you mean '{}'?", *schedule, near));
      }
      sets.push_back("pipeline.schedule=" + *schedule);
    }
    const Scenario sc = load_scenario(args->file, sets);
    pictures_need_timeline(sc, *pictures);
    if (sc.data_parallel)
      return run_data_parallel_scenario(sc, {*json, *trace, pictures->html, pictures->gantt ? gantt_width(*pictures) : 0});
    if (sc.rl) return run_rl_scenario(sc, *json, *trace);
    if (sc.moe) return run_moe_scenario(sc, *json, *trace);
    if (sc.job_step) return run_job_step_scenario(sc, *json, *trace);
    const PipelineSpec& spec = pipeline_of(sc);
    const PipelineRun run = simulate_or_fail(sc, spec);
    if (!trace->empty()) write_file(*trace, pipeline_trace(run));
    if (!pictures->html.empty()) write_file(pictures->html, pipeline_html_report(sc.name, sc.description, {&run}, spec));
    if (*json) fmt::print("{}\n", pipeline_summary_json(run, spec).dump(2));
    else if (pictures->gantt) fmt::print("{}\n{}", sc.name, pipeline_gantt_text({&run}, spec, gantt_width(*pictures)));
    else fmt::print("{}\n{}", sc.name, pipeline_run_text(run, spec));
  });
}

void add_compare_command(CLI::App& app) {
  auto args = std::make_shared<ScenarioArgs>();
  auto schedules = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  auto pictures = std::make_shared<PictureArgs>();
  auto* cmd = app.add_subcommand("compare", "simulate the scenario under several schedules, one row each");
  add_scenario_args(cmd, *args);
  cmd->add_option("--schedules", *schedules, "comma-separated schedules (default: every one that can run it)")
      ->delimiter(',');
  auto* json_flag = cmd->add_flag("--json", *json, "print a JSON list of summaries instead of the table");
  add_picture_args(cmd, *pictures, json_flag);
  cmd->callback([=] {
    const Scenario sc = load_scenario(args->file, args->sets);
    pictures_need_timeline(sc, *pictures);
    if (sc.data_parallel)
      return compare_data_parallel_scenario(sc, {*json, "", pictures->html, pictures->gantt ? gantt_width(*pictures) : 0});
    if (sc.rl) return run_rl_scenario(sc, *json, "");  // a loop and its variants are already one row each
    if (sc.moe) return compare_moe_scenario(sc, *json);
    const PipelineSpec& base = pipeline_of(sc);
    std::vector<std::string> names = *schedules;
    const bool explicit_list = !names.empty();
    if (!explicit_list) {
      for (const auto& f : schedule_families()) names.push_back(f.name);
      if (base.schedule == "custom") names.push_back("custom");  // the scenario's own order
    }
    std::vector<std::unique_ptr<PipelineRun>> runs;
    for (const auto& name : names) {
      const PipelineSpec spec = spec_for_schedule(base, name);
      if (name == "custom" && base.custom_actions.empty())
        sc.fail("--schedules", "schedule 'custom' needs the scenario's pipeline.actions or pipeline.actions_csv");
      if (name != "custom" && !find_schedule(name)) sc.fail("--schedules", fmt::format("unknown schedule '{}'", name));
      try {
        runs.push_back(std::make_unique<PipelineRun>(simulate_pipeline(spec)));
      } catch (const SpecError& e) {
        if (explicit_list) sc.fail(e.key(), e.what());
        fmt::print(stderr, "skipped {}: {}\n", name, e.what());
      }
    }
    std::vector<const PipelineRun*> view;
    for (const auto& r : runs) view.push_back(r.get());
    if (!pictures->html.empty())
      write_file(pictures->html, pipeline_html_report(sc.name, sc.description, view, base));
    if (*json) {
      Json list = Json::array();
      for (const auto* r : view) list.push_back(pipeline_summary_json(*r, base));
      fmt::print("{}\n", list.dump(2));
    } else if (pictures->gantt) {
      fmt::print("{}\n{}", sc.name, pipeline_gantt_text(view, base, gantt_width(*pictures)));
    } else {
      fmt::print("{}\n{}", sc.name, pipeline_compare_text(view, base));
    }
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
  cmd->add_option("-o,--output", *out, "CSV file to write ('-' = stdout, the default)");
  cmd->callback([=] {
    auto sets = args->sets;
    if (!schedule->empty()) sets.push_back("pipeline.schedule=" + *schedule);
    const Scenario sc = load_scenario(args->file, sets);
    const PipelineSpec& spec = pipeline_of(sc);
    PipelinePlan plan;
    try {
      plan = plan_for(spec);
    } catch (const SpecError& e) {
      sc.fail(e.key(), e.what());
    }
    write_file(*out, format_actions_csv(plan.actions));
  });
}

void add_validate_command(CLI::App& app) {
  auto args = std::make_shared<ScenarioArgs>();
  auto* cmd = app.add_subcommand("validate", "check a scenario file (and that its schedule runs) without output");
  add_scenario_args(cmd, *args);
  cmd->callback([=] {
    const Scenario sc = load_scenario(args->file, args->sets);
    if (sc.pipeline) simulate_or_fail(sc, *sc.pipeline);
    if (sc.data_parallel) validate_data_parallel_scenario(sc);
    if (sc.rl) validate_rl_scenario(sc);
    if (sc.moe) validate_moe_scenario(sc);
    if (sc.job_step) validate_job_step_scenario(sc);
    fmt::print("{}: ok\n", sc.file);
  });
}

}  // namespace stepsim::cli
