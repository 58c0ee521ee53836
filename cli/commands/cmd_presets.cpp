// `stepsim presets`: the accelerator presets a job_step's hardware may name, with their figures.
#include <memory>

#include <fmt/format.h>

#include "cli/commands/commands.hpp"
#include "cli/reports/preset_report.hpp"

namespace stepsim::cli {

void add_presets_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "presets", "list the accelerator presets (job_step.hardware.preset): peaks, memory, node, network");
  cmd->add_flag("--json", *json, "print JSON instead of the table");
  cmd->callback([=] {
    if (*json)
      fmt::print("{}\n", presets_json().dump(2));
    else
      fmt::print("{}", presets_text());
  });
}

}  // namespace stepsim::cli
