#include "cli/reports/html_report.hpp"

#include <fmt/format.h>

namespace stepsim::cli {

namespace {

constexpr std::string_view kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;margin:20px 24px;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #ddd;padding-bottom:3px}
h3{font-size:15px;margin:18px 0 2px}p{margin:4px 0}
figure{margin:6px 0}figcaption{color:#555;font-size:12px}
svg{max-width:100%;height:auto;display:block}svg text{font-family:inherit}
.row{display:flex;flex-wrap:wrap;gap:28px;align-items:flex-start}
.row figure{display:table}.row figcaption{display:table-caption;caption-side:bottom}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{padding:3px 9px;border-bottom:1px solid #e4e4e4;white-space:nowrap}
th{background:#f3f3f3;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
#tip{position:fixed;display:none;pointer-events:none;background:#222;color:#fff;padding:5px 8px;border-radius:4px;
font-size:12px;white-space:pre;z-index:10;box-shadow:0 2px 6px rgba(0,0,0,.3)}
#errors:empty{display:none}#errors{color:#b00;border:1px solid #b00;padding:6px}
rect.bar:hover,rect.col:hover,rect.cell:hover{stroke:#000;stroke-width:1.5}rect.idle:hover{stroke:#b55;stroke-width:1}
)";

// Registered first, so that errors of the later script are recorded in the page.
constexpr std::string_view kErrorHook = R"(
window.onerror=function(msg,src,line,col){var e=document.getElementById("errors");
e.textContent+=msg+" (line "+line+":"+col+")\n";};
)";

// Moves each SVG <title> into a data-tip attribute and shows it in a tooltip that follows the
// pointer: native title tooltips appear late and cannot be styled.
constexpr std::string_view kTooltips = R"(
(function(){var tip=document.getElementById("tip");
document.querySelectorAll("svg title").forEach(function(t){var p=t.parentNode;
p.setAttribute("data-tip",t.textContent);p.removeChild(t);});
function place(ev){var x=ev.clientX+14,y=ev.clientY+14,w=tip.offsetWidth,h=tip.offsetHeight;
if(x+w>window.innerWidth-4)x=ev.clientX-w-10;if(y+h>window.innerHeight-4)y=ev.clientY-h-10;
tip.style.left=x+"px";tip.style.top=y+"px";}
document.addEventListener("mouseover",function(ev){var el=ev.target.closest?ev.target.closest("[data-tip]"):null;
if(!el){tip.style.display="none";return;}tip.textContent=el.getAttribute("data-tip");tip.style.display="block";place(ev);});
document.addEventListener("mousemove",function(ev){if(tip.style.display==="block")place(ev);});
document.body.setAttribute("data-bars",String(document.querySelectorAll("rect.bar").length));
document.body.setAttribute("data-ready","1");})();
)";

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

HtmlReport::HtmlReport(std::string title) : title_(std::move(title)) {}

void HtmlReport::heading(int level, std::string_view text, std::string_view anchor) {
  level = level < 1 ? 1 : (level > 3 ? 3 : level);
  const std::string id = anchor.empty() ? "" : fmt::format(" id=\"{}\"", html_escape(anchor));
  body_ += fmt::format("<h{0}{1}>{2}</h{0}>\n", level, id, html_escape(text));
}

void HtmlReport::paragraph(std::string_view text) { body_ += fmt::format("<p>{}</p>\n", html_escape(text)); }

void HtmlReport::table(const Table& t) {
  body_ += "<table>\n<tr>";
  for (const auto& c : t.columns()) body_ += fmt::format("<th>{}</th>", html_escape(c.header));
  body_ += "</tr>\n";
  for (const auto& row : t.rows()) {
    body_ += "<tr>";
    for (std::size_t c = 0; c < t.columns().size(); ++c) {
      const std::string cell = c < row.size() ? html_escape(row[c]) : "";
      body_ += t.columns()[c].right ? fmt::format("<td class=\"num\">{}</td>", cell) : fmt::format("<td>{}</td>", cell);
    }
    body_ += "</tr>\n";
  }
  body_ += "</table>\n";
}

void HtmlReport::table(const CaptionedTable& t) {
  const auto lines = [this](std::string_view text) {
    while (!text.empty()) {
      const auto end = text.find('\n');
      paragraph(text.substr(0, end));
      text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    }
  };
  lines(t.intro);
  table(t.table);
  lines(t.outro);
}

void HtmlReport::figure(std::string markup, std::string_view caption) {
  body_ += "<figure>\n" + markup;
  if (!caption.empty()) body_ += fmt::format("<figcaption>{}</figcaption>\n", html_escape(caption));
  body_ += "</figure>\n";
}

void HtmlReport::open_row() { body_ += "<div class=\"row\">\n"; }
void HtmlReport::close_row() { body_ += "</div>\n"; }

std::string HtmlReport::finish() const {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n";
  out += fmt::format("<meta name=\"generator\" content=\"stepsim\"/>\n<title>{}</title>\n", html_escape(title_));
  out += fmt::format("<style>{}</style>\n</head>\n<body>\n", kStyle);
  out += "<pre id=\"errors\"></pre>\n";
  out += fmt::format("<script>{}</script>\n", kErrorHook);
  out += "<div id=\"tip\"></div>\n";
  out += body_;
  out += fmt::format("<script>{}</script>\n</body>\n</html>\n", kTooltips);
  return out;
}

}  // namespace stepsim::cli
