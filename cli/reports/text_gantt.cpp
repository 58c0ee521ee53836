#include "cli/reports/text_gantt.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "cli/reports/table.hpp"

namespace stepsim::cli {

int terminal_columns() {
  if (const char* env = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n > 0 && n < 100000) return static_cast<int>(n);
  }
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return kDefaultTerminalWidth;
}

namespace {

// What stands for a swatch in text: its letter, or '#' for one without.
char letter_of(const TimelineChart& chart, int swatch) {
  const bool named =
      swatch >= 0 && swatch < static_cast<int>(chart.legend.size()) && chart.legend[swatch].letter != ' ';
  return named ? chart.legend[swatch].letter : '#';
}

// The cell boundary nearest to time t when `cells` cells cover 0 .. axis_end.
int nearest_cell(Time t, Time axis_end, int cells) {
  const __int128 num = static_cast<__int128>(t) * cells;
  return static_cast<int>((num + axis_end / 2) / axis_end);
}

}  // namespace

std::string timeline_text(const TimelineChart& chart, Time axis_end, int width, bool minor_rows) {
  axis_end = std::max({axis_end, chart.end, Time{1}});
  width = std::max(width, kMinGanttWidth);
  const auto row_label = [](const TimeTrack& t) { return t.minor ? "  " + t.label : t.label; };
  std::size_t label_w = 0;
  for (const auto& t : chart.tracks)
    if (!t.minor || minor_rows) label_w = std::max(label_w, display_width(row_label(t)));
  const int cells = width - static_cast<int>(label_w) - 3;  // "label |cells|"
  std::string out;
  const auto pad = [&](const std::string& s) { return s + std::string(label_w - display_width(s), ' '); };

  for (const auto& t : chart.tracks) {
    if (t.minor && !minor_rows) continue;
    // What each cell shows: an index into `items` (the track's waits, then its bars, so that a
    // bar wins a cell from a wait).
    std::vector<const TimeBar*> items;
    for (const auto& w : t.waits) items.push_back(&w);
    for (const auto& b : t.bars) items.push_back(&b);
    constexpr int kFree = -1;
    std::vector<int> owner(cells, kFree);
    for (std::size_t b = 0; b < items.size(); ++b) {
      const TimeBar& bar = *items[b];
      const int first = std::clamp(nearest_cell(bar.start, axis_end, cells), 0, cells - 1);
      const int last = std::clamp(nearest_cell(bar.end, axis_end, cells), 0, cells);
      if (last <= first) {
        // Too short for a cell of its own: take the cell its start falls in.
        const int c = std::clamp(static_cast<int>(static_cast<__int128>(bar.start) * cells / axis_end), 0, cells - 1);
        owner[c] = static_cast<int>(b);
        continue;
      }
      for (int c = first; c < last; ++c) owner[c] = static_cast<int>(b);
    }
    const int end_cell = std::clamp(nearest_cell(chart.end, axis_end, cells), 0, cells);
    std::string row(cells, ' ');
    for (int c = 0; c < cells;) {
      if (owner[c] == kFree) {
        row[c] = c < end_cell ? '.' : ' ';
        ++c;
        continue;
      }
      int e = c;
      while (e < cells && owner[e] == owner[c]) ++e;
      const TimeBar& bar = *items[owner[c]];
      const char letter = letter_of(chart, bar.swatch);
      const char fill = static_cast<char>(std::tolower(static_cast<unsigned char>(letter)));
      std::string text = std::string(1, letter);
      if (static_cast<int>(bar.label.size()) + 1 <= e - c) text += bar.label;
      text.resize(e - c, fill);
      row.replace(c, e - c, text);
      c = e;
    }
    out += pad(row_label(t)) + " |" + row + "|\n";
  }

  // The axis under the cells: position k marks the boundary before cell k (k = cells: the right
  // border); a '+' on each labelled time, its label starting under it where it fits.
  const AxisUnit unit = axis_unit(to_ms(axis_end));
  const double span = to_ms(axis_end) / unit.ms;
  const double step = nice_step(span, std::max(2, cells / 10));
  std::string ticks(cells + 1, '-'), labels(cells + 12, ' ');
  int free_from = 0;
  for (long k = 0; static_cast<double>(k) * step <= span + 1e-9; ++k) {
    const double v = static_cast<double>(k) * step;
    const int c = static_cast<int>(std::lround(v / span * cells));
    ticks[c] = '+';
    const std::string text = step >= 1 ? fmt::format("{:.0f}", v) : fmt::format("{:g}", v);
    if (c >= free_from && c + text.size() <= labels.size()) {
      labels.replace(c, text.size(), text);
      free_from = c + static_cast<int>(text.size()) + 1;
    }
  }
  while (!labels.empty() && labels.back() == ' ') labels.pop_back();
  out += pad("") + "  " + ticks + "\n";
  out += pad(unit.name) + "  " + labels + "\n";
  return out;
}

std::string timeline_text_legend(const TimelineChart& chart, bool minor_rows) {
  std::vector<bool> used(chart.legend.size(), false);
  bool idle = false;
  for (const auto& t : chart.tracks) {
    if (t.minor && !minor_rows) continue;
    idle = idle || t.show_idle || minor_rows;
    for (const auto* list : {&t.bars, &t.waits})
      for (const auto& b : *list)
        if (b.swatch >= 0 && b.swatch < static_cast<int>(used.size())) used[b.swatch] = true;
  }
  std::string out;
  for (std::size_t s = 0; s < chart.legend.size(); ++s)
    if (used[s])
      out +=
          fmt::format("{}{} {}", out.empty() ? "" : "  ", letter_of(chart, static_cast<int>(s)), chart.legend[s].label);
  if (idle) out += fmt::format("{}. idle", out.empty() ? "" : "  ");
  return out;
}

}  // namespace stepsim::cli
