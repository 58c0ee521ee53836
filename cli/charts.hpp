#pragma once
// Chart models: what a picture shows, as plain values, independent of how it is drawn. A
// scenario kind turns its run into these (pipeline: cli/pipeline_pictures.hpp); the renderers
// draw them as SVG for the HTML report (cli/svg_charts.hpp) or as text (cli/text_gantt.hpp).
//
//  * TimelineChart: named tracks (a device's compute stream, a link, a communication stream)
//    holding bars in time, e.g. every op of a simulated step.
//  * CurveChart: step functions over the same time axis, e.g. a device's memory.
//  * BarChart: one (possibly stacked) bar per item, e.g. resident micro-batches per stage or
//    memory per configuration, with reference lines such as a card's capacity.
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
  bool emphasis = false;  // drawn outlined, e.g. communication that is not hidden behind compute
};

struct TimeTrack {
  std::string label;
  std::vector<TimeBar> bars;  // in start order
  // A minor track (a link, a communication stream) is drawn thinner, and text renderings that
  // show one row per device leave it out.
  bool minor = false;
  // Idle time between bars (and up to TimelineChart::end) is drawn and named on hover.
  bool show_idle = false;
};

struct TimelineChart {
  std::vector<Swatch> legend;
  std::vector<TimeTrack> tracks;
  Time end = 0;  // when the simulated work ends (the step time); the axis may reach further
  std::string emphasis_label;  // legend text for emphasised bars, e.g. "exposed communication"
};

// A horizontal line across a chart at a value, e.g. "capacity 1024 MiB".
struct ReferenceLine {
  double value = 0;
  std::string label;
};

struct CurveSeries {
  std::string label;
  std::string colour;
  std::vector<std::pair<Time, double>> steps;  // value from each time on, in time order
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
  std::string label;  // under the bar
  std::vector<BarSegment> segments;  // stacked bottom-up; one segment for a plain bar
  std::string note;   // over the bar, e.g. its total
};

struct BarChart {
  std::string unit;  // of the values, for the axis title
  std::vector<Swatch> legend;
  std::vector<BarItem> bars;
  std::vector<ReferenceLine> lines;
  bool integer_values = false;  // axis ticks on whole numbers only (counts)
};

// A round step for axis ticks: 1, 2 or 5 times a power of ten, at least span / max_ticks.
double nice_step(double span, int max_ticks);

}  // namespace stepsim::cli
