#include "cli/reports/svg_charts.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "cli/reports/html_report.hpp"

namespace stepsim::cli {

namespace {

constexpr const char* kGridMajor = "#c9c9c9";
constexpr const char* kGridMinor = "#ececec";
constexpr const char* kTrackBackground = "#f7f7f7";
constexpr const char* kEmphasis = "#d62728";
constexpr const char* kReference = "#c0392b";

// Coordinates with one decimal: enough for the eye, stable in text.
std::string n1(double v) { return fmt::format("{:.1f}", v); }
std::string ms3(Time t) { return fmt::format("{:.3f}", to_ms(t)); }

// A swatch's legend text: its letter first when it has one (F forward).
std::string legend_text(const Swatch& s) {
  return std::isalnum(static_cast<unsigned char>(s.letter)) ? fmt::format("{} {}", s.letter, s.label) : s.label;
}

std::string title(std::string_view text) { return text.empty() ? "" : "<title>" + html_escape(text) + "</title>"; }

std::string tick_label(double v, double step) {
  if (step >= 1.0) return fmt::format("{:.0f}", v);
  const int decimals = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return fmt::format("{:.{}f}", v, decimals);
}

// Readable text on a fill: dark text on light colours, white on dark ones (ITU-R BT.601 luma).
std::string text_colour_on(const std::string& fill) {
  if (fill.size() != 7 || fill[0] != '#') return "#fff";
  const auto hex = [&](std::size_t i) { return std::stoi(fill.substr(i, 2), nullptr, 16); };
  const double luma = 0.299 * hex(1) + 0.587 * hex(3) + 0.114 * hex(5);
  return luma < 150 ? "#fff" : "#222";
}

// Rough text width of the sans-serif labels, to decide what fits.
double text_width(std::string_view text, double font_px) { return 0.6 * font_px * static_cast<double>(text.size()); }

struct LegendItem {
  std::string fill;  // a colour or url(#pattern); empty with `line`
  std::string label;
  bool line = false;      // a short line (curves) instead of a square
  std::string stroke;     // outline of the square, e.g. the emphasis colour
};

// Items left to right, wrapping at `width`. Returns the markup; `height` gets its height.
std::string legend_row(const std::vector<LegendItem>& items, double x0, double y0, double width, int* height) {
  std::string out;
  double x = x0, y = y0;
  constexpr double kRow = 18;
  for (const auto& it : items) {
    const double w = 18 + text_width(it.label, 12) + 18;
    if (x > x0 && x + w > x0 + width) { x = x0; y += kRow; }
    if (it.line)
      out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2.5\"/>", n1(x), n1(y + 7),
                         n1(x + 13), n1(y + 7), it.fill);
    else
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"13\" height=\"13\" fill=\"{}\"{}/>", n1(x), n1(y + 1), it.fill,
                         it.stroke.empty() ? " stroke=\"#999\" stroke-width=\"0.5\""
                                           : fmt::format(" stroke=\"{}\" stroke-width=\"2\"", it.stroke));
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", n1(x + 18), n1(y + 12), html_escape(it.label));
    x += w;
  }
  *height = items.empty() ? 0 : static_cast<int>(y - y0 + kRow);
  return out;
}

// Ticks of a time axis in ms: labelled major ticks and unlabelled minor grid lines.
struct TimeTicks {
  double major, minor;
};
TimeTicks time_ticks(double span_ms) {
  const double major = nice_step(span_ms, 10);
  const double mantissa = major / std::pow(10.0, std::floor(std::log10(major) + 1e-9));
  return {major, major / (std::lround(mantissa) == 2 ? 4.0 : 5.0)};
}

