#pragma once
// A timeline chart as plain text, for terminals (people working over SSH): one row per major
// track (a device), and optionally per minor track (a link, indented), scaled to a given width,
// with a time axis and a legend.
//
// Each row is cut into equal cells of time. A bar owns the cells whose boundaries its start and
// end round to (at least one cell; a later bar squeezed to nothing takes the cell its start falls
// in). A bar's cells read as its letter, then its label if it fits, then its letter in lower case:
// `F3fff` is a forward of micro-batch 3, `B0bbbbb` a backward. Idle cells are `.`; cells after
// the chart's end (on an axis shared with a longer run) are blank. A track's waits
// (TimeTrack::waits) are drawn the same way in cells no bar takes. Deterministic for a width.
#include <string>

#include "cli/reports/charts.hpp"

namespace stepsim::cli {

inline constexpr int kMinGanttWidth = 40;
inline constexpr int kMaxGanttWidth = 10'000;  // --width past it is refused
inline constexpr int kDefaultTerminalWidth = 100;

// Columns of the terminal: $COLUMNS if it is a number, else the width of the terminal on
// stdout (TIOCGWINSZ), else kDefaultTerminalWidth.
int terminal_columns();

// The chart's major tracks (and with `minor_rows` its minor ones) in `width` columns (at least
// kMinGanttWidth) over 0 .. axis_end.
std::string timeline_text(const TimelineChart& chart, Time axis_end, int width, bool minor_rows = false);

// One line naming the letters of the swatches the rows use, and the idle mark.
std::string timeline_text_legend(const TimelineChart& chart, bool minor_rows = false);

}  // namespace stepsim::cli
