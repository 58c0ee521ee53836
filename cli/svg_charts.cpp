#include "cli/svg_charts.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "cli/html_report.hpp"

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

// Grid lines over [top, bottom] and labels under `bottom` for time 0 .. axis_end.
std::string time_axis(const SvgLayout& L, Time axis_end, double top, double bottom) {
  const double span_ms = to_ms(axis_end);
  const auto [major, minor] = time_ticks(span_ms);
  const auto X = [&](double ms) { return L.left + L.plot_width * ms / span_ms; };
  std::string out;
  const long minors = std::lround(std::floor(span_ms / minor + 1e-9));
  const long per_major = std::lround(major / minor);
  for (long k = 0; k <= minors; ++k) {
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

std::string svg_open(const std::string& id, const char* cls, int width, int height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"{0}\" class=\"{1}\" width=\"{2}\" height=\"{3}\" "
      "viewBox=\"0 0 {2} {3}\" font-size=\"12\">\n",
      html_escape(id), cls, width, height);
}

}  // namespace

std::string timeline_svg(const TimelineChart& c, const std::string& id, Time axis_end, const SvgLayout& L) {
  axis_end = std::max({axis_end, c.end, Time{1}});
  const double scale = L.plot_width / static_cast<double>(axis_end);
  const auto X = [&](Time t) { return L.left + scale * static_cast<double>(t); };
  const int width = L.left + L.plot_width + L.right;
  const std::string idle_fill = fmt::format("url(#{}-idle)", id);

  std::vector<bool> used(c.legend.size(), false);
  bool any_idle = false, any_emphasis = false;
  for (const auto& t : c.tracks) {
    any_idle = any_idle || t.show_idle;
    for (const auto& b : t.bars) {
      if (b.swatch >= 0 && b.swatch < static_cast<int>(used.size())) used[b.swatch] = true;
      any_emphasis = any_emphasis || b.emphasis;
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
  out += time_axis(L, axis_end, top, bottom);

  for (std::size_t i = 0; i < c.tracks.size(); ++i) {
    const auto& t = c.tracks[i];
    if (!t.show_idle) continue;
    const auto gap = [&](Time a, Time b) {
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

  for (std::size_t i = 0; i < c.tracks.size(); ++i) {
    const auto& t = c.tracks[i];
    const double font = t.minor ? 9 : 11;
    for (const auto& b : t.bars) {
      const std::string& fill = b.swatch >= 0 && b.swatch < static_cast<int>(c.legend.size()) ? c.legend[b.swatch].colour
                                                                                              : std::string("#888");
      const double x = X(b.start), w = std::max(X(b.end) - x, 1.0);
      out += fmt::format("<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{}>{}</rect>", n1(x),
                         n1(ty[i]), n1(w), n1(th[i]), fill,
                         b.emphasis ? fmt::format(" stroke=\"{}\" stroke-width=\"2\"", kEmphasis) : " stroke=\"#fff\" stroke-width=\"0.6\"",
                         title(b.tip));
      if (!b.label.empty() && w >= text_width(b.label, font) + 4)
        out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{}\" fill=\"{}\" pointer-events=\"none\">{}</text>",
                           n1(x + w / 2), n1(ty[i] + th[i] / 2 + font * 0.36), font, text_colour_on(fill), html_escape(b.label));
      out += "\n";
    }
  }

  // The end of the work: where a shorter run stops on a shared axis.
  const double xe = X(c.end);
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#222\" stroke-width=\"1.5\"/>", n1(xe), n1(top),
                     n1(bottom + 20));
  const bool near_right = xe > width - 90;
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" font-weight=\"bold\">end {} ms</text>\n",
                     n1(near_right ? xe - 4 : xe + 4), n1(bottom + 32), near_right ? "end" : "start", ms3(c.end));
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
  out += time_axis(L, axis_end, top, bottom);
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
  for (const auto& b : c.bars)
    for (const auto& s : b.segments)
      if (s.swatch >= 0 && s.swatch < static_cast<int>(used.size())) used[s.swatch] = true;
  std::vector<LegendItem> items;
  for (std::size_t s = 0; s < c.legend.size(); ++s)
    if (used[s]) items.push_back({c.legend[s].colour, legend_text(c.legend[s]), false, ""});
  constexpr double left = 56, right = 12;
  const double plot_w = width - left - right;
  int legend_h = 0;
  const std::string legend = legend_row(items, left, 2, plot_w, &legend_h);
  const double top = legend_h + 18, plot_h = 160, bottom = top + plot_h;
  const auto Y = [&](double v) { return bottom - plot_h * v / y_max; };
  const int height = static_cast<int>(bottom + 26);

  std::string out = svg_open(id, "bars", width, height);
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
  const double slot = c.bars.empty() ? plot_w : plot_w / static_cast<double>(c.bars.size());
  const double bw = std::min(slot * 0.62, 64.0);
  for (std::size_t i = 0; i < c.bars.size(); ++i) {
    const auto& b = c.bars[i];
    const double x = left + slot * static_cast<double>(i) + (slot - bw) / 2;
    double base = 0;
    for (const auto& s : b.segments) {
      const std::string& fill = s.swatch >= 0 && s.swatch < static_cast<int>(c.legend.size()) ? c.legend[s.swatch].colour
                                                                                              : std::string("#888");
      out += fmt::format("<rect class=\"col\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">{}</rect>\n", n1(x),
                         n1(Y(base + s.value)), n1(bw), n1(Y(base) - Y(base + s.value)), fill, title(s.tip));
      base += s.value;
    }
    if (!b.note.empty())
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"bold\">{}</text>\n", n1(x + bw / 2),
                         n1(Y(totals[i]) - 5), html_escape(b.note));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n", n1(x + bw / 2), n1(bottom + 16),
                       html_escape(b.label));
  }
  for (const auto& l : c.lines) {
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>",
                       n1(left), n1(Y(l.value)), n1(left + plot_w), kReference);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{}\">{}</text>\n", n1(left + plot_w - 2),
                       n1(Y(l.value) - 4), kReference, html_escape(l.label));
  }
  out += "</svg>\n";
  return out;
}

}  // namespace stepsim::cli