// Grid lines over [top, bottom] and labels under `bottom` for the window's times.
std::string time_axis(const SvgLayout& L, TimeWindow w, double top, double bottom) {
  const double start_ms = to_ms(w.start), span_ms = to_ms(w.end - w.start);
  const auto [major, minor] = time_ticks(span_ms);
  const auto X = [&](double ms) { return L.left + L.plot_width * (ms - start_ms) / span_ms; };
  std::string out;
  const long first = std::lround(std::ceil(start_ms / minor - 1e-9));
  const long last = std::lround(std::floor(to_ms(w.end) / minor + 1e-9));
  const long per_major = std::lround(major / minor);
  for (long k = first; k <= last; ++k) {
    const double ms = static_cast<double>(k) * minor;
    const bool is_major = k % per_major == 0;
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1\"/>", n1(X(ms)),
                       n1(top), n1(bottom + (is_major ? 4 : 0)), is_major ? kGridMajor : kGridMinor);
    if (is_major)
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>", n1(X(ms)), n1(bottom + 16),
                         tick_label(ms, major));
    out += "\n";
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#444\">time (ms)</text>\n", L.left - 8, n1(bottom + 16));
  return out;
}

// Whether [a, b] reaches into the window: a positive length overlaps it, a zero-length one lies
// inside it.
bool in_window(Time a, Time b, TimeWindow w) { return a == b ? w.start <= a && a <= w.end : a < w.end && b > w.start; }

std::string svg_open(const std::string& id, const char* cls, int width, int height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"{0}\" class=\"{1}\" width=\"{2}\" height=\"{3}\" "
      "viewBox=\"0 0 {2} {3}\" font-size=\"12\">\n",
      html_escape(id), cls, width, height);
}

}  // namespace

std::string timeline_svg(const TimelineChart& c, const std::string& id, Time axis_end, const SvgLayout& L) {
  return timeline_svg(c, id, TimeWindow{0, std::max({axis_end, c.end, Time{1}})}, L);
}

