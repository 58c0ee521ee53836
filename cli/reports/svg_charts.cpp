#include "cli/reports/svg_charts.hpp"
#include "cli/reports/quantities.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "cli/reports/html_report.hpp"
#include "models/units.hpp"

namespace stepsim::cli {

namespace {

constexpr const char* kGridMajor = "#c9c9c9";
constexpr const char* kGridMinor = "#ececec";
constexpr const char* kTrackBackground = "#f7f7f7";
constexpr const char* kEmphasis = "#d62728";
constexpr const char* kReference = "#c0392b";

// Coordinates with one decimal: enough for the eye, stable in text.
std::string n1(double v) { return fmt::format("{:.1f}", v); }

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
  bool line = false;   // a short line (curves) instead of a square
  std::string stroke;  // outline of the square, e.g. the emphasis colour
};

// Items left to right, wrapping at `width`. Returns the markup; `height` gets its height.
std::string legend_row(const std::vector<LegendItem>& items, double x0, double y0, double width, int* height) {
  std::string out;
  double x = x0, y = y0;
  constexpr double kRow = 18;
  for (const auto& it : items) {
    const double w = 18 + text_width(it.label, 12) + 18;
    if (x > x0 && x + w > x0 + width) {
      x = x0;
      y += kRow;
    }
    if (it.line)
      out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2.5\"/>", n1(x),
                         n1(y + 7), n1(x + 13), n1(y + 7), it.fill);
    else
      out +=
          fmt::format("<rect x=\"{}\" y=\"{}\" width=\"13\" height=\"13\" fill=\"{}\"{}/>", n1(x), n1(y + 1), it.fill,
                      it.stroke.empty() ? " stroke=\"#999\" stroke-width=\"0.5\""
                                        : fmt::format(" stroke=\"{}\" stroke-width=\"2\"", it.stroke));
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", n1(x + 18), n1(y + 12), html_escape(it.label));
    x += w;
  }
  *height = items.empty() ? 0 : static_cast<int>(y - y0 + kRow);
  return out;
}

// Ticks of a time axis in its unit: labelled major ticks and unlabelled minor grid lines.
struct TimeTicks {
  double major, minor;
};
TimeTicks time_ticks(double span) {
  const double major = nice_step(span, 10);
  const double mantissa = major / std::pow(10.0, std::floor(std::log10(major) + 1e-9));
  return {major, major / (std::lround(mantissa) == 2 ? 4.0 : 5.0)};
}

// Grid lines over [top, bottom] and labels under `bottom` for the window's times.
std::string time_axis(const SvgLayout& L, TimeWindow w, double top, double bottom) {
  const AxisUnit u = axis_unit(to_ms(w.end - w.start));
  const double start = to_ms(w.start) / u.ms, span = to_ms(w.end - w.start) / u.ms;
  const auto [major, minor] = time_ticks(span);
  const auto X = [&](double v) { return L.left + L.plot_width * (v - start) / span; };
  std::string out;
  const long first = std::lround(std::ceil(start / minor - 1e-9));
  const long last = std::lround(std::floor(to_ms(w.end) / u.ms / minor + 1e-9));
  const long per_major = std::lround(major / minor);
  for (long k = first; k <= last; ++k) {
    const double v = static_cast<double>(k) * minor;
    const bool is_major = k % per_major == 0;
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1\"/>",
                       n1(X(v)), n1(top), n1(bottom + (is_major ? 4 : 0)), is_major ? kGridMajor : kGridMinor);
    if (is_major)
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>", n1(X(v)),
                         n1(bottom + 16), tick_label(v, major));
    out += "\n";
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#444\">time ({})</text>\n", L.left - 8,
                     n1(bottom + 16), u.name);
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

