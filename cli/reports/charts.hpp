#pragma once
// Chart models: what a picture shows, as plain values, independent of how it is drawn. A
// scenario kind turns its run into these (pipeline: cli/pipeline_pictures.hpp); the renderers
// draw them as SVG for the HTML report (cli/svg_charts.hpp) or as text (cli/text_gantt.hpp).
//
//  * TimelineChart: named tracks (a device's compute stream, a link, a communication stream)
//    holding bars in time, e.g. every op of a simulated step.
//  * CurveChart: step functions over the same time axis, e.g. a device's memory.
//  * BarChart: one (possibly stacked) bar per item, e.g. resident micro-batches per stage or
//    memory per configuration, with reference lines such as a card's capacity; or, with `bins`,
//    a histogram whose bars are adjacent bins of a numeric axis, with markers on that axis.
//  * GridChart: cells coloured by category over two varied inputs (a heat map of verdicts).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/time.hpp"

namespace stepsim::cli {

// A legend entry: what a colour means. `letter` stands for it in text renderings; a letter or
// digit is also shown before the label in legends ("F forward").
struct Swatch {
  std::string label;
  std::string colour;  // CSS colour, e.g. "#4e79a7"
  char letter = ' ';
};

struct TimeBar {
  Time start = 0, end = 0;
  int swatch = 0;         // index into TimelineChart::legend
  std::string label;      // short text drawn on the bar if it fits (a micro-batch number)
  std::string tip;        // shown on hover: what the bar is, when it starts and ends
  bool emphasis = false;  // drawn outlined, e.g. communication the compute stream waits on
};

struct TimeTrack {
  std::string label;
  std::vector<TimeBar> bars;  // in start order
  // A minor track (a link, a communication stream) is drawn thinner, and text renderings that
  // show one row per device leave it out.
  bool minor = false;
  // Idle time between bars (and up to TimelineChart::end) is drawn and named on hover.
  bool show_idle = false;
  // Idle intervals with a cause, e.g. a compute stream waiting on communication: not work, so
  // not bars, but drawn over the idle time in their swatch's colour (outlined when emphasised)
  // with their own hover text. In start order, within idle time.
  std::vector<TimeBar> waits;
};

struct TimelineChart {
  std::vector<Swatch> legend;
  std::vector<TimeTrack> tracks;
  Time end = 0;                // when the simulated work ends (the step time); the axis may reach further
  std::string emphasis_label;  // legend text for emphasised bars, e.g. "exposed communication"
};

// A horizontal line across a chart at a value, e.g. "capacity 1024 MiB" (or, as a histogram's
// marker, a vertical line at a value of its bin axis, e.g. "deadline 30 days").
struct ReferenceLine {
  double value = 0;
  std::string label;
  std::string colour =
      {};  // CSS colour; empty: the renderer's reference red ("= {}" keeps {value, label} warning-free)
};

struct CurveSeries {
  std::string label;
  std::string colour;
  std::vector<std::pair<Time, double>> steps;   // value from each time on, in time order
  std::optional<std::pair<Time, double>> peak;  // marked with a dot and `peak_label`
  std::string peak_label;
};

struct CurveChart {
  std::string unit;  // of the values, e.g. "MiB"
  std::vector<CurveSeries> series;
  std::vector<ReferenceLine> lines;
  Time end = 0;  // the curves hold their last value until here
};

struct BarSegment {
  double value = 0;
  int swatch = 0;  // index into BarChart::legend
  std::string tip;
};

struct BarItem {
  std::string label;                 // under the bar
  std::vector<BarSegment> segments;  // stacked bottom-up; one segment for a plain bar
  std::string note;                  // over the bar, e.g. its total
  bool emphasis = false;             // outlined, note in the emphasis colour: e.g. a plan over capacity
};

// The numeric axis of a histogram: bar i covers [low + i width, low + (i + 1) width).
struct BinAxis {
  double low = 0;
  double width = 1;
  std::string unit;  // axis title, e.g. "completion (days)"
};

struct BarChart {
  std::string unit;  // of the values, for the axis title
  std::vector<Swatch> legend;
  std::vector<BarItem> bars;
  std::vector<ReferenceLine> lines;
  bool integer_values = false;  // axis ticks on whole numbers only (counts)
  std::string emphasis_label;   // legend text for emphasised bars, e.g. "over capacity"
  // Set: a histogram. Bars are drawn as adjacent bins (their labels are not drawn; say what a
  // bin holds in its tips) and `markers` as vertical lines at values of the bin axis.
  std::optional<BinAxis> bins;
  std::vector<ReferenceLine> markers;
};

// Cells coloured by category over two varied inputs, e.g. a sweep's verdict (ok / late / no fit)
// per number of cards and efficiency.
struct GridCell {
  int swatch = 0;     // index into GridChart::legend
  std::string label;  // drawn in the cell if it fits
  std::string tip;    // shown on hover
};

struct GridChart {
  std::string row_title, column_title;     // what varies down and across
  std::vector<std::string> rows, columns;  // their values
  std::vector<Swatch> legend;
  std::vector<GridCell> cells;  // row by row: rows.size() x columns.size()
};

// A round step for axis ticks: 1, 2 or 5 times a power of ten, at least span / max_ticks.
double nice_step(double span, int max_ticks);

// The unit of a time axis spanning `span_ms`: ms for the book's steps, s / min / h once the ticks
// would read like "50000" (a 52.8 s ZeRO-3 step). Used by the SVG charts and the text Gantt.
struct AxisUnit {
  double ms = 1;  // milliseconds per unit
  const char* name = "ms";
};
AxisUnit axis_unit(double span_ms);

}  // namespace stepsim::cli