std::string timeline_svg(const TimelineChart& c, const std::string& id, TimeWindow win, const SvgLayout& L) {
  win.end = std::max(win.end, win.start + 1);
  const double scale = L.plot_width / static_cast<double>(win.end - win.start);
  const auto X = [&](Time t) { return L.left + scale * static_cast<double>(std::clamp(t, win.start, win.end) - win.start); };
  const int width = L.left + L.plot_width + L.right;
  const std::string idle_fill = fmt::format("url(#{}-idle)", id);
  const auto fill_of = [&](int swatch) {
    return swatch >= 0 && swatch < static_cast<int>(c.legend.size()) ? c.legend[swatch].colour : std::string("#888");
  };

  std::vector<bool> used(c.legend.size(), false);
  bool any_idle = false, any_emphasis = false;
  for (const auto& t : c.tracks) {
    any_idle = any_idle || t.show_idle;
    for (const auto* list : {&t.bars, &t.waits})
      for (const auto& b : *list) {
        if (!in_window(b.start, b.end, win)) continue;
        if (b.swatch >= 0 && b.swatch < static_cast<int>(used.size())) used[b.swatch] = true;
        any_emphasis = any_emphasis || (b.emphasis && list == &t.bars);
      }
  }
  std::vector<LegendItem> items;
  for (std::size_t s = 0; s < c.legend.size(); ++s)
    if (used[s]) items.push_back({c.legend[s].colour, legend_text(c.legend[s]), false, ""});
  if (any_idle) items.push_back({idle_fill, "idle", false, ""});
  if (any_emphasis) items.push_back({"#fff", c.emphasis_label.empty() ? "emphasised" : c.emphasis_label, false, kEmphasis});
  int legend_h = 0;
  const std::string legend = legend_row(items, L.left, 2, L.plot_width, &legend_h);

  // Track rows: a major track starts a group (a device) with a little space above it.
  std::vector<double> ty(c.tracks.size()), th(c.tracks.size());
  double y = legend_h + 8;
  for (std::size_t i = 0; i < c.tracks.size(); ++i) {
    if (i > 0 && !c.tracks[i].minor) y += 6;
    th[i] = c.tracks[i].minor ? 11 : 22;
    ty[i] = y;
    y += th[i] + 2;
  }
  const double top = legend_h + 4, bottom = y + 2;
  const int height = static_cast<int>(bottom + 40);

  std::string out = svg_open(id, "timeline", width, height);
  out += fmt::format(
      "<defs><pattern id=\"{}-idle\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fff4f4\"/>"
      "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#e3a6a6\" stroke-width=\"2.5\"/></pattern></defs>\n",
      html_escape(id));
  out += legend;
  for (std::size_t i = 0; i < c.tracks.size(); ++i) {
    const auto& t = c.tracks[i];
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>", L.left, n1(ty[i]), L.plot_width,
                       n1(th[i]), kTrackBackground);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"{}\" fill=\"{}\">{}</text>\n", L.left - 8,
                       n1(ty[i] + th[i] / 2 + (t.minor ? 3.5 : 4.5)), t.minor ? 10 : 13, t.minor ? "#777" : "#222",
                       html_escape(t.label));
  }
  out += time_axis(L, win, top, bottom);

  for (std::size_t i = 0; i < c.tracks.size(); ++i) {
    const auto& t = c.tracks[i];
    if (!t.show_idle) continue;
    const auto gap = [&](Time a, Time b) {
      if (!in_window(a, b, win)) return;
      out += fmt::format("<rect class=\"idle\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">{}</rect>\n", n1(X(a)),
                         n1(ty[i]), n1(X(b) - X(a)), n1(th[i]), idle_fill,
                         title(fmt::format("{}: idle from {} to {} ms ({} ms)", t.label, ms3(a), ms3(b), ms3(b - a))));
    };
    Time cursor = 0;
    for (const auto& b : t.bars) {
      if (b.start > cursor) gap(cursor, b.start);
      cursor = std::max(cursor, b.end);
    }
    if (cursor < c.end) gap(cursor, c.end);
  }

  // Waits over the idle hatching, at least 2 px wide so that a short one is still seen.
  for (std::size_t i = 0; i < c.tracks.size(); ++i) {
    for (const auto& b : c.tracks[i].waits) {
      if (!in_window(b.start, b.end, win)) continue;
      const double x = X(b.start), w = std::max(X(b.end) - x, 2.0);
      out += fmt::format("<rect class=\"wait\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{}>{}</rect>\n", n1(x),
                         n1(ty[i]), n1(w), n1(th[i]), fill_of(b.swatch),
                         b.emphasis ? fmt::format(" stroke=\"{}\" stroke-width=\"1.5\"", kEmphasis) : "", title(b.tip));
    }
  }

  for (std::size_t i = 0; i < c.tracks.size(); ++i) {
    const auto& t = c.tracks[i];
    const double font = t.minor ? 9 : 11;
    for (const auto& b : t.bars) {
      if (!in_window(b.start, b.end, win)) continue;
      const std::string fill = fill_of(b.swatch);
      const double x = X(b.start), w = std::max(X(b.end) - x, 1.0);
      out += fmt::format("<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{}>{}</rect>", n1(x),
                         n1(ty[i]), n1(w), n1(th[i]), fill,
                         b.emphasis ? fmt::format(" stroke=\"{}\" stroke-width=\"2\"", kEmphasis)
                         // A white edge separates neighbours; on a bar a few pixels wide it would hide the fill.
                         : w >= 3 ? " stroke=\"#fff\" stroke-width=\"0.6\"" : "",
                         title(b.tip));
      if (!b.label.empty() && w >= text_width(b.label, font) + 4)
        out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{}\" fill=\"{}\" pointer-events=\"none\">{}</text>",
                           n1(x + w / 2), n1(ty[i] + th[i] / 2 + font * 0.36), font, text_colour_on(fill), html_escape(b.label));
      out += "\n";
    }
  }

  // The end of the work: where a shorter run stops on a shared axis.
  if (win.start <= c.end && c.end <= win.end) {
    const double xe = X(c.end);
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#222\" stroke-width=\"1.5\"/>", n1(xe), n1(top),
                       n1(bottom + 20));
    const bool near_right = xe > width - 90;
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" font-weight=\"bold\">end {} ms</text>\n",
                       n1(near_right ? xe - 4 : xe + 4), n1(bottom + 32), near_right ? "end" : "start", ms3(c.end));
  }
  out += "</svg>\n";
  return out;
}