namespace {

// A timeline drawn in layers: legend, track backgrounds and labels, the time axis, idle hatching,
// waits, bars, and the end marker.
class TimelineSvg {
 public:
  TimelineSvg(const TimelineChart& c, const std::string& id, TimeWindow win, const SvgLayout& L)
      : c_(c),
        id_(id),
        win_(win),
        L_(L),
        scale_(L.plot_width / static_cast<double>(win.end - win.start)),
        width_(L.left + L.plot_width + L.right),
        idle_fill_(fmt::format("url(#{}-idle)", id)) {}

  std::string draw() {
    int legend_h = 0;
    const std::string legend = legend_row(legend_items(), L_.left, 2, L_.plot_width, &legend_h);
    layout(legend_h);
    out_ = svg_open(id_, "timeline", width_, static_cast<int>(bottom_ + 40));
    out_ += fmt::format(
        "<defs><pattern id=\"{}-idle\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fff4f4\"/>"
        "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#e3a6a6\" stroke-width=\"2.5\"/></pattern></defs>\n",
        html_escape(id_));
    out_ += legend;
    track_backgrounds();
    out_ += time_axis(L_, win_, top_, bottom_);
    for (std::size_t i = 0; i < c_.tracks.size(); ++i) idle(i);
    for (std::size_t i = 0; i < c_.tracks.size(); ++i) waits(i);
    for (std::size_t i = 0; i < c_.tracks.size(); ++i) bars(i);
    end_marker();
    out_ += "</svg>\n";
    return std::move(out_);
  }

 private:
  double X(Time t) const {
    return L_.left + scale_ * static_cast<double>(std::clamp(t, win_.start, win_.end) - win_.start);
  }
  std::string fill_of(int swatch) const {
    return swatch >= 0 && swatch < static_cast<int>(c_.legend.size()) ? c_.legend[swatch].colour : std::string("#888");
  }

  // Swatches shown in the window, then idle and emphasis when any is drawn.
  std::vector<LegendItem> legend_items() const {
    std::vector<bool> used(c_.legend.size(), false);
    bool any_idle = false, any_emphasis = false;
    for (const auto& t : c_.tracks) {
      any_idle = any_idle || t.show_idle;
      for (const auto* list : {&t.bars, &t.waits})
        for (const auto& b : *list) {
          if (!in_window(b.start, b.end, win_)) continue;
          if (b.swatch >= 0 && b.swatch < static_cast<int>(used.size())) used[b.swatch] = true;
          any_emphasis = any_emphasis || (b.emphasis && list == &t.bars);
        }
    }
    std::vector<LegendItem> items;
    for (std::size_t s = 0; s < c_.legend.size(); ++s)
      if (used[s]) items.push_back({c_.legend[s].colour, legend_text(c_.legend[s]), false, ""});
    if (any_idle) items.push_back({idle_fill_, "idle", false, ""});
    if (any_emphasis)
      items.push_back({"#fff", c_.emphasis_label.empty() ? "emphasised" : c_.emphasis_label, false, kEmphasis});
    return items;
  }

  // Track rows: a major track starts a group (a device) with a little space above it.
  void layout(int legend_h) {
    ty_.resize(c_.tracks.size());
    th_.resize(c_.tracks.size());
    double y = legend_h + 8;
    for (std::size_t i = 0; i < c_.tracks.size(); ++i) {
      if (i > 0 && !c_.tracks[i].minor) y += 6;
      th_[i] = c_.tracks[i].minor ? 11 : 22;
      ty_[i] = y;
      y += th_[i] + 2;
    }
    top_ = legend_h + 4;
    bottom_ = y + 2;
  }

