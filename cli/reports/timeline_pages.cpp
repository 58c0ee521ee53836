#include "cli/reports/timeline_pages.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cli/reports/html_report.hpp"
#include "cli/reports/svg_charts.hpp"
#include "cli/reports/text_gantt.hpp"

namespace stepsim::cli {

std::string timeline_html_report(const std::string& title, const std::string& description,
                                 const std::string& text_report, const std::string& how_to_read,
                                 const std::vector<TitledTimeline>& timelines) {
  HtmlReport page(title + " \u2014 stepsim report");
  page.heading(1, title);
  if (!description.empty()) page.paragraph(description);
  page.heading(2, "Summary", "summary");
  page.preformatted(text_report);
  page.heading(2, "Timelines", "timelines");
  if (!how_to_read.empty()) page.paragraph(how_to_read);
  for (std::size_t i = 0; i < timelines.size(); ++i) {
    const auto& t = timelines[i];
    page.heading(3, t.title, fmt::format("timeline{}", i));
    page.figure(timeline_svg(t.chart, fmt::format("timeline{}", i), std::max(t.axis_end, t.chart.end)), t.caption);
  }
  return page.finish();
}

std::string timeline_gantt_text(const std::vector<TitledTimeline>& timelines, int width,
                                const std::string& how_to_read) {
  std::string out;
  TimelineChart all;  // every chart's tracks under one legend (the charts of a kind share theirs)
  for (const auto& t : timelines) {
    out += t.title + "\n";
    out += timeline_text(t.chart, std::max(t.axis_end, t.chart.end), width, true);
    out += "\n";
    if (all.legend.empty()) all.legend = t.chart.legend;
    if (all.legend.size() == t.chart.legend.size())
      for (const auto& track : t.chart.tracks) all.tracks.push_back(track);
  }
  out += timeline_text_legend(all, true) + "\n";
  if (!how_to_read.empty()) out += how_to_read + "\n";
  return out;
}

void sort_bars(TimeTrack& track) {
  std::stable_sort(track.bars.begin(), track.bars.end(), [](const TimeBar& a, const TimeBar& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
}

}  // namespace stepsim::cli
