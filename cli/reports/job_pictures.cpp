#include "cli/reports/job_pictures.hpp"
#include "cli/reports/quantities.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cli/reports/html_report.hpp"
#include "cli/reports/svg_charts.hpp"
#include "cli/reports/table.hpp"
#include "models/units.hpp"

namespace stepsim::cli {

namespace {

// Completion times in days for runs of days, hours for runs of hours, minutes from 20 min, else
// seconds.
struct TimeUnit {
  double seconds = 1;
  const char* name = "s";
  static TimeUnit for_longest(Time t) {
    if (to_s(t) >= 2 * 86400.0) return {86400.0, "days"};
    if (to_s(t) >= 2 * 3600.0) return {3600.0, "h"};
    if (to_s(t) >= 20 * 60.0) return {60.0, "min"};
    return {1.0, "s"};
  }
  double of(Time t) const { return to_s(t) / seconds; }
};

// Enough decimals to tell bins `width` apart.
int decimals_for(double width) { return std::clamp(static_cast<int>(std::ceil(-std::log10(width) - 1e-9)), 0, 4); }
std::string fixed(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

enum CompletionSwatch { InTime, Late };
enum OverheadSwatch { Saving, Redo, Restore };

}  // namespace

BarChart job_completion_histogram(const JobAnalysis& a, int bins) {
  const JobSpec& s = a.spec;
  const JobSummary& m = a.summary;
  const Histogram h = make_histogram(completion_times(s, m), bins);
  const TimeUnit unit = TimeUnit::for_longest(std::max(m.completion.max, s.deadline));
  BarChart chart;
  chart.unit = "runs";
  chart.integer_values = true;
  chart.legend = {{"runs", "#4e79a7"}};
  if (s.deadline > 0) chart.legend.push_back({"runs after the deadline", "#f28e2b"});
  // All runs equal (no failures, or failures at given times): one bin, 0.2% of the value wide
  // around it.
  const double width = h.width > 0 ? unit.of(h.width) : std::max(unit.of(h.low) * 0.002, 1e-3);
  const int decimals = h.width > 0 ? decimals_for(width) : 3;
  chart.bins = BinAxis{h.width > 0 ? unit.of(h.low) : unit.of(h.low) - width / 2, width,
                       fmt::format("completion ({})", unit.name)};
  for (std::size_t b = 0; b < h.counts.size(); ++b) {
    const Time lo = h.low + static_cast<Time>(b) * h.width;
    const bool late = s.deadline > 0 && lo > s.deadline;
    BarItem item;
    item.label = fixed(unit.of(lo), decimals);
    const std::string range = h.width > 0 ? fmt::format("{} to {} {}", fixed(unit.of(lo), decimals),
                                                        fixed(unit.of(lo + h.width), decimals), unit.name)
                                          : fmt::format("{} {}", fixed(unit.of(lo), decimals), unit.name);
    item.segments.push_back(
        {static_cast<double>(h.counts[b]), late ? Late : InTime,
         fmt::format("completion {}: {} of {} ({:.1f}%){}", range, h.counts[b], counted(m.runs, "run"),
                     m.runs > 0 ? 100.0 * h.counts[b] / m.runs : 0.0, late ? ", after the deadline" : "")});
    chart.bars.push_back(std::move(item));
  }
  // Two decimals, as the completion table prints them (the bins may need more to be told apart).
  const auto marker = [&](const char* name, Time t) {
    chart.markers.push_back({unit.of(t), fmt::format("{} {}", name, fixed(unit.of(t), 2)), "#333"});
  };
  marker("P50", m.completion.p50);
  marker("P90", m.completion.p90);
  marker("P99", m.completion.p99);
  if (s.deadline > 0)
    chart.markers.push_back({unit.of(s.deadline), fmt::format("deadline {:g} {}", unit.of(s.deadline), unit.name), ""});
  return chart;
}

BarChart job_overhead_chart(const JobAnalysis& a) {
  const JobSpec& s = a.spec;
  BarChart chart;
  chart.unit = "% of the work";
  chart.legend = {{"saving", "#4e79a7"}, {"redo", "#f28e2b"}, {"restore", "#e15759"}};
  const auto bar = [&](const std::string& label, const MeanEstimate& total, const MeanEstimate& saving,
                       const MeanEstimate& redo, const MeanEstimate& restore) {
    BarItem item;
    item.label = label;
    item.note = fmt::format("{:.2f}%", 100.0 * total.mean);
    const auto add = [&](const MeanEstimate& e, int swatch, const char* what) {
      if (e.mean <= 0) return;
      item.segments.push_back(
          {100.0 * e.mean, swatch,
           fmt::format("{}: {}: {} +- {} of the work\n(total {} +- {})", label, what, percent(e.mean, 3),
                       percent(e.se, 3), percent(total.mean, 3), percent(total.se, 3))});
    };
    add(saving, Saving, "saving");
    add(redo, Redo, "redo");
    add(restore, Restore, "restore");
    chart.bars.push_back(std::move(item));
  };
  const auto label = [&](std::int64_t every) {
    return every > 0 ? fmt::format("every {}", format_duration(checkpoint_interval_of(s, every)))
                     : std::string("no checkpoints");
  };
  // The scenario's own interval first, unless it is one of those compared (same runs, same figures).
  const std::int64_t chosen = s.checkpoint.every_steps;
  const bool compared =
      std::any_of(a.sweep.begin(), a.sweep.end(), [&](const IntervalResult& p) { return p.every_steps == chosen; });
  const JobSummary& m = a.summary;
  if (!compared) bar(label(chosen), m.overhead, m.saving, m.redo, m.restore);
  for (const auto& p : a.sweep)
    bar(label(p.every_steps) + (p.every_steps == chosen ? " *" : ""), p.overhead, p.saving, p.redo, p.restore);
  return chart;
}

BarChart job_cases_chart(const std::vector<const JobAnalysis*>& analyses, const std::vector<std::string>& cases) {
  Time longest = 0;
  for (const JobAnalysis* a : analyses) longest = std::max({longest, a->summary.completion.max, a->spec.deadline});
  const TimeUnit unit = TimeUnit::for_longest(longest);
  BarChart chart;
  chart.unit = fmt::format("mean completion ({})", unit.name);
  chart.legend = {{"mean completion", "#4e79a7"}};
  chart.emphasis_label = "does not meet the deadline";
  Time deadline = 0;
  for (std::size_t i = 0; i < analyses.size(); ++i) {
    const JobAnalysis& a = *analyses[i];
    const TimeDistribution& d = a.summary.completion;
    const double mean = d.seconds.mean / unit.seconds;
    BarItem item;
    item.label = i < cases.size() ? cases[i] : a.name;
    item.note = fmt::format("{:.1f}, P99 {:.1f}", mean, unit.of(d.p99));
    item.emphasis = a.summary.meet_probability && *a.summary.meet_probability < 0.9;
    item.segments.push_back(
        {mean, 0,
         fmt::format("{}: {}, mean completion {:.2f} {}; P50 {:.2f}, P90 {:.2f}, P99 {:.2f}{}", item.label,
                     counted(a.spec.cards, "card"), mean, unit.name, unit.of(d.p50), unit.of(d.p90), unit.of(d.p99),
                     a.summary.meet_probability ? fmt::format("; meets the deadline in {:.1f}% of the runs",
                                                              100.0 * *a.summary.meet_probability)
                                                : "")});
    chart.bars.push_back(std::move(item));
    deadline = std::max(deadline, a.spec.deadline);
  }
  if (deadline > 0)
    chart.lines.push_back({unit.of(deadline), fmt::format("deadline {:g} {}", unit.of(deadline), unit.name)});
  return chart;
}

namespace {

// One analysis: the verdict, the histogram and the tables; the overhead split. `n` numbers its
// anchors and chart ids, unique in the page.
void job_section(HtmlReport& page, const JobAnalysis& a, const std::string& heading, std::size_t n) {
  const std::string id = n == 0 ? "" : fmt::format("-{}", n);
  const int level = heading.empty() ? 2 : 3;
  if (!heading.empty()) page.heading(2, heading, fmt::format("case{}", id));
  for (const auto& line : job_about(a)) page.paragraph(line);

  page.heading(level, "Completion time", "completion" + id);
  CaptionedTable completion = job_completion_table(a);
  if (!completion.outro.empty()) page.paragraph(completion.outro);  // the verdict first, then the picture
  completion.outro.clear();
  page.figure(
      bar_chart_svg(job_completion_histogram(a, 24), "completion-histogram" + id, 0, 760),
      // Only what the scenario has: no reserved time or deadline, no words about them.
      fmt::format("Completion times of the {}{} in 24 bins; the dashed lines mark the percentiles{}. Hover a bin "
                  "for its runs.",
                  counted(a.summary.runs, "run"), a.spec.reserved > 0 ? " (reserved time included)" : "",
                  a.spec.deadline > 0 ? " and the deadline" : ""));
  page.table(completion);

  page.heading(level, "Overhead", "overhead" + id);
  page.figure(bar_chart_svg(job_overhead_chart(a), "overhead-bars" + id, 0, 0),
              a.sweep.empty()
                  ? "Mean overhead over the runs, split into saving, redo and restore, as a share of the work."
                  : "Mean overhead over the same runs (hence the same failures) for each checkpoint interval, split "
                    "into saving, redo and restore, as a share of the work; * the scenario's interval.");
  page.table(job_overhead_table(a));
  if (const auto intervals = job_interval_table(a)) page.table(*intervals);
}

}  // namespace

std::string job_html_report(const std::string& title, const std::string& description,
                            const std::vector<const JobAnalysis*>& analyses, const std::vector<std::string>& cases) {
  HtmlReport page(title + " \u2014 stepsim job");
  page.heading(1, title);
  if (!description.empty()) page.paragraph(description);
  if (cases.empty()) {
    for (std::size_t i = 0; i < analyses.size(); ++i) job_section(page, *analyses[i], "", i);
    return page.finish();
  }
  page.heading(2, "Cases", "cases");
  page.paragraph("One job per case of the plan: its cards and step time from the planner.");
  page.table(job_cases_table(cases, analyses));
  const bool any_deadline =
      std::any_of(analyses.begin(), analyses.end(), [](const JobAnalysis* a) { return a->spec.deadline > 0; });
  page.figure(bar_chart_svg(job_cases_chart(analyses, cases), "cases-bars", 0, 0),
              any_deadline
                  ? "Mean completion per case against the deadline; outlined: met in fewer than 90% of the runs."
                  : "Mean completion per case.");
  for (std::size_t i = 0; i < analyses.size(); ++i)
    job_section(page, *analyses[i], i < cases.size() ? cases[i] : analyses[i]->name, i + 1);
  return page.finish();
}

}  // namespace stepsim::cli