  void track_backgrounds() {
    for (std::size_t i = 0; i < c_.tracks.size(); ++i) {
      const auto& t = c_.tracks[i];
      out_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>", L_.left, n1(ty_[i]),
                          L_.plot_width, n1(th_[i]), kTrackBackground);
      out_ += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"{}\" fill=\"{}\">{}</text>\n",
                          L_.left - 8, n1(ty_[i] + th_[i] / 2 + (t.minor ? 3.5 : 4.5)), t.minor ? 10 : 13,
                          t.minor ? "#777" : "#222", html_escape(t.label));
    }
  }

  void idle(std::size_t i) {
    const auto& t = c_.tracks[i];
    if (!t.show_idle) return;
    const auto gap = [&](Time a, Time b) {
      if (!in_window(a, b, win_)) return;
      if (!L_.sliver_tips && X(b) - X(a) < 1.0) return;  // hatching narrower than a pixel does not show
      out_ += fmt::format("<rect class=\"idle\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">{}</rect>\n",
                          n1(X(a)), n1(ty_[i]), n1(X(b) - X(a)), n1(th_[i]), idle_fill_,
                          title(fmt::format("{}: idle from {} to {} ms ({} ms)", t.label, ms3(a), ms3(b), ms3(b - a))));
    };
    Time cursor = 0;
    for (const auto& b : t.bars) {
      if (b.start > cursor) gap(cursor, b.start);
      cursor = std::max(cursor, b.end);
    }
    if (cursor < c_.end) gap(cursor, c_.end);
  }

  // Waits over the idle hatching, at least 2 px wide so that a short one is still seen.
  void waits(std::size_t i) {
    for (const auto& b : c_.tracks[i].waits) {
      if (!in_window(b.start, b.end, win_)) continue;
      const double x = X(b.start), w = std::max(X(b.end) - x, 2.0);
      out_ +=
          fmt::format("<rect class=\"wait\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{}>{}</rect>\n",
                      n1(x), n1(ty_[i]), n1(w), n1(th_[i]), fill_of(b.swatch),
                      b.emphasis ? fmt::format(" stroke=\"{}\" stroke-width=\"1.5\"", kEmphasis) : "", title(b.tip));
    }
  }

  void bars(std::size_t i) {
    const auto& t = c_.tracks[i];
    const double font = t.minor ? 9 : 11;
    for (const auto& b : t.bars) {
      if (!in_window(b.start, b.end, win_)) continue;
      const std::string fill = fill_of(b.swatch);
      const double x = X(b.start), w = std::max(X(b.end) - x, 1.0);
      out_ += fmt::format("<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{}>{}</rect>",
                          n1(x), n1(ty_[i]), n1(w), n1(th_[i]), fill,
                          b.emphasis ? fmt::format(" stroke=\"{}\" stroke-width=\"2\"", kEmphasis)
                          // A white edge separates neighbours; on a bar a few pixels wide it would hide the fill.
                          : w >= 3 ? " stroke=\"#fff\" stroke-width=\"0.6\""
                                   : "",
                          L_.sliver_tips || X(b.end) - x >= 1.0 ? title(b.tip) : std::string());
      if (!b.label.empty() && w >= text_width(b.label, font) + 4)
        out_ += fmt::format(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{}\" fill=\"{}\" "
            "pointer-events=\"none\">{}</text>",
            n1(x + w / 2), n1(ty_[i] + th_[i] / 2 + font * 0.36), font, text_colour_on(fill), html_escape(b.label));
      out_ += "\n";
    }
  }

  // The end of the work: where a shorter run stops on a shared axis.
  void end_marker() {
    if (!(win_.start <= c_.end && c_.end <= win_.end)) return;
    const double xe = X(c_.end);
    out_ += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#222\" stroke-width=\"1.5\"/>",
                        n1(xe), n1(top_), n1(bottom_ + 20));
    const bool near_right = xe > width_ - 90;
    // The exact step time on a ms axis (as the tables print it); a person's unit on longer ones.
    const bool in_ms = std::string_view(axis_unit(to_ms(win_.end - win_.start)).name) == "ms";
    out_ += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" font-weight=\"bold\">end {}</text>\n",
                        n1(near_right ? xe - 4 : xe + 4), n1(bottom_ + 32), near_right ? "end" : "start",
                        in_ms ? ms3(c_.end) + " ms" : format_duration(c_.end));
  }

  const TimelineChart& c_;
  const std::string& id_;
  const TimeWindow win_;
  const SvgLayout& L_;
  const double scale_;
  const int width_;
  const std::string idle_fill_;
  std::vector<double> ty_, th_;  // per track: top and height
  double top_ = 0, bottom_ = 0;
  std::string out_;
};

}  // namespace

