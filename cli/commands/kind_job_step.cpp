// The job_step kind: one training step of a job given by model, cluster and layout
// (schedules/lowering/job, docs/job.md). `compare` runs the base and every variant.
#include <memory>

#include <fmt/format.h>

#include "cli/commands/diagnostics.hpp"
#include "cli/commands/scenario_kinds.hpp"
#include "cli/input/job_step_input.hpp"
#include "cli/reports/job_step_pictures.hpp"
#include "cli/reports/job_step_report.hpp"
#include "cli/reports/output.hpp"
#include "cli/reports/trace_rows.hpp"

namespace stepsim::cli {

namespace {

// The step, or one line at the key that refuses it: a layout its schedule cannot run, or one
// whose simulated peak does not fit (the check before the run is a lower bound) unless allow_oom.
// A variant (`variant` its name) is run as compare reports it: not fitting is its result.
// A variant an option made (`compare --schedules`) is blamed on that option, naming it.
JobStepRun run_or_fail(const Scenario& sc, const JobStepSpec& spec, const std::string& variant = "",
                       const std::string& option = "") {
  JobStepRun run;
  try {
    run = run_job_step(spec);
  } catch (const SpecError& e) {
    if (variant.empty()) sc.fail("job_step." + e.key(), e.what());
    if (!option.empty()) throw InputError(option, 0, "", fmt::format("{}: {}", variant, e.what()));
    sc.fail(fmt::format("job_step.variants.{}.{}", variant, e.key()),
            fmt::format("variant '{}': {}", variant, e.what()));
  }
  // Legal, but rarely meant: TP's collectives, on the critical path of every layer, over the
  // network (the search keeps TP within a node).
  const int per_node = spec.cluster.node.gpus;
  if (variant.empty() && spec.layout.tp > per_node)
    warn("{}: job_step.layout.tp: tp {} spans {} nodes of {} GPUs: its collectives cross the network", sc.file,
         spec.layout.tp, (spec.layout.tp + per_node - 1) / per_node, per_node);
  // A cluster of part-filled nodes: its rings and groups are placed as if every node were full.
  const std::int64_t gpus = spec.layout.ranks();
  if (variant.empty() && gpus > per_node && gpus % per_node != 0)
    warn(
        "{}: job_step.hardware.gpus: {} GPUs fill {} node{} of {} and part of another; groups are placed as on full "
        "nodes",
        sc.file, gpus, gpus / per_node, gpus / per_node == 1 ? "" : "s", per_node);
  const JobMemory& mem = run.result.memory;
  if (variant.empty() && !sc.job_step->allow_oom && mem.total() > run.result.capacity)
    sc.fail("job_step.layout", memory_refusal(sc.job_step->spec, mem,
                                              fmt::format(" at the simulated peak (pipeline rank {})", mem.device)));
  return run;
}

// One run's reports: its table, JSON, trace, HTML page and Gantt chart.
KindReport report_of(const Scenario& sc, std::shared_ptr<JobStepRun> run) {
  KindReport r;
  r.drawn_bars = run->timeline.start.size();  // compare's page draws the base's step alone
  r.text = [run, &sc] { return job_step_text(sc.name, *run); };
  r.json = [run, &sc] { return job_step_json(sc.name, *run).dump(2) + "\n"; };
  r.write_trace = [run](const std::string& path) { write_trace_file(path, job_step_trace, *run); };
  r.html = [run, &sc] { return job_step_html_report(sc.name, sc.description, *run); };
  r.gantt = [run, &sc](int width) { return job_step_gantt_text(sc.name, *run, width); };
  return r;
}

KindReport run_job_step_kind(const Scenario& sc) {
  return report_of(sc, std::make_shared<JobStepRun>(run_or_fail(sc, sc.job_step->spec)));
}

// The base and every variant, one row each; without variants, the base's full report as `run`.
KindReport compare_job_step(const Scenario& sc) {
  auto base = std::make_shared<JobStepRun>(run_or_fail(sc, sc.job_step->spec));
  KindReport r = report_of(sc, base);  // the base: its Gantt
  if (sc.job_step->variants.empty()) return r;
  auto runs = std::make_shared<std::vector<std::pair<std::string, JobStepRun>>>();
  for (const auto& v : sc.job_step->variants) runs->emplace_back(v.name, run_or_fail(sc, v.spec, v.name, v.option));
  const auto rows = [base, runs] {
    std::vector<std::pair<std::string, const JobStepRun*>> out = {{"base", base.get()}};
    for (const auto& [name, run] : *runs) out.emplace_back(name, &run);
    return out;
  };
  r.text = [base, rows, &sc] {
    return job_step_heading(sc.name, *base) + "\n" + job_step_compare_table(rows()).render();
  };
  r.html = [base, rows, &sc] { return job_step_html_report(sc.name, sc.description, *base, rows()); };
  r.write_trace = [rows](const std::string& path) {
    const auto all = rows();
    std::vector<std::string> names;
    for (const auto& row : all) names.push_back(row.first);
    write_trace_file(path,
                     trace_of_rows(names, [&](std::size_t i, TraceWriter& w) { job_step_trace(w, *all[i].second); }));
  };
  r.json = [base, runs, &sc] {
    auto list = nlohmann::ordered_json::array();
    auto add = [&](const std::string& name, const JobStepRun& run) {
      nlohmann::ordered_json j = {{"variant", name}};
      j.update(job_step_json(sc.name, run));
      list.push_back(std::move(j));
    };
    add("base", *base);
    for (const auto& [name, run] : *runs) add(name, run);
    return list.dump(2) + "\n";
  };
  return r;
}

}  // namespace

ScenarioKind job_step_kind() {
  ScenarioKind k;
  k.section = "job_step";
  k.command = "run";
  k.what = "one training step of a job: model, cluster and parallel layout";
  k.present = [](const Scenario& sc) { return sc.job_step.has_value(); };
  k.run = [](const Scenario& sc, const RunRequest&) { return run_job_step_kind(sc); };
  k.compare = [](const Scenario& sc, const CompareRequest&) { return compare_job_step(sc); };
  k.validate = [](const Scenario& sc) {
    run_or_fail(sc, sc.job_step->spec);
    for (const auto& v : sc.job_step->variants) run_or_fail(sc, v.spec, v.name);
  };
  return k;
}

}  // namespace stepsim::cli
