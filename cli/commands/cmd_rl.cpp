// `stepsim run` and `stepsim validate` for rl scenarios (called from cmd_pipeline.cpp when the
// scenario's section is `rl`).
#include <fmt/format.h>

#include "cli/commands/commands.hpp"
#include "cli/reports/output.hpp"
#include "cli/reports/rl_report.hpp"
#include "cli/input/scenario.hpp"

namespace stepsim::cli {

namespace {
// Spec errors are reported against the scenario file (keys relative to the rl section).
RlRun simulate_rl_or_fail(const Scenario& sc) {
  try {
    return simulate_rl(*sc.rl);
  } catch (const SpecError& e) {
    sc.fail("rl." + e.key(), e.what());
  }
}
}  // namespace

void run_rl_scenario(const Scenario& sc, bool json, const std::string& trace_file) {
  const RlRun run = simulate_rl_or_fail(sc);
  if (!trace_file.empty()) write_file(trace_file, rl_trace(run));
  if (json) fmt::print("{}\n", rl_summary_json(run, *sc.rl).dump(2));
  else fmt::print("{}\n{}", sc.name, rl_run_text(run, *sc.rl));
}

void validate_rl_scenario(const Scenario& sc) { simulate_rl_or_fail(sc); }

}  // namespace stepsim::cli