std::string timeline_svg(const TimelineChart& c, const std::string& id, TimeWindow win, const SvgLayout& L) {
  win.end = std::max(win.end, win.start + 1);
  return TimelineSvg(c, id, win, L).draw();
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
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", L.left, n1(top),
                     L.plot_width, n1(plot_h), kTrackBackground);
  out += time_axis(L, TimeWindow{0, axis_end}, top, bottom);
  const double step = nice_step(y_max, 5);
  for (long k = 0; static_cast<double>(k) * step <= y_max + 1e-9; ++k) {
    const double v = static_cast<double>(k) * step;
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\"/>", L.left - 4, n1(Y(v)),
                       L.left + L.plot_width, k == 0 ? "#888" : kGridMinor);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#444\">{}</text>\n", L.left - 8,
                       n1(Y(v) + 4), tick_label(v, step));
  }
  out += fmt::format(
      "<text x=\"14\" y=\"{0}\" transform=\"rotate(-90 14 {0})\" text-anchor=\"middle\" fill=\"#444\">{1}</text>\n",
      n1(top + plot_h / 2), html_escape(c.unit));
  for (const auto& l : c.lines) {
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"1.5\" stroke-dasharray=\"6 "
        "4\"/>",
        L.left, n1(Y(l.value)), L.left + L.plot_width, kReference);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{}\">{}</text>\n", L.left + L.plot_width - 4,
                       n1(Y(l.value) - 4), kReference, html_escape(l.label));
  }
  for (const auto& s : c.series) {
    std::string d = fmt::format("M{} {}", n1(X(0)), n1(Y(0)));
    for (const auto& [t, v] : s.steps) d += fmt::format(" H{} V{}", n1(X(t)), n1(Y(v)));
    d += fmt::format(" H{}", n1(X(c.end)));
    out += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" stroke-linejoin=\"round\"/>\n",
                       d, s.colour);
  }
  for (const auto& s : c.series) {
    if (!s.peak) continue;
    out += fmt::format(
        "<circle cx=\"{}\" cy=\"{}\" r=\"4.5\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"1.5\">{}</circle>\n",
        n1(X(s.peak->first)), n1(Y(s.peak->second)), s.colour, title(s.label + ": " + s.peak_label));
  }
  out += "</svg>\n";
  return out;
}

namespace {

// A bar chart (or histogram, with bins) drawn in layers: legend, value grid, bin axis, columns,
// reference lines, markers.
class BarChartSvg {
 public:
  BarChartSvg(const BarChart& c, const std::string& id, double y_max, int width)
      : c_(c), id_(id), y_max_(y_max), width_(width) {
    for (const auto& b : c_.bars) {
      double sum = 0;
      for (const auto& s : b.segments) sum += s.value;
      totals_.push_back(sum);
    }
    if (y_max_ <= 0) {
      for (double t : totals_) y_max_ = std::max(y_max_, t);
      for (const auto& l : c_.lines) y_max_ = std::max(y_max_, l.value);
      y_max_ = y_max_ > 0 ? y_max_ * 1.12 : 1.0;
    }
  }

  std::string draw() {
    const std::vector<LegendItem> items = legend_items();
    if (width_ <= 0) {
      std::size_t longest = 0;
      for (const auto& b : c_.bars) longest = std::max({longest, b.label.size(), b.note.size()});
      const double slot = std::max(90.0, text_width(std::string(longest, 'x'), 12) + 14);
      width_ = std::max(420, static_cast<int>(std::ceil(kLeft + kRight + slot * static_cast<double>(c_.bars.size()))));
    }
    plot_w_ = width_ - kLeft - kRight;
    int legend_h = 0;
    const std::string legend = legend_row(items, kLeft, 2, plot_w_, &legend_h);
    if (c_.bins) bin_range();
    const int marker_rows = c_.bins ? place_markers() : 0;
    top_ = legend_h + 18 + 14.0 * marker_rows;
    bottom_ = top_ + kPlotH;
    out_ = svg_open(id_, c_.bins ? "bars histogram" : "bars", width_, static_cast<int>(bottom_ + (c_.bins ? 42 : 26)));
    out_ += legend;
    value_grid();
    if (c_.bins) bin_axis();
    for (std::size_t i = 0; i < c_.bars.size(); ++i) column(i);
    reference_lines();
    if (c_.bins) markers();
    out_ += "</svg>\n";
    return std::move(out_);
  }

