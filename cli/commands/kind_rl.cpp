// The rl kind: an RL loop and its variants, the shared card's switch orders, the weight
// distribution (schedules/lowering/rl). The loop and its variants are already one row each (and
// one process group each in its trace), so `compare` is `run`.
#include <memory>

#include <fmt/format.h>

#include "cli/commands/scenario_kinds.hpp"
#include "cli/reports/output.hpp"
#include "cli/reports/rl_pictures.hpp"
#include "cli/reports/rl_report.hpp"

namespace stepsim::cli {

namespace {

// Spec errors are reported against the scenario file (keys relative to the rl section).
RlRun simulate_rl_or_fail(const Scenario& sc) {
  try {
    return simulate_rl(*sc.rl);
  } catch (const SpecError& e) { sc.fail("rl." + e.key(), e.what()); }
}

KindReport run_rl(const Scenario& sc) {
  auto run = std::make_shared<RlRun>(simulate_rl_or_fail(sc));
  KindReport r;
  r.drawn_bars = rl_drawn_bars(*run);
  r.text = [run, &sc] { return fmt::format("{}\n{}", sc.name, rl_run_text(*run, *sc.rl)); };
  r.json = [run, &sc] { return rl_summary_json(*run, *sc.rl).dump(2) + "\n"; };
  r.write_trace = [run](const std::string& path) { write_trace_file(path, rl_trace, *run); };
  r.html = [run, &sc] { return rl_html_report(sc.name, sc.description, rl_run_text(*run, *sc.rl), *run); };
  r.gantt = [run, &sc](int width) { return fmt::format("{}\n{}", sc.name, rl_gantt_text(*run, width)); };
  return r;
}

}  // namespace

ScenarioKind rl_kind() {
  ScenarioKind k;
  k.section = "rl";
  k.command = "run";
  k.what = "an RL loop, a shared card's weight switches, a weight distribution";
  k.present = [](const Scenario& sc) { return sc.rl.has_value(); };
  k.run = [](const Scenario& sc, const RunRequest&) { return run_rl(sc); };
  k.compare = [](const Scenario& sc, const CompareRequest&) { return run_rl(sc); };
  k.validate = [](const Scenario& sc) { simulate_rl_or_fail(sc); };
  return k;
}

}  // namespace stepsim::cli
