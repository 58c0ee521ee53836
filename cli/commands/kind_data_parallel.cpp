// The data_parallel kind: one data-parallel (ZeRO, buckets, overlap) training step
// (schedules/lowering/data_parallel); `compare` runs the base spec and every variant.
#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "cli/commands/diagnostics.hpp"
#include "cli/commands/scenario_kinds.hpp"
#include "cli/reports/data_parallel_pictures.hpp"
#include "cli/reports/data_parallel_report.hpp"
#include "cli/reports/trace_rows.hpp"
#include "models/units.hpp"

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
  } catch (const OverflowError& e) {
    // A time of the step (compute, a transfer, the step) past the limit: the section's inputs are at fault.
    sc.fail(variant.empty() ? sc.source->overflow_key("data_parallel") : fmt::format("data_parallel.variants.{}", variant),
            e.what());
  }
}

KindReport run_data_parallel(const Scenario& sc) {
  const DataParallelSpec& spec = sc.data_parallel->spec;
  auto run = std::make_shared<DataParallelRun>(run_or_fail(sc, spec, ""));
  debug("{}: {} ops simulated ({} of {} ranks), step {}", sc.file, run->program->graph.op_count(),
        run->result.simulated_ranks, run->result.cards, format_duration(run->timeline.makespan));
  const auto view = [run, &spec] { return std::vector<DataParallelReportRun>{{"base", run.get(), &spec}}; };
  KindReport r;
  r.drawn_bars = run->timeline.start.size();
  r.text = [run, &sc, &spec] { return fmt::format("{}\n{}", sc.name, data_parallel_run_text(*run, spec)); };
  r.json = [run, &spec] { return data_parallel_summary_json(*run, spec, "base").dump(2) + "\n"; };
  r.write_trace = [run](const std::string& path) { write_trace_file(path, data_parallel_trace, *run); };
  r.html = [view, &sc] { return data_parallel_html_report(sc.name, sc.description, view(), false); };
  r.gantt = [view, &sc](int width) { return fmt::format("{}\n{}", sc.name, data_parallel_gantt_text(view(), width)); };
  return r;
}

KindReport compare_data_parallel_variants(const Scenario& sc, const CompareRequest& req) {
  const DataParallelScenario& dp = *sc.data_parallel;
  auto specs = std::make_shared<std::vector<std::pair<std::string, const DataParallelSpec*>>>();
  specs->emplace_back("base", &dp.spec);
  for (const auto& [name, spec] : dp.variants) specs->emplace_back(name, &spec);
  auto runs = std::make_shared<std::vector<DataParallelRun>>();
  runs->reserve(specs->size());
  Progress progress("compare", "variants", specs->size(), req.json);
  for (const auto& [name, spec] : *specs) {
    progress.update(runs->size());
    runs->push_back(run_or_fail(sc, *spec, name == "base" ? "" : name));
  }
  const auto view = [specs, runs] {
    std::vector<DataParallelReportRun> v;
    for (std::size_t i = 0; i < runs->size(); ++i) v.push_back({(*specs)[i].first, &(*runs)[i], (*specs)[i].second});
    return v;
  };
  KindReport r;
  for (const auto& run : *runs) r.drawn_bars += run.timeline.start.size();
  r.text = [specs, runs, &sc] {
    std::vector<std::pair<std::string, const DataParallelRun*>> rows;
    for (std::size_t i = 0; i < runs->size(); ++i) rows.emplace_back((*specs)[i].first, &(*runs)[i]);
    std::string out = fmt::format("{}\n{}", sc.name, data_parallel_compare_text(rows));
    if (std::any_of(runs->begin(), runs->end(), [](const auto& run) { return run.result.folded; }))
      out += "\nidentical ranks folded into one representative where no rank differs\n";
    return out;
  };
  r.json = [specs, runs] {
    Json list = Json::array();
    for (std::size_t i = 0; i < runs->size(); ++i)
      list.push_back(data_parallel_summary_json((*runs)[i], *(*specs)[i].second, (*specs)[i].first));
    return list.dump(2) + "\n";
  };
  r.html = [view, &sc] { return data_parallel_html_report(sc.name, sc.description, view(), true); };
  r.write_trace = [specs, runs](const std::string& path) {
    std::vector<std::string> names;
    for (const auto& spec : *specs) names.push_back(spec.first);
    write_trace_file(path,
                     trace_of_rows(names, [&](std::size_t i, TraceWriter& w) { data_parallel_trace(w, (*runs)[i]); }));
  };
  r.gantt = [view, &sc](int width) { return fmt::format("{}\n{}", sc.name, data_parallel_gantt_text(view(), width)); };
  return r;
}

}  // namespace

ScenarioKind data_parallel_kind() {
  ScenarioKind k;
  k.section = "data_parallel";
  k.command = "run";
  k.what = "one data-parallel training step";
  k.present = [](const Scenario& sc) { return sc.data_parallel.has_value(); };
  k.run = [](const Scenario& sc, const RunRequest&) { return run_data_parallel(sc); };
  k.compare = compare_data_parallel_variants;
  k.validate = [](const Scenario& sc) {
    run_or_fail(sc, sc.data_parallel->spec, "");
    for (const auto& [name, spec] : sc.data_parallel->variants) run_or_fail(sc, spec, name);
  };
  return k;
}

}  // namespace stepsim::cli