 private:
  static constexpr double kLeft = 56, kRight = 12, kPlotH = 160;

  double X(double v) const { return kLeft + plot_w_ * (v - x_lo_) / (x_hi_ - x_lo_); }
  double Y(double v) const { return bottom_ - kPlotH * v / y_max_; }
  std::string marker_label(const ReferenceLine& m) const {
    return m.value < x_lo_ ? "\u2190 " + m.label : m.value > x_hi_ ? m.label + " \u2192" : m.label;
  }

  std::vector<LegendItem> legend_items() const {
    std::vector<bool> used(c_.legend.size(), false);
    bool any_emphasis = false;
    for (const auto& b : c_.bars) {
      any_emphasis = any_emphasis || b.emphasis;
      for (const auto& s : b.segments)
        if (s.swatch >= 0 && s.swatch < static_cast<int>(used.size())) used[s.swatch] = true;
    }
    std::vector<LegendItem> items;
    for (std::size_t s = 0; s < c_.legend.size(); ++s)
      if (used[s]) items.push_back({c_.legend[s].colour, legend_text(c_.legend[s]), false, ""});
    if (any_emphasis)
      items.push_back({"#fff", c_.emphasis_label.empty() ? "emphasised" : c_.emphasis_label, false, kEmphasis});
    return items;
  }

  // A histogram's axis: the bins, and the markers up to one bins' span beyond them, with a little
  // room on both sides; markers further out are named at the edge with an arrow.
  void bin_range() {
    const double lo = c_.bins->low,
                 hi = lo + c_.bins->width * static_cast<double>(std::max<std::size_t>(c_.bars.size(), 1));
    x_lo_ = lo;
    x_hi_ = hi;
    for (const auto& m : c_.markers) {
      if (m.value >= lo - (hi - lo) && m.value <= hi + (hi - lo)) {
        x_lo_ = std::min(x_lo_, m.value);
        x_hi_ = std::max(x_hi_, m.value);
      }
    }
    const double pad = x_hi_ > x_lo_ ? 0.03 * (x_hi_ - x_lo_) : 1.0;
    x_lo_ -= pad;
    x_hi_ += pad;
  }

  // Marker labels in rows above the plot, each in the first row where it overlaps no other.
  // Returns the number of rows.
  int place_markers() {
    marker_row_.assign(c_.markers.size(), 0);
    std::vector<std::size_t> order(c_.markers.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return c_.markers[a].value < c_.markers[b].value; });
    std::vector<double> row_end;  // right edge of the last label in each row
    for (std::size_t i : order) {
      const double half = text_width(marker_label(c_.markers[i]), 11) / 2;
      const double x = std::clamp(X(c_.markers[i].value), kLeft + half, kLeft + plot_w_ - half);
      std::size_t r = 0;
      while (r < row_end.size() && row_end[r] + 6 > x - half) ++r;
      if (r == row_end.size()) row_end.push_back(0);
      row_end[r] = x + half;
      marker_row_[i] = static_cast<int>(r);
    }
    return static_cast<int>(row_end.size());
  }

