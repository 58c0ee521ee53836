#pragma once
// SVG renderings of the chart models (cli/charts.hpp) for the HTML report.
//
// Charts over time share one layout so that, stacked on a page, a timeline and a curve with the
// same `axis_end` line up pixel for pixel: time 0 .. axis_end maps to
// [left, left + plot_width]. Pass the longest run's end as `axis_end` to compare runs by eye.
//
// Every timeline bar is one <rect class="bar"> with a <title> (its hover text); idle gaps are
// <rect class="idle">, waits (TimeTrack::waits) <rect class="wait"> with a <title>; bar-chart
// columns (and histogram bins) are <rect class="col">; grid cells are <rect class="cell">, each
// with a <title> too. Output is deterministic:
// coordinates are printed with one decimal.
#include <string>

#include "cli/reports/charts.hpp"

namespace stepsim::cli {

struct SvgLayout {
  int left = 120;         // track labels and value axis
  int plot_width = 1160;  // pixels for the time axis
  int right = 24;
  // Hover texts on bars narrower than a pixel, and idle gaps narrower than a pixel at all. A long
  // step's full view has thousands (the ZeRO-3 design case: ~1,500 per run); with zoomed views
  // beside it, where the ends of the step are wide enough to hover, leaving them out takes the
  // design case's compare page from 3.9 to 2.2 MB.
  bool sliver_tips = true;
};

// A part of the time axis for a zoomed view: [start, end] maps to the plot's width.
struct TimeWindow {
  Time start = 0, end = 0;
};

// `id` must be unique in the page (it names the chart's patterns).
std::string timeline_svg(const TimelineChart& chart, const std::string& id, Time axis_end,
                         const SvgLayout& layout = {});
// The part of the chart inside `window`: bars, waits and idle gaps that reach into it, clipped to
// it (a zero-length bar counts when its time is inside); the legend names what is visible.
std::string timeline_svg(const TimelineChart& chart, const std::string& id, TimeWindow window,
                         const SvgLayout& layout = {});

// `y_max` <= 0: the largest value (or reference line) plus a margin.
std::string curve_svg(const CurveChart& chart, const std::string& id, Time axis_end, double y_max,
                      const SvgLayout& layout = {});

// `width` <= 0: wide enough that the labels under the bars and the notes over them do not collide.
// With chart.bins: a histogram over `width` pixels, bins side by side on a numbered axis that also
// reaches the markers up to one bins' span away; a marker further out is named at the plot's edge
// with an arrow (a deadline weeks after runs that all take days would squash the bins).
std::string bar_chart_svg(const BarChart& chart, const std::string& id, double y_max, int width = 420);

// Cells as wide as their longest label needs, up to `max_width` pixels in all; when the columns
// do not fit, the cells get narrower and drop the labels that no longer fit.
std::string grid_svg(const GridChart& chart, const std::string& id, int max_width = 1300);

}  // namespace stepsim::cli