std::string curve_svg(const CurveChart& c, const std::string& id, Time axis_end, double y_max, const SvgLayout& L) {
  axis_end = std::max({axis_end, c.end, Time{1}});
  if (y_max <= 0) {
    for (const auto& s : c.series)
      for (const auto& [t, v] : s.steps) y_max = std::max(y_max, v);
    for (const auto& l : c.lines) y_max = std::max(y_max, l.value);
    y_max = y_max > 0 ? y_max * 1.08 : 1.0;
  }
  const double scale = L.plot_width / static_cast<double>(axis_end);
  const auto X = [&](Time t) { return L.left + scale * static_cast<double>(t); };
  const int width = L.left + L.plot_width + L.right;

  std::vector<LegendItem> items;
  for (const auto& s : c.series)
    items.push_back({s.colour, s.peak_label.empty() ? s.label : s.label + ": " + s.peak_label, true, ""});
  int legend_h = 0;
  const std::string legend = legend_row(items, L.left, 2, L.plot_width, &legend_h);
  const double top = legend_h + 10, plot_h = 150, bottom = top + plot_h;
  const auto Y = [&](double v) { return bottom - plot_h * v / y_max; };
  const int height = static_cast<int>(bottom + 28);

  std::string out = svg_open(id, "curve", width, height);
  out += legend;
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", L.left, n1(top), L.plot_width, n1(plot_h),
                     kTrackBackground);
  out += time_axis(L, TimeWindow{0, axis_end}, top, bottom);
  const double step = nice_step(y_max, 5);
  for (long k = 0; static_cast<double>(k) * step <= y_max + 1e-9; ++k) {
    const double v = static_cast<double>(k) * step;
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\"/>", L.left - 4, n1(Y(v)),
                       L.left + L.plot_width, k == 0 ? "#888" : kGridMinor);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#444\">{}</text>\n", L.left - 8, n1(Y(v) + 4),
                       tick_label(v, step));
  }
  out += fmt::format("<text x=\"14\" y=\"{0}\" transform=\"rotate(-90 14 {0})\" text-anchor=\"middle\" fill=\"#444\">{1}</text>\n",
                     n1(top + plot_h / 2), html_escape(c.unit));
  for (const auto& l : c.lines) {
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>",
                       L.left, n1(Y(l.value)), L.left + L.plot_width, kReference);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{}\">{}</text>\n", L.left + L.plot_width - 4,
                       n1(Y(l.value) - 4), kReference, html_escape(l.label));
  }
  for (const auto& s : c.series) {
    std::string d = fmt::format("M{} {}", n1(X(0)), n1(Y(0)));
    for (const auto& [t, v] : s.steps) d += fmt::format(" H{} V{}", n1(X(t)), n1(Y(v)));
    d += fmt::format(" H{}", n1(X(c.end)));
    out += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" stroke-linejoin=\"round\"/>\n", d, s.colour);
  }
  for (const auto& s : c.series) {
    if (!s.peak) continue;
    out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4.5\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"1.5\">{}</circle>\n",
                       n1(X(s.peak->first)), n1(Y(s.peak->second)), s.colour, title(s.label + ": " + s.peak_label));
  }
  out += "</svg>\n";
  return out;
}

