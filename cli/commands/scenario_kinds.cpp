#include "cli/commands/scenario_kinds.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace stepsim::cli {

namespace {

ScenarioKind own_command_kind(std::string section, std::string what, bool (*present)(const Scenario&)) {
  ScenarioKind k;
  k.section = section;
  k.command = std::move(section);
  k.what = std::move(what);
  k.present = present;
  return k;
}

const ScenarioKind* first_present(const Scenario& sc) {
  for (const auto& k : scenario_kinds())
    if (k.present(sc)) return &k;
  return nullptr;
}

[[noreturn]] void wrong_kind(const Scenario& sc, const std::string& command, const std::string& needs,
                             const ScenarioKind& kind) {
  sc.fail(kind.section, fmt::format("`stepsim {}` needs {}; this is a '{}' scenario: use `stepsim {} {}`", command,
                                    needs, kind.section, kind.command, sc.file));
}

}  // namespace

const std::vector<ScenarioKind>& scenario_kinds() {
  // data_parallel before pipeline: the order `run` always used for a file with both.
  static const std::vector<ScenarioKind> kinds = {
      data_parallel_kind(),
      rl_kind(),
      moe_kind(),
      job_step_kind(),
      pipeline_kind(),
      own_command_kind("job", "whole training runs: failures, checkpoints, input, stragglers",
                       [](const Scenario& sc) { return sc.job.has_value(); }),
      own_command_kind("plan", "capacity and deadline planning",
                       [](const Scenario& sc) { return sc.plan.has_value(); }),
  };
  return kinds;
}

const ScenarioKind& step_kind(const Scenario& sc, const std::string& command) {
  for (const auto& k : scenario_kinds())
    if (k.run && k.present(sc)) return k;
  const ScenarioKind* other = first_present(sc);
  if (!other) sc.fail("", fmt::format("`stepsim {}` needs a scenario section to simulate", command));
  wrong_kind(sc, command, "a step to simulate (a 'pipeline', 'data_parallel', 'rl', 'moe' or 'job_step' section)",
             *other);
}

void require_section(const Scenario& sc, const std::string& command, const std::string& section) {
  for (const auto& k : scenario_kinds())
    if (k.section == section && k.present(sc)) return;
  const ScenarioKind* other = first_present(sc);
  if (!other) sc.fail(section, fmt::format("this command needs a '{}' section", section));
  wrong_kind(sc, command, fmt::format("a '{}' section", section), *other);
}

void check_case_name(const std::string& name, const std::vector<std::string>& cases) {
  if (std::find(cases.begin(), cases.end(), name) != cases.end()) return;
  const std::string near = nearest(name, cases);
  throw InputError("--case", 0, "",
                   fmt::format("no case named '{}'{} (cases: {})", name,
                               near.empty() ? "" : fmt::format("; did you mean '{}'?", near), fmt::join(cases, ", ")));
}

}  // namespace stepsim::cli
