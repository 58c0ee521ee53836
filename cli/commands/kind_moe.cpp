// The moe kind: one mixture-of-experts layer (schedules/lowering/moe); `compare` runs the base
// layer and every variant.
#include <memory>

#include <fmt/format.h>

#include "cli/commands/scenario_kinds.hpp"
#include "cli/reports/moe_pictures.hpp"
#include "cli/reports/moe_report.hpp"
#include "cli/reports/output.hpp"
#include "cli/reports/trace_rows.hpp"

namespace stepsim::cli {

namespace {

using NamedRuns = std::vector<std::pair<std::string, const MoeLayerRun*>>;

// Runs a spec; a spec error points at the scenario key (inside the variant when it has one).
MoeLayerRun run_or_fail(const Scenario& sc, const MoeLayerSpec& spec, const std::string& variant) {
  try {
    return simulate_moe_layer(spec);
  } catch (const SpecError& e) {
    if (variant.empty()) sc.fail("moe." + e.key(), e.what());
    sc.fail(fmt::format("moe.variants.{}.{}", variant, e.key()), fmt::format("variant '{}': {}", variant, e.what()));
  }
}

KindReport run_moe(const Scenario& sc) {
  auto run = std::make_shared<MoeLayerRun>(run_or_fail(sc, sc.moe->spec, ""));
  KindReport r;
  r.drawn_bars = run->timeline.start.size();
  r.text = [run, &sc] { return fmt::format("{}\n{}", sc.name, moe_run_text(*run)); };
  r.json = [run] { return moe_summary_json(*run, "base").dump(2) + "\n"; };
  r.write_trace = [run](const std::string& path) { write_trace_file(path, moe_trace, *run); };
  r.html = [run, &sc] { return moe_html_report(sc.name, sc.description, moe_run_text(*run), {{"base", run.get()}}); };
  r.gantt = [run, &sc](int width) {
    return fmt::format("{}\n{}", sc.name, moe_gantt_text({{"base", run.get()}}, width));
  };
  return r;
}

KindReport compare_moe_cases(const Scenario& sc, const CompareRequest&) {
  std::vector<std::pair<std::string, const MoeLayerSpec*>> specs = {{"base", &sc.moe->spec}};
  for (const auto& [name, spec] : sc.moe->variants) specs.emplace_back(name, &spec);
  auto runs = std::make_shared<std::vector<MoeLayerRun>>();
  runs->reserve(specs.size());
  auto names = std::make_shared<std::vector<std::string>>();
  for (const auto& [name, spec] : specs) {
    runs->push_back(run_or_fail(sc, *spec, name == "base" ? "" : name));
    names->push_back(name);
  }
  const auto rows = [runs, names] {
    NamedRuns v;
    for (std::size_t i = 0; i < runs->size(); ++i) v.emplace_back((*names)[i], &(*runs)[i]);
    return v;
  };
  KindReport r;
  for (const auto& run : *runs) r.drawn_bars += run.timeline.start.size();
  r.text = [rows, &sc] { return fmt::format("{}\n{}", sc.name, moe_compare_text(rows())); };
  r.json = [runs, names] {
    auto list = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < runs->size(); ++i) list.push_back(moe_summary_json((*runs)[i], (*names)[i]));
    return list.dump(2) + "\n";
  };
  r.html = [rows, &sc] { return moe_html_report(sc.name, sc.description, moe_compare_text(rows()), rows()); };
  r.gantt = [rows, &sc](int width) { return fmt::format("{}\n{}", sc.name, moe_gantt_text(rows(), width)); };
  r.write_trace = [runs, names](const std::string& path) {
    write_trace_file(path, trace_of_rows(*names, [&](std::size_t i, TraceWriter& w) { moe_trace(w, (*runs)[i]); }));
  };
  return r;
}

}  // namespace

ScenarioKind moe_kind() {
  ScenarioKind k;
  k.section = "moe";
  k.command = "run";
  k.what = "one mixture-of-experts layer";
  k.present = [](const Scenario& sc) { return sc.moe.has_value(); };
  k.run = [](const Scenario& sc, const RunRequest&) { return run_moe(sc); };
  k.compare = compare_moe_cases;
  k.validate = [](const Scenario& sc) {
    run_or_fail(sc, sc.moe->spec, "");
    for (const auto& [name, spec] : sc.moe->variants) run_or_fail(sc, spec, name);
  };
  return k;
}

}  // namespace stepsim::cli