std::string bar_chart_svg(const BarChart& c, const std::string& id, double y_max, int width) {
  std::vector<double> totals;
  for (const auto& b : c.bars) {
    double sum = 0;
    for (const auto& s : b.segments) sum += s.value;
    totals.push_back(sum);
  }
  if (y_max <= 0) {
    for (double t : totals) y_max = std::max(y_max, t);
    for (const auto& l : c.lines) y_max = std::max(y_max, l.value);
    y_max = y_max > 0 ? y_max * 1.12 : 1.0;
  }
  std::vector<bool> used(c.legend.size(), false);
  bool any_emphasis = false;
  for (const auto& b : c.bars) {
    any_emphasis = any_emphasis || b.emphasis;
    for (const auto& s : b.segments)
      if (s.swatch >= 0 && s.swatch < static_cast<int>(used.size())) used[s.swatch] = true;
  }
  std::vector<LegendItem> items;
  for (std::size_t s = 0; s < c.legend.size(); ++s)
    if (used[s]) items.push_back({c.legend[s].colour, legend_text(c.legend[s]), false, ""});
  if (any_emphasis) items.push_back({"#fff", c.emphasis_label.empty() ? "emphasised" : c.emphasis_label, false, kEmphasis});
  constexpr double left = 56, right = 12;
  if (width <= 0) {
    std::size_t longest = 0;
    for (const auto& b : c.bars) longest = std::max({longest, b.label.size(), b.note.size()});
    const double slot = std::max(90.0, text_width(std::string(longest, 'x'), 12) + 14);
    width = std::max(420, static_cast<int>(std::ceil(left + right + slot * static_cast<double>(c.bars.size()))));
  }
  const double plot_w = width - left - right;
  int legend_h = 0;
  const std::string legend = legend_row(items, left, 2, plot_w, &legend_h);

  // A histogram's axis: the bins, and the markers up to one bins' span beyond them, with a little
  // room on both sides; markers further out are named at the edge with an arrow.
  double x_lo = 0, x_hi = 1;
  if (c.bins) {
    const double lo = c.bins->low, hi = lo + c.bins->width * static_cast<double>(std::max<std::size_t>(c.bars.size(), 1));
    x_lo = lo;
    x_hi = hi;
    for (const auto& m : c.markers) {
      if (m.value >= lo - (hi - lo) && m.value <= hi + (hi - lo)) {
        x_lo = std::min(x_lo, m.value);
        x_hi = std::max(x_hi, m.value);
      }
    }
    const double pad = x_hi > x_lo ? 0.03 * (x_hi - x_lo) : 1.0;
    x_lo -= pad;
    x_hi += pad;
  }
  const auto X = [&](double v) { return left + plot_w * (v - x_lo) / (x_hi - x_lo); };
  const auto marker_label = [&](const ReferenceLine& m) {
    return m.value < x_lo ? "\u2190 " + m.label : m.value > x_hi ? m.label + " \u2192" : m.label;
  };
  // Marker labels in rows above the plot, each in the first row where it overlaps no other.
  std::vector<int> marker_row(c.markers.size(), 0);
  int marker_rows = 0;
  if (c.bins) {
    std::vector<std::size_t> order(c.markers.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return c.markers[a].value < c.markers[b].value; });
    std::vector<double> row_end;  // right edge of the last label in each row
    for (std::size_t i : order) {
      const double half = text_width(marker_label(c.markers[i]), 11) / 2;
      const double x = std::clamp(X(c.markers[i].value), left + half, left + plot_w - half);
      std::size_t r = 0;
      while (r < row_end.size() && row_end[r] + 6 > x - half) ++r;
      if (r == row_end.size()) row_end.push_back(0);
      row_end[r] = x + half;
      marker_row[i] = static_cast<int>(r);
    }
    marker_rows = static_cast<int>(row_end.size());
  }
  const double top = legend_h + 18 + 14.0 * marker_rows, plot_h = 160, bottom = top + plot_h;
  const auto Y = [&](double v) { return bottom - plot_h * v / y_max; };
  const int height = static_cast<int>(bottom + (c.bins ? 42 : 26));

  std::string out = svg_open(id, c.bins ? "bars histogram" : "bars", width, height);
  out += legend;
  double step = nice_step(y_max, 5);
  if (c.integer_values) step = std::max(1.0, std::ceil(step));
  for (long k = 0; static_cast<double>(k) * step <= y_max + 1e-9; ++k) {
    const double v = static_cast<double>(k) * step;
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\"/>", n1(left - 4), n1(Y(v)), n1(left + plot_w),
                       k == 0 ? "#888" : kGridMinor);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#444\">{}</text>\n", n1(left - 8), n1(Y(v) + 4),
                       tick_label(v, step));
  }
  out += fmt::format("<text x=\"14\" y=\"{0}\" transform=\"rotate(-90 14 {0})\" text-anchor=\"middle\" fill=\"#444\">{1}</text>\n",
                     n1(top + plot_h / 2), html_escape(c.unit));
  if (c.bins) {
    const double xstep = nice_step(x_hi - x_lo, 8);
    for (double k = std::ceil(x_lo / xstep - 1e-9); k * xstep <= x_hi + 1e-9; k += 1) {
      const double v = k * xstep;
      out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#888\"/>", n1(X(v)), n1(bottom), n1(bottom + 4));
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n", n1(X(v)), n1(bottom + 16),
                         tick_label(v, xstep));
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n", n1(left + plot_w / 2),
                       n1(bottom + 34), html_escape(c.bins->unit));
  }
  const double slot = c.bars.empty() ? plot_w : plot_w / static_cast<double>(c.bars.size());
  const double column = std::min(slot * 0.62, 64.0);
  for (std::size_t i = 0; i < c.bars.size(); ++i) {
    const auto& b = c.bars[i];
    double x = left + slot * static_cast<double>(i) + (slot - column) / 2, bw = column;
    if (c.bins) {  // adjacent bins with a hairline between them
      const double a = c.bins->low + c.bins->width * static_cast<double>(i);
      x = X(a) + 0.5;
      bw = std::max(X(a + c.bins->width) - X(a) - 1.0, 1.0);
    }
    double base = 0;
    for (const auto& s : b.segments) {
      const std::string& fill = s.swatch >= 0 && s.swatch < static_cast<int>(c.legend.size()) ? c.legend[s.swatch].colour
                                                                                              : std::string("#888");
      out += fmt::format("<rect class=\"col\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">{}</rect>\n", n1(x),
                         n1(Y(base + s.value)), n1(bw), n1(Y(base) - Y(base + s.value)), fill, title(s.tip));
      base += s.value;
    }
    if (b.emphasis)
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
                         "pointer-events=\"none\"/>\n",
                         n1(x - 1), n1(Y(totals[i]) - 1), n1(bw + 2), n1(Y(0) - Y(totals[i]) + 2), kEmphasis);
    if (!b.note.empty())
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"bold\"{}>{}</text>\n", n1(x + bw / 2),
                         n1(Y(totals[i]) - 5), b.emphasis ? fmt::format(" fill=\"{}\"", kEmphasis) : "", html_escape(b.note));
    if (!c.bins)
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n", n1(x + bw / 2), n1(bottom + 16),
                         html_escape(b.label));
  }
  for (const auto& l : c.lines) {
    const std::string colour = l.colour.empty() ? kReference : l.colour;
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>",
                       n1(left), n1(Y(l.value)), n1(left + plot_w), colour);
    // A white halo keeps the label readable where it crosses a bar or a note.
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"3\" "
                       "paint-order=\"stroke\">{}</text>\n",
                       n1(left + plot_w - 2), n1(Y(l.value) - 4), colour, html_escape(l.label));
  }
  // Marker lines from their labels down, then the labels over any line that crosses them.
  const auto marker_colour = [&](const ReferenceLine& m) { return m.colour.empty() ? std::string(kReference) : m.colour; };
  const auto label_y = [&](std::size_t i) { return top - 6 - 14.0 * marker_row[i]; };
  for (std::size_t i = 0; c.bins && i < c.markers.size(); ++i)
    if (c.markers[i].value >= x_lo && c.markers[i].value <= x_hi)
      out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1.5\" "
                         "stroke-dasharray=\"5 3\"/>\n",
                         n1(X(c.markers[i].value)), n1(label_y(i) + 3), n1(bottom), marker_colour(c.markers[i]));
  for (std::size_t i = 0; c.bins && i < c.markers.size(); ++i) {
    const std::string label = marker_label(c.markers[i]);
    const double half = text_width(label, 11) / 2;
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\" fill=\"{}\" stroke=\"#fff\" "
                       "stroke-width=\"3\" paint-order=\"stroke\">{}</text>\n",
                       n1(std::clamp(X(c.markers[i].value), left + half, left + plot_w - half)), n1(label_y(i)),
                       marker_colour(c.markers[i]), html_escape(label));
  }
  out += "</svg>\n";
  return out;
}

