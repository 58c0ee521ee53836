// The pipeline kind: one training step of a pipeline-parallel schedule (schedules/pipeline,
// schedules/lowering/pipeline); `compare` runs it under several schedules.
#include <atomic>
#include <exception>
#include <memory>

#include <fmt/format.h>

#include "cli/commands/diagnostics.hpp"
#include "cli/commands/scenario_kinds.hpp"
#include "cli/reports/pipeline_pictures.hpp"
#include "cli/reports/pipeline_report.hpp"
#include "cli/reports/trace_rows.hpp"
#include "models/units.hpp"
#include "sim/parallel_for.hpp"

namespace stepsim::cli {

namespace {

// Runs the spec; spec errors are reported against the scenario file.
// A spec refused at its key; a custom order read from `actions_csv` is blamed there, the CSV named
// (the scenario has no `actions` key to point at).
[[noreturn]] void fail_spec(const Scenario& sc, const SpecError& e) {
  if (e.key() == "pipeline.actions") {
    const Reader pipeline = Reader(sc.source, sc.source->root, "").child("pipeline");
    if (pipeline.has("actions_csv"))
      sc.fail("pipeline.actions_csv", fmt::format("{}: {}", pipeline.text("actions_csv"), e.what()));
  }
  sc.fail(e.key(), e.what());
}

PipelineRun simulate_or_fail(const Scenario& sc, const PipelineSpec& spec, MemoryDetail memory) {
  try {
    return simulate_pipeline(spec, memory);
  } catch (const SpecError& e) { fail_spec(sc, e); }
}

// A full-backward schedule runs `backward`, a split one backward_input and backward_weight: when
// a file gives all three and they disagree, the schedules compared are not timing the same work.
void warn_backward_split(const Scenario& sc, const PipelineSpec& spec) {
  if (spec.backward.empty() || spec.backward_input.empty() || spec.backward_weight.empty()) return;
  for (std::size_t i = 0; i < spec.backward.size() && i < spec.backward_input.size() && i < spec.backward_weight.size();
       ++i) {
    const Time split = spec.backward_input[i] + spec.backward_weight[i];
    if (spec.backward[i] == split) continue;
    warn(
        "{}: pipeline.time.backward: stage {}: backward {} is not backward_input + backward_weight = {}; full-backward "
        "schedules time the step with the first, split ones (zb-*, dualpipe*) with the second",
        sc.file, i, format_duration(spec.backward[i]), format_duration(split));
    return;  // one stage is enough to say it
  }
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

// A spec error's message without the schedule name it may already start with ("dualpipe: ...").
std::string without_prefix(const std::string& message, const std::string& name) {
  const std::string prefix = name + ": ";
  return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

[[noreturn]] void unknown_schedule(const std::string& option, const std::string& name) {
  std::vector<std::string> names = schedule_names(), families;  // names include the aliases ("zbh1")
  names.push_back("custom");
  for (const auto& f : schedule_families()) families.push_back(f.name);
  families.push_back("custom");
  std::string near = nearest(name, names);
  if (const ScheduleFamily* f = near.empty() ? nullptr : find_schedule(near)) near = f->name;  // the canonical name
  throw InputError(option, 0, "",
                   near.empty() ? fmt::format("unknown schedule '{}' (known: {})", name, fmt::join(families, ", "))
                                : fmt::format("unknown schedule '{}'; did you mean '{}'?", name, near));
}

KindReport run_pipeline(const Scenario& sc, const RunRequest& req) {
  const PipelineSpec& spec = *sc.pipeline;
  warn_backward_split(sc, spec);
  auto run = std::make_shared<PipelineRun>(
      simulate_or_fail(sc, spec, req.timelines ? MemoryDetail::Curves : MemoryDetail::Peaks));
  debug("{}: {} ops simulated, step {}", sc.file, run->program->graph.op_count(),
        format_duration(run->timeline.makespan));
  KindReport r;
  r.drawn_bars = run->timeline.start.size();
  r.text = [run, &sc] { return fmt::format("{}\n{}", sc.name, pipeline_run_text(*run, *sc.pipeline)); };
  r.json = [run, &sc] { return pipeline_summary_json(*run, *sc.pipeline).dump(2) + "\n"; };
  r.write_trace = [run](const std::string& path) { write_trace_file(path, pipeline_trace, *run); };
  r.html = [run, &sc] { return pipeline_html_report(sc.name, sc.description, {run.get()}, *sc.pipeline); };
  r.gantt = [run, &sc](int width) {
    return fmt::format("{}\n{}", sc.name, pipeline_gantt_text({run.get()}, *sc.pipeline, width));
  };
  return r;
}

KindReport compare_pipeline(const Scenario& sc, const CompareRequest& req) {
  const PipelineSpec& base = *sc.pipeline;
  warn_backward_split(sc, base);
  std::vector<std::string> names = req.schedules;
  const bool explicit_list = !names.empty();
  for (const auto& name : names)
    if (name != "custom" && !find_schedule(name)) unknown_schedule("--schedules", name);
  if (!explicit_list) {
    for (const auto& f : schedule_families()) names.push_back(f.name);
    if (base.schedule == "custom") names.push_back("custom");  // the scenario's own order
  }
  // The schedules are simulated side by side (each on its own graph); what each ended in is then
  // taken in the list's order, so the rows, the notes and the error that stops the command are
  // those of running them one after another.
  std::vector<std::unique_ptr<PipelineRun>> done(names.size());
  std::vector<std::exception_ptr> failed(names.size());
  Progress progress("compare", "schedules", names.size(), req.json);
  std::atomic<std::size_t> finished{0};
  const auto without_order = [&](std::size_t i) { return names[i] == "custom" && base.custom_actions.empty(); };
  parallel_for(names.size(), req.jobs > 0 ? req.jobs : all_cores(), [&](std::size_t i) {
    if (without_order(i)) return;  // failed below, in its turn
    try {
      done[i] = std::make_unique<PipelineRun>(simulate_pipeline(spec_for_schedule(base, names[i])));
    } catch (...) { failed[i] = std::current_exception(); }
    progress.update(++finished);
  });
  auto runs = std::make_shared<std::vector<std::unique_ptr<PipelineRun>>>();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (without_order(i))
      sc.fail("--schedules", "schedule 'custom' needs the scenario's pipeline.actions or pipeline.actions_csv");
    if (!failed[i]) {
      runs->push_back(std::move(done[i]));
      continue;
    }
    try {
      std::rethrow_exception(failed[i]);
    } catch (const SpecError& e) {
      if (explicit_list) fail_spec(sc, e);
      note("skipped {}: {}", names[i], without_prefix(e.what(), names[i]));
    }
  }
  auto view = std::make_shared<std::vector<const PipelineRun*>>();
  for (const auto& r : *runs) view->push_back(r.get());
  KindReport r;
  for (const auto* run : *view) r.drawn_bars += run->timeline.start.size();
  r.text = [runs, view, &sc] { return fmt::format("{}\n{}", sc.name, pipeline_compare_text(*view, *sc.pipeline)); };
  r.json = [runs, view, &sc] {
    Json list = Json::array();
    for (const auto* run : *view) list.push_back(pipeline_summary_json(*run, *sc.pipeline));
    return list.dump(2) + "\n";
  };
  r.html = [runs, view, &sc] { return pipeline_html_report(sc.name, sc.description, *view, *sc.pipeline); };
  r.gantt = [runs, view, &sc](int width) {
    return fmt::format("{}\n{}", sc.name, pipeline_gantt_text(*view, *sc.pipeline, width));
  };
  r.write_trace = [runs, view](const std::string& path) {
    std::vector<std::string> schedules;
    for (const auto* run : *view) schedules.push_back(run->schedule);
    write_trace_file(path,
                     trace_of_rows(schedules, [&](std::size_t i, TraceWriter& w) { pipeline_trace(w, *(*view)[i]); }));
  };
  return r;
}

}  // namespace

void check_schedule_name(const std::string& option, const std::string& name) {
  if (name != "custom" && !find_schedule(name)) unknown_schedule(option, name);
}

ScenarioKind pipeline_kind() {
  ScenarioKind k;
  k.section = "pipeline";
  k.command = "run";
  k.what = "one pipeline-parallel training step";
  k.present = [](const Scenario& sc) { return sc.pipeline.has_value(); };
  k.run = run_pipeline;
  k.compare = compare_pipeline;
  k.validate = [](const Scenario& sc) {
    warn_backward_split(sc, *sc.pipeline);
    simulate_or_fail(sc, *sc.pipeline, MemoryDetail::Peaks);
  };
  return k;
}

}  // namespace stepsim::cli
