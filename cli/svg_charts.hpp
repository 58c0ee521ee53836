#pragma once
// SVG renderings of the chart models (cli/charts.hpp) for the HTML report.
//
// Charts over time share one layout so that, stacked on a page, a timeline and a curve with the
// same `axis_end` line up pixel for pixel: time 0 .. axis_end maps to
// [left, left + plot_width]. Pass the longest run's end as `axis_end` to compare runs by eye.
//
// Every timeline bar is one <rect class="bar"> with a <title> (its hover text); idle gaps are
// <rect class="idle">; bar-chart columns are <rect class="col">. Output is deterministic:
// coordinates are printed with one decimal.
#include <string>

#include "cli/charts.hpp"

namespace stepsim::cli {

struct SvgLayout {
  int left = 120;         // track labels and value axis
  int plot_width = 1160;  // pixels for the time axis
  int right = 24;
};

// `id` must be unique in the page (it names the chart's patterns).
std::string timeline_svg(const TimelineChart& chart, const std::string& id, Time axis_end, const SvgLayout& layout = {});

// `y_max` <= 0: the largest value (or reference line) plus a margin.
std::string curve_svg(const CurveChart& chart, const std::string& id, Time axis_end, double y_max,
                      const SvgLayout& layout = {});

std::string bar_chart_svg(const BarChart& chart, const std::string& id, double y_max, int width = 420);

}  // namespace stepsim::cli
