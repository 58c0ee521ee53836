#include "cli/reports/plan_pictures.hpp"
#include "cli/reports/quantities.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "cli/reports/html_report.hpp"
#include "cli/reports/svg_charts.hpp"

namespace stepsim::cli {

namespace {

// The chart's memory unit: GiB for cards with gigabytes, decimal megabytes for the small devices
// whose budgets the book counts in bytes (10,000,000 B = 10.0 MB).
struct ChartUnit {
  double bytes = kGiB;
  const char* name = "GiB";
  static ChartUnit for_usable(Bytes usable) {
    return usable < static_cast<Bytes>(kGiB) ? ChartUnit{1e6, "MB"} : ChartUnit{kGiB, "GiB"};
  }
  double of(Bytes b) const { return static_cast<double>(b) / bytes; }
};

// Memory parts, bottom-up as the peak is made of them.
enum MemorySwatch { Weights, Gradients, Optimizer, Activations, Buffers, GivenWorkspace, Margin };
std::vector<Swatch> memory_legend() {
  return {{"weights", "#4e79a7"},        {"gradients", "#f28e2b"}, {"master + moments", "#e15759"},
          {"activations", "#59a14f"},    {"buffers", "#edc948"},   {"activations and buffers (given)", "#76b7b2"},
          {"planning margin", "#bab0ac"}};
}

enum DeadlineSwatch { Reserved, Training, Overhead };
std::vector<Swatch> deadline_legend() {
  return {{"reserved days", "#bab0ac"},
          {"training: steps x step time", "#4e79a7"},
          {"checkpoint saves, redo, restores", "#f28e2b"}};
}

std::string at_peak(const PlanResult& r) {
  const auto& ops = r.memory.sequence.ops();
  return r.memory.peak.at_op < ops.size() ? ops[r.memory.peak.at_op] : std::string("-");
}

}  // namespace

BarChart plan_memory_chart(const PlanSpec& spec, const PlanEvaluation& ev) {
  const ChartUnit unit = ChartUnit::for_usable(spec.usable);
  const auto fig = [&](Bytes b) { return plan_memory_figure(b, spec.usable); };
  BarChart chart;
  chart.unit = fmt::format("memory per card ({})", unit.name);
  chart.legend = memory_legend();
  chart.emphasis_label = "over the usable memory";
  chart.lines.push_back({unit.of(spec.usable), fmt::format("usable {:.1f} {}", unit.of(spec.usable), unit.name)});
  for (const PlanResult& r : ev.results) {
    const MemoryPlan& m = r.memory;
    BarItem item;
    item.label = r.name;
    item.emphasis = !m.fits();
    item.note =
        m.fits() ? fmt::format("{:.1f}", unit.of(m.planned)) : fmt::format("{:.1f}: no fit", unit.of(m.planned));
    const std::string whole = fmt::format("{}: {} planned per card, {} usable ({}); peak at {}", r.name, fig(m.planned),
                                          fig(m.usable), m.fits() ? "fits" : "does not fit", at_peak(r));
    const auto add = [&](Bytes b, int swatch, const std::string& what) {
      if (b <= 0) return;
      item.segments.push_back({unit.of(b), swatch, fmt::format("{}: {}\n{}", what, fig(b), whole)});
    };
    add(m.resident.weights, Weights, fmt::format("weights (ZeRO-{})", r.zero_stage));
    add(m.resident.gradients, Gradients, "gradients");
    add(m.resident.optimizer, Optimizer, "master + moments");
    add(m.peak.activations, Activations, fmt::format("activations at the peak (recompute {})", r.recompute.label()));
    add(m.peak.buffers, r.given_workspace ? GivenWorkspace : Buffers,
        r.given_workspace ? "activations and buffers (given)" : "buffers at the peak");
    add(m.planned - m.peak.peak, Margin, fmt::format("{:.0f}% planning margin", spec.margin * 100));
    chart.bars.push_back(std::move(item));
  }
  return chart;
}

BarChart plan_deadline_chart(const PlanSpec& spec, const PlanEvaluation& ev) {
  BarChart chart;
  chart.unit = "days";
  chart.legend = deadline_legend();
  chart.emphasis_label = "misses the deadline";
  chart.lines.push_back({days(spec.deadline), fmt::format("deadline {:g} days", days(spec.deadline))});
  for (const PlanResult& r : ev.results) {
    if (!r.time) continue;
    const TimePlan& t = *r.time;
    BarItem item;
    item.label = r.name;
    item.emphasis = !t.meets();
    item.note = fmt::format("{:.1f} {}", days(t.completion), t.meets() ? "meets" : "misses");
    const std::string whole = t.meets() ? fmt::format("{}: done after {:.1f} days, {:.1f} days before the deadline",
                                                      r.name, days(t.completion), days(t.deadline - t.completion))
                                        : fmt::format("{}: done after {:.1f} days, {:.1f} days after the deadline",
                                                      r.name, days(t.completion), days(t.completion - t.deadline));
    const auto add = [&](Time span, int swatch, const std::string& what) {
      if (span <= 0) return;
      item.segments.push_back({days(span), swatch, fmt::format("{}: {:.2f} days\n{}", what, days(span), whole)});
    };
    add(spec.reserved, Reserved, "reserved (start-up, evaluation, planned pauses)");
    add(t.base_training, Training, fmt::format("training: {} steps x {:.2f} s", t.steps, to_s(t.step)));
    add(t.completion - spec.reserved - t.base_training, Overhead,
        fmt::format("checkpoint overhead {:.2f}% (saves {:.2f}%, redo and restores {:.2f}%)", t.overhead.total() * 100,
                    t.overhead.save * 100, t.overhead.redo * 100));
    chart.bars.push_back(std::move(item));
  }
  return chart;
}

std::string plan_html_report(const std::string& title, const std::string& description, const PlanScenario& ps,
                             const PlanEvaluation* ev) {
  const PlanReportParts parts = plan_report_parts(ps, ev);
  HtmlReport page(title + " \u2014 stepsim plan");
  page.heading(1, title);
  if (!description.empty()) page.paragraph(description);
  for (const auto& line : parts.about) page.paragraph(line);

  if (ps.spec && ev) {
    const PlanSpec& spec = *ps.spec;
    page.heading(2, "Verdicts", "verdicts");
    for (const auto& line : parts.verdicts) page.paragraph(line);
    if (!parts.levers.empty()) {
      page.heading(3, "What would fix it", "levers");
      for (const auto& line : parts.levers) page.paragraph(line);
    }
    page.open_row();
    const BarChart memory = plan_memory_chart(spec, *ev);
    page.figure(
        bar_chart_svg(memory, "memory-bars", 0, 0),
        "Memory per card at its peak, stacked by what holds it, and the planning margin on top; the dashed line is "
        "the usable memory. Hover a part for its size.");
    if (spec.timed()) {
      const BarChart deadline = plan_deadline_chart(spec, *ev);
      page.figure(
          bar_chart_svg(deadline, "deadline-bars", 0, 0),
          "Completion per case: reserved days, training and checkpoint overhead; the dashed line is the deadline.");
    }
    page.close_row();
    page.heading(2, "The design table", "design");
    page.table(*parts.design);
    page.heading(2, "Details", "details");
    for (const auto& t : parts.details) page.table(t);
  }
  if (parts.scale_out) {
    page.heading(2, "Scale-out", "scale-out");
    page.table(*parts.scale_out);
  }
  if (!parts.tensors.empty()) {
    page.heading(2, "Tensors", "tensors");
    for (const auto& t : parts.tensors) page.table(t);
  }
  return page.finish();
}

namespace {

enum SweepSwatch { Ok, Late, NoFit, Fits };
std::vector<Swatch> sweep_legend() {
  return {{"ok: fits and meets the deadline", "#59a14f"},
          {"late: misses the deadline", "#f28e2b"},
          {"no fit: over the usable memory", "#e15759"},
          {"fits in memory", "#59a14f"}};
}

GridCell sweep_cell(const SweepPoint& p, const std::vector<SweepAxis>& axes, const PlanSpec& spec) {
  const PlanResult& r = p.result;
  const ChartUnit unit = ChartUnit::for_usable(spec.usable);
  std::string at;
  for (std::size_t a = 0; a < axes.size(); ++a)
    at += fmt::format("{}{} = {}", a ? ", " : "", axes[a].key.name, axes[a].values[p.index[a]].label);
  GridCell cell;
  std::string detail = fmt::format("memory {} of {}", plan_memory_figure(r.memory.planned, spec.usable),
                                   plan_memory_figure(r.memory.usable, spec.usable));
  if (r.time)
    detail = fmt::format("{:.1f} days of {:g}; step {:.2f} s; {}", days(r.time->completion), days(r.time->deadline),
                         to_s(r.time->step), detail);
  cell.tip = fmt::format("{}\n{} ({})\n{}", at, plan_verdict(r), sweep_mark(r), detail);
  if (!r.memory.fits()) {
    cell.swatch = NoFit;
    cell.label = "no fit";
  } else if (r.time) {
    cell.swatch = r.time->meets() ? Ok : Late;
    cell.label = fmt::format("{:.1f}", days(r.time->completion));
  } else {
    cell.swatch = Fits;
    cell.label = fmt::format("{:.1f}", unit.of(r.memory.planned));
  }
  return cell;
}

}  // namespace

std::vector<SweepGrid> sweep_grids(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points,
                                   const PlanSpec& spec) {
  std::vector<SweepGrid> grids;
  if (axes.empty()) return grids;
  const bool one_axis = axes.size() == 1;
  const SweepAxis* down = one_axis ? nullptr : &axes[0];
  const SweepAxis& across = one_axis ? axes[0] : axes[1];
  const std::size_t nc = across.values.size();
  const std::size_t nr = down ? down->values.size() : 1;
  // A grid per combination of the further axes' values, in the order the points first show it.
  std::map<std::vector<std::size_t>, std::size_t> grid_of;
  for (const SweepPoint& p : points) {
    const std::vector<std::size_t> rest(
        p.index.begin() + std::min<std::ptrdiff_t>(2, static_cast<std::ptrdiff_t>(axes.size())), p.index.end());
    auto [it, added] = grid_of.try_emplace(rest, grids.size());
    if (added) {
      SweepGrid g;
      for (std::size_t a = 2; a < axes.size(); ++a)
        g.heading += fmt::format("{}{} = {}", a > 2 ? ", " : "", axes[a].key.name, axes[a].values[rest[a - 2]].label);
      g.chart.legend = sweep_legend();
      g.chart.column_title = across.key.name;
      g.chart.row_title = down ? down->key.name : "";
      for (const auto& v : across.values) g.chart.columns.push_back(v.label);
      if (down)
        for (const auto& v : down->values) g.chart.rows.push_back(v.label);
      else
        g.chart.rows.push_back("");
      g.chart.cells.resize(nr * nc);
      grids.push_back(std::move(g));
    }
    const std::size_t row = one_axis ? 0 : p.index[0], col = one_axis ? p.index[0] : p.index[1];
    grids[it->second].chart.cells[row * nc + col] = sweep_cell(p, axes, spec);
  }
  return grids;
}

std::string sweep_html_report(const std::string& title, const std::string& description, const std::string& base_case,
                              const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points,
                              const PlanSpec& spec) {
  // Beyond these the page would be too heavy to open; the CSV holds every combination.
  constexpr std::size_t kMaxCells = 20000, kMaxTableRows = 2000;
  HtmlReport page(title + " \u2014 stepsim plan sweep");
  page.heading(1, title);
  if (!description.empty()) page.paragraph(description);
  std::string varied;
  for (const auto& a : axes)
    varied += fmt::format("{}{} ({} values)", varied.empty() ? "" : ", ", a.key.name, a.values.size());
  page.paragraph(fmt::format("Sweep from {} over {}.", base_case, varied));
  page.paragraph(sweep_summary(points, spec) + ".");

  page.heading(2, "Verdicts", "verdicts");
  if (points.size() > kMaxCells) {
    page.paragraph(fmt::format("{} combinations are too many to draw (at most {}); --csv lists them all.",
                               points.size(), kMaxCells));
  } else {
    page.paragraph(
        spec.timed()
            ? "Each cell is one combination: its completion in days, coloured by the verdict. Hover a cell for "
              "its step time and memory."
            : fmt::format("Each cell is one combination: its planned memory per card in {}, coloured by the "
                          "verdict. Hover a cell for the exact figure.",
                          ChartUnit::for_usable(spec.usable).name));
    // Several grids (a third axis and more) side by side, each named by its further values.
    const auto grids = sweep_grids(axes, points, spec);
    page.open_row();
    for (std::size_t i = 0; i < grids.size(); ++i)
      page.figure(grid_svg(grids[i].chart, fmt::format("grid{}", i)), grids[i].heading);
    page.close_row();
  }
  page.heading(2, "Table", "table");
  const CaptionedTable table = sweep_table(axes, points, spec);
  if (table.table.rows().size() > kMaxTableRows)
    page.paragraph(
        fmt::format("The table has {} rows: too many for the page; --csv lists them all.", table.table.rows().size()));
  else
    page.table(table);
  return page.finish();
}

}  // namespace stepsim::cli
