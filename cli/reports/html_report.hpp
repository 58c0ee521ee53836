#pragma once
// A self-contained HTML page for reports: inline CSS, inline SVG figures and a little inline
// JavaScript; nothing is fetched, so the file opens from disk, offline, or as a mail
// attachment. Any scenario kind builds its report from these pieces (headings, text, tables,
// figures from cli/svg_charts.hpp) and finish() wraps them into the page.
//
// In the page:
//  * every SVG element's <title> is shown as a tooltip next to the pointer (the <title> stays as
//    the native fallback when scripts are off);
//  * JavaScript errors are written into <pre id="errors">, so a headless browser's DOM dump
//    shows whether the page ran cleanly; when the script has run, <body> carries
//    data-ready="1" and data-bars="N" (the timeline bars it found).
#include <string>
#include <string_view>

#include "cli/reports/table.hpp"

namespace stepsim::cli {

// Escapes & < > " ' for text and attribute values in HTML and SVG.
std::string html_escape(std::string_view text);

class HtmlReport {
 public:
  explicit HtmlReport(std::string title);

  // <h1>..<h3>; `anchor` (optional) becomes the element id.
  void heading(int level, std::string_view text, std::string_view anchor = {});
  void paragraph(std::string_view text);
  void table(const Table& table);
  // Its intro and outro as paragraphs (one per line) around the table.
  void table(const CaptionedTable& table);
  // A figure: trusted markup (an SVG from cli/svg_charts.hpp) with an optional caption.
  void figure(std::string markup, std::string_view caption = {});
  // Figures and tables between open_row() and close_row() sit side by side where they fit.
  void open_row();
  void close_row();

  std::string finish() const;

 private:
  std::string title_;
  std::string body_;
};

}  // namespace stepsim::cli
