#include "cli/commands/cmd_moe.hpp"

#include <fmt/format.h>

#include "cli/reports/moe_report.hpp"
#include "cli/reports/output.hpp"

namespace stepsim::cli {

namespace {

// Runs a spec; a spec error points at the scenario key (inside the variant when it has one).
MoeLayerRun run_or_fail(const Scenario& sc, const MoeLayerSpec& spec, const std::string& variant) {
  try {
    return simulate_moe_layer(spec);
  } catch (const SpecError& e) {
    if (variant.empty()) sc.fail("moe." + e.key(), e.what());
    sc.fail(fmt::format("moe.variants.{}.{}", variant, e.key()), fmt::format("variant '{}': {}", variant, e.what()));
  }
}

}  // namespace

void run_moe_scenario(const Scenario& sc, bool json, const std::string& trace_file) {
  const MoeLayerRun run = run_or_fail(sc, sc.moe->spec, "");
  if (!trace_file.empty()) write_file(trace_file, moe_trace(run));
  if (json) fmt::print("{}\n", moe_summary_json(run, "base").dump(2));
  else fmt::print("{}\n{}", sc.name, moe_run_text(run));
}

void compare_moe_scenario(const Scenario& sc, bool json) {
  std::vector<std::pair<std::string, const MoeLayerSpec*>> specs = {{"base", &sc.moe->spec}};
  for (const auto& [name, spec] : sc.moe->variants) specs.emplace_back(name, &spec);
  std::vector<MoeLayerRun> runs;
  runs.reserve(specs.size());
  for (const auto& [name, spec] : specs) runs.push_back(run_or_fail(sc, *spec, name == "base" ? "" : name));
  if (json) {
    auto list = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < runs.size(); ++i) list.push_back(moe_summary_json(runs[i], specs[i].first));
    fmt::print("{}\n", list.dump(2));
    return;
  }
  std::vector<std::pair<std::string, const MoeLayerRun*>> rows;
  for (std::size_t i = 0; i < runs.size(); ++i) rows.emplace_back(specs[i].first, &runs[i]);
  fmt::print("{}\n{}", sc.name, moe_compare_text(rows));
}

void validate_moe_scenario(const Scenario& sc) {
  run_or_fail(sc, sc.moe->spec, "");
  for (const auto& [name, spec] : sc.moe->variants) run_or_fail(sc, spec, name);
}

}  // namespace stepsim::cli
