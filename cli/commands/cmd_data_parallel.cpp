#include "cli/commands/cmd_data_parallel.hpp"

#include <fmt/format.h>

#include "cli/reports/data_parallel_pictures.hpp"
#include "cli/reports/data_parallel_report.hpp"
#include "cli/reports/output.hpp"

namespace stepsim::cli {

namespace {

// Runs a spec; a spec error points at the scenario key (inside the variant when it has one).
DataParallelRun run_or_fail(const Scenario& sc, const DataParallelSpec& spec, const std::string& variant) {
  try {
    return run_data_parallel(spec);
  } catch (const SpecError& e) {
    std::string key = e.key();
    const std::string section = "data_parallel.";
    if (!variant.empty() && key.rfind(section, 0) == 0)
      key = fmt::format("data_parallel.variants.{}.{}", variant, key.substr(section.size()));
    sc.fail(key, variant.empty() ? e.what() : fmt::format("variant '{}': {}", variant, e.what()));
  }
}

}  // namespace

void run_data_parallel_scenario(const Scenario& sc, const DataParallelOutputs& out) {
  const DataParallelSpec& spec = sc.data_parallel->spec;
  const DataParallelRun run = run_or_fail(sc, spec, "");
  const std::vector<DataParallelReportRun> view = {{"base", &run, &spec}};
  if (!out.trace.empty()) write_file(out.trace, data_parallel_trace(run));
  if (!out.html.empty()) write_file(out.html, data_parallel_html_report(sc.name, sc.description, view, false));
  if (out.json) fmt::print("{}\n", data_parallel_summary_json(run, spec, "base").dump(2));
  else if (out.gantt_width > 0) fmt::print("{}\n{}", sc.name, data_parallel_gantt_text(view, out.gantt_width));
  else fmt::print("{}\n{}", sc.name, data_parallel_run_text(run, spec));
}

void compare_data_parallel_scenario(const Scenario& sc, const DataParallelOutputs& out) {
  const DataParallelScenario& dp = *sc.data_parallel;
  std::vector<std::pair<std::string, const DataParallelSpec*>> specs = {{"base", &dp.spec}};
  for (const auto& [name, spec] : dp.variants) specs.emplace_back(name, &spec);
  std::vector<DataParallelRun> runs;
  runs.reserve(specs.size());
  for (const auto& [name, spec] : specs) runs.push_back(run_or_fail(sc, *spec, name == "base" ? "" : name));
  std::vector<DataParallelReportRun> view;
  for (std::size_t i = 0; i < runs.size(); ++i) view.push_back({specs[i].first, &runs[i], specs[i].second});
  if (!out.html.empty()) write_file(out.html, data_parallel_html_report(sc.name, sc.description, view, true));
  if (out.json) {
    Json list = Json::array();
    for (std::size_t i = 0; i < runs.size(); ++i) list.push_back(data_parallel_summary_json(runs[i], *specs[i].second, specs[i].first));
    fmt::print("{}\n", list.dump(2));
    return;
  }
  if (out.gantt_width > 0) {
    fmt::print("{}\n{}", sc.name, data_parallel_gantt_text(view, out.gantt_width));
    return;
  }
  std::vector<std::pair<std::string, const DataParallelRun*>> rows;
  for (std::size_t i = 0; i < runs.size(); ++i) rows.emplace_back(specs[i].first, &runs[i]);
  fmt::print("{}\n{}", sc.name, data_parallel_compare_text(rows));
  const bool folded = std::any_of(runs.begin(), runs.end(), [](const auto& r) { return r.result.folded; });
  if (folded) fmt::print("\nidentical ranks folded into one representative where no rank differs\n");
}

void validate_data_parallel_scenario(const Scenario& sc) {
  run_or_fail(sc, sc.data_parallel->spec, "");
  for (const auto& [name, spec] : sc.data_parallel->variants) run_or_fail(sc, spec, name);
}

}  // namespace stepsim::cli
