// The job_step kind: one training step of a job given by model, cluster and layout
// (schedules/lowering/job, docs/job.md). `compare` runs the one layout.
#include <memory>

#include <fmt/format.h>

#include "cli/commands/job_step_commands.hpp"
#include "cli/input/job_step_input.hpp"
#include "cli/commands/scenario_kinds.hpp"
#include "cli/reports/job_step_pictures.hpp"
#include "cli/reports/job_step_report.hpp"
#include "cli/reports/output.hpp"

namespace stepsim::cli {

namespace {

// The step, or one line at the key that refuses it: a layout its schedule cannot run, or one
// whose simulated peak does not fit (the check before the run is a lower bound) unless allow_oom.
JobStepRun run_or_fail(const Scenario& sc) {
  JobStepRun run;
  try {
    run = run_job_step(sc.job_step->spec);
  } catch (const SpecError& e) { sc.fail("job_step." + e.key(), e.what()); }
  const JobMemory& mem = run.result.memory;
  if (!sc.job_step->allow_oom && mem.total() > run.result.capacity)
    sc.fail("job_step.layout", memory_refusal(sc.job_step->spec, mem,
                                              fmt::format(" at the simulated peak (pipeline rank {})", mem.device)));
  return run;
}

KindReport run_job_step_kind(const Scenario& sc) {
  auto run = std::make_shared<JobStepRun>(run_or_fail(sc));
  KindReport r;
  r.text = [run, &sc] { return job_step_text(sc.name, *run); };
  r.json = [run, &sc] { return job_step_json(sc.name, *run).dump(2) + "\n"; };
  r.write_trace = [run](const std::string& path) { write_trace_file(path, job_step_trace, *run); };
  r.html = [run, &sc] { return job_step_html_report(sc.name, sc.description, *run); };
  r.gantt = [run, &sc](int width) { return job_step_gantt_text(sc.name, *run, width); };
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
  k.compare = [](const Scenario& sc, const CompareRequest&) { return run_job_step_kind(sc); };
  k.validate = [](const Scenario& sc) { run_or_fail(sc); };
  return k;
}

}  // namespace stepsim::cli