  void value_grid() {
    double step = nice_step(y_max_, 5);
    if (c_.integer_values) step = std::max(1.0, std::ceil(step));
    for (long k = 0; static_cast<double>(k) * step <= y_max_ + 1e-9; ++k) {
      const double v = static_cast<double>(k) * step;
      out_ += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\"/>", n1(kLeft - 4), n1(Y(v)),
                          n1(kLeft + plot_w_), k == 0 ? "#888" : kGridMinor);
      out_ += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#444\">{}</text>\n", n1(kLeft - 8),
                          n1(Y(v) + 4), tick_label(v, step));
    }
    out_ += fmt::format(
        "<text x=\"14\" y=\"{0}\" transform=\"rotate(-90 14 {0})\" text-anchor=\"middle\" fill=\"#444\">{1}</text>\n",
        n1(top_ + kPlotH / 2), html_escape(c_.unit));
  }

  void bin_axis() {
    const double xstep = nice_step(x_hi_ - x_lo_, 8);
    for (double k = std::ceil(x_lo_ / xstep - 1e-9); k * xstep <= x_hi_ + 1e-9; k += 1) {
      const double v = k * xstep;
      out_ += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#888\"/>", n1(X(v)), n1(bottom_),
                          n1(bottom_ + 4));
      out_ += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n", n1(X(v)),
                          n1(bottom_ + 16), tick_label(v, xstep));
    }
    out_ += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n",
                        n1(kLeft + plot_w_ / 2), n1(bottom_ + 34), html_escape(c_.bins->unit));
  }

  void column(std::size_t i) {
    const double slot = c_.bars.empty() ? plot_w_ : plot_w_ / static_cast<double>(c_.bars.size());
    const double width = std::min(slot * 0.62, 64.0);
    const auto& b = c_.bars[i];
    double x = kLeft + slot * static_cast<double>(i) + (slot - width) / 2, bw = width;
    if (c_.bins) {  // adjacent bins with a hairline between them
      const double a = c_.bins->low + c_.bins->width * static_cast<double>(i);
      x = X(a) + 0.5;
      bw = std::max(X(a + c_.bins->width) - X(a) - 1.0, 1.0);
    }
    // Segment heights in pixels. A stacked column gives every segment at least kMinSegment px
    // (a 0.5 GiB weight shard under 13 GiB, a 1% checkpoint overhead) and takes those pixels from
    // the larger ones in proportion, so that the column's top stays at its total.
    constexpr double kMinSegment = 3.0;
    std::vector<double> px(b.segments.size());
    for (std::size_t k = 0; k < px.size(); ++k) px[k] = std::max(0.0, Y(0) - Y(b.segments[k].value));
    const double column_px = Y(0) - Y(totals_[i]);
    if (!c_.bins && column_px >= kMinSegment * static_cast<double>(px.size())) {
      double large = 0;
      std::size_t n_small = 0;
      for (std::size_t k = 0; k < px.size(); ++k) {
        if (b.segments[k].value <= 0) continue;
        if (px[k] < kMinSegment)
          ++n_small;
        else
          large += px[k];
      }
      const double room = column_px - kMinSegment * static_cast<double>(n_small);
      if (n_small > 0 && large > 0 && room > 0)
        for (std::size_t k = 0; k < px.size(); ++k)
          px[k] = b.segments[k].value <= 0 ? 0 : px[k] < kMinSegment ? kMinSegment : px[k] * room / large;
    }
    double stack_top = Y(0);
    for (std::size_t k = 0; k < b.segments.size(); ++k) {
      const auto& s = b.segments[k];
      const std::string& fill = s.swatch >= 0 && s.swatch < static_cast<int>(c_.legend.size())
                                    ? c_.legend[s.swatch].colour
                                    : std::string("#888");
      out_ += fmt::format("<rect class=\"col\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">{}</rect>\n",
                          n1(x), n1(stack_top - px[k]), n1(bw), n1(px[k]), fill, title(s.tip));
      stack_top -= px[k];
    }
    if (b.emphasis)
      out_ += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
          "pointer-events=\"none\"/>\n",
          n1(x - 1), n1(Y(totals_[i]) - 1), n1(bw + 2), n1(Y(0) - Y(totals_[i]) + 2), kEmphasis);
    if (!b.note.empty())
      out_ += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"bold\"{}>{}</text>\n",
                          n1(x + bw / 2), n1(Y(totals_[i]) - 5),
                          b.emphasis ? fmt::format(" fill=\"{}\"", kEmphasis) : "", html_escape(b.note));
    if (!c_.bins)
      out_ += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n", n1(x + bw / 2),
                          n1(bottom_ + 16), html_escape(b.label));
  }

  void reference_lines() {
    for (const auto& l : c_.lines) {
      const std::string colour = l.colour.empty() ? kReference : l.colour;
      out_ += fmt::format(
          "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"1.5\" stroke-dasharray=\"6 "
          "4\"/>",
          n1(kLeft), n1(Y(l.value)), n1(kLeft + plot_w_), colour);
      // A white halo keeps the label readable where it crosses a bar or a note.
      out_ += fmt::format(
          "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"3\" "
          "paint-order=\"stroke\">{}</text>\n",
          n1(kLeft + plot_w_ - 2), n1(Y(l.value) - 4), colour, html_escape(l.label));
    }
  }

  // Marker lines from their labels down, then the labels over any line that crosses them.
  void markers() {
    const auto marker_colour = [&](const ReferenceLine& m) {
      return m.colour.empty() ? std::string(kReference) : m.colour;
    };
    const auto label_y = [&](std::size_t i) { return top_ - 6 - 14.0 * marker_row_[i]; };
    for (std::size_t i = 0; i < c_.markers.size(); ++i)
      if (c_.markers[i].value >= x_lo_ && c_.markers[i].value <= x_hi_)
        out_ += fmt::format(
            "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1.5\" "
            "stroke-dasharray=\"5 3\"/>\n",
            n1(X(c_.markers[i].value)), n1(label_y(i) + 3), n1(bottom_), marker_colour(c_.markers[i]));
    for (std::size_t i = 0; i < c_.markers.size(); ++i) {
      const std::string label = marker_label(c_.markers[i]);
      const double half = text_width(label, 11) / 2;
      out_ += fmt::format(
          "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\" fill=\"{}\" stroke=\"#fff\" "
          "stroke-width=\"3\" paint-order=\"stroke\">{}</text>\n",
          n1(std::clamp(X(c_.markers[i].value), kLeft + half, kLeft + plot_w_ - half)), n1(label_y(i)),
          marker_colour(c_.markers[i]), html_escape(label));
    }
  }

  const BarChart& c_;
  const std::string& id_;
  double y_max_;
  int width_;
  std::vector<double> totals_;  // per bar
  double plot_w_ = 0, x_lo_ = 0, x_hi_ = 1, top_ = 0, bottom_ = 0;
  std::vector<int> marker_row_;  // per marker (histograms)
  std::string out_;
};

}  // namespace

std::string bar_chart_svg(const BarChart& c, const std::string& id, double y_max, int width) {
  return BarChartSvg(c, id, y_max, width).draw();
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
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-weight=\"bold\" fill=\"#444\">{}</text>\n",
                     n1(left - 8), n1(labels_y), html_escape(c.row_title));
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
      const std::string& fill = cell.swatch >= 0 && cell.swatch < static_cast<int>(c.legend.size())
                                    ? c.legend[cell.swatch].colour
                                    : std::string("#888");
      const double x = left + cw * static_cast<double>(k);
      out += fmt::format(
          "<rect class=\"cell\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#fff\" "
          "stroke-width=\"{}\">{}</rect>",
          n1(x), n1(y), n1(cw), n1(ch), fill, cw >= 8 && ch >= 8 ? "1" : "0", title(cell.tip));
      if (!cell.label.empty() && cw >= text_width(cell.label, kFont) + 4 && ch >= kFont + 4)
        out +=
            fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\" pointer-events=\"none\">{}</text>",
                        n1(x + cw / 2), n1(y + ch / 2 + 4), text_colour_on(fill), html_escape(cell.label));
      out += "\n";
    }
  }
  out += "</svg>\n";
  return out;
}

}  // namespace stepsim::cli