std::string grid_svg(const GridChart& c, const std::string& id, int max_width) {
  constexpr double kFont = 12, right = 12;
  const std::size_t nr = c.rows.size(), nc = c.columns.size();
  std::vector<bool> used(c.legend.size(), false);
  for (const auto& cell : c.cells)
    if (cell.swatch >= 0 && cell.swatch < static_cast<int>(used.size())) used[cell.swatch] = true;
  std::vector<LegendItem> items;
  for (std::size_t s = 0; s < c.legend.size(); ++s)
    if (used[s]) items.push_back({c.legend[s].colour, legend_text(c.legend[s]), false, ""});

  double label_w = text_width(c.row_title, kFont);
  for (const auto& r : c.rows) label_w = std::max(label_w, text_width(r, kFont));
  const double left = label_w + 16;
  double widest = 0;
  for (const auto& col : c.columns) widest = std::max(widest, text_width(col, kFont));
  for (const auto& cell : c.cells) widest = std::max(widest, text_width(cell.label, kFont));
  double cw = std::clamp(widest + 10, 18.0, 90.0);
  if (nc > 0 && left + cw * static_cast<double>(nc) + right > max_width)
    cw = std::max(2.0, (max_width - left - right) / static_cast<double>(nc));
  const double ch = nr > 40 ? std::max(4.0, 880.0 / static_cast<double>(nr)) : 22.0;
  const int width = static_cast<int>(std::ceil(std::max(left + cw * static_cast<double>(nc) + right, 260.0)));
  int legend_h = 0;
  const std::string legend = legend_row(items, 8, 2, width - 16, &legend_h);
  const double title_y = legend_h + 16, labels_y = title_y + 16, top = labels_y + 8;
  const int height = static_cast<int>(top + ch * static_cast<double>(nr) + 8);

  std::string out = svg_open(id, "grid", width, height);
  out += legend;
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"bold\" fill=\"#444\">{}</text>\n", n1(left), n1(title_y),
                     html_escape(c.column_title));
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-weight=\"bold\" fill=\"#444\">{}</text>\n", n1(left - 8),
                     n1(labels_y), html_escape(c.row_title));
  // Column labels: every k-th when the cells are narrower than the labels.
  const auto every = static_cast<std::size_t>(std::ceil((std::min(widest, 200.0) + 6) / cw));
  for (std::size_t k = 0; k < nc; k += std::max<std::size_t>(every, 1))
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n",
                       n1(left + cw * (static_cast<double>(k) + 0.5)), n1(labels_y), html_escape(c.columns[k]));
  for (std::size_t r = 0; r < nr; ++r) {
    const double y = top + ch * static_cast<double>(r);
    if (ch >= kFont || r % static_cast<std::size_t>(std::ceil(kFont / ch)) == 0)
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#444\">{}</text>\n", n1(left - 8),
                         n1(y + std::max(ch, kFont) / 2 + 4), html_escape(c.rows[r]));
    for (std::size_t k = 0; k < nc && r * nc + k < c.cells.size(); ++k) {
      const GridCell& cell = c.cells[r * nc + k];
      const std::string& fill = cell.swatch >= 0 && cell.swatch < static_cast<int>(c.legend.size()) ? c.legend[cell.swatch].colour
                                                                                                   : std::string("#888");
      const double x = left + cw * static_cast<double>(k);
      out += fmt::format("<rect class=\"cell\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#fff\" "
                         "stroke-width=\"{}\">{}</rect>",
                         n1(x), n1(y), n1(cw), n1(ch), fill, cw >= 8 && ch >= 8 ? "1" : "0", title(cell.tip));
      if (!cell.label.empty() && cw >= text_width(cell.label, kFont) + 4 && ch >= kFont + 4)
        out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\" pointer-events=\"none\">{}</text>",
                           n1(x + cw / 2), n1(y + ch / 2 + 4), text_colour_on(fill), html_escape(cell.label));
      out += "\n";
    }
  }
  out += "</svg>\n";
  return out;
}

}  // namespace stepsim::cli
