#pragma once
// Pictures of a run from its timelines alone: the HTML page and the text Gantt chart that any
// scenario kind gets once it can turn its run into TimelineCharts (cli/charts.hpp). The rl and moe
// kinds use these for `run --html` / `run --gantt` (cli/rl_pictures.hpp, cli/moe_pictures.hpp).
#include <string>
#include <vector>

#include "cli/reports/charts.hpp"

namespace stepsim::cli {

// One timeline of a run, with the heading it goes under and the end of its time axis (charts
// meant to be compared by eye share one axis_end).
struct TitledTimeline {
  std::string title;
  std::string caption;  // under the figure in HTML, empty: none
  TimelineChart chart;
  Time axis_end = 0;
};

// The page: the title, the description, the text report in a monospaced block (the very table
// `run` prints), a paragraph on how to read the timelines, then each timeline under its title.
std::string timeline_html_report(const std::string& title, const std::string& description,
                                 const std::string& text_report, const std::string& how_to_read,
                                 const std::vector<TitledTimeline>& timelines);

// Each timeline as text (its title, then its rows, minor tracks included), `width` columns wide,
// then one legend naming the letters any of them uses and `how_to_read`.
std::string timeline_gantt_text(const std::vector<TitledTimeline>& timelines, int width,
                                const std::string& how_to_read);

// Bars in start order (ties: the earlier end first), as TimeTrack requires.
void sort_bars(TimeTrack& track);

}  // namespace stepsim::cli
