#include "cli/reports/table.hpp"

#include <algorithm>

namespace stepsim::cli {

std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string Table::render() const {
  std::vector<std::size_t> width(columns_.size(), 0);
  for (std::size_t c = 0; c < columns_.size(); ++c) width[c] = display_width(columns_[c].header);
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], display_width(row[c]));
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string out;
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      const std::size_t pad = width[c] - display_width(cell);
      if (c > 0) out += "  ";
      const bool right = columns_[c].right && !header ? true : (header ? columns_[c].right : false);
      if (right)
        out += std::string(pad, ' ') + cell;
      else
        out += cell + (c + 1 < columns_.size() ? std::string(pad, ' ') : "");
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::vector<std::string> headers;
  for (const auto& col : columns_) headers.push_back(col.header);
  std::string out = line(headers, true);
  std::size_t total = 0;
  for (std::size_t c = 0; c < width.size(); ++c) total += width[c] + (c ? 2 : 0);
  out += std::string(total, '-') + "\n";
  for (const auto& row : rows_) out += line(row, false);
  return out;
}

std::string CaptionedTable::render() const {
  std::string out;
  if (!intro.empty()) out += intro + "\n";
  out += table.render();
  if (!outro.empty()) out += outro + "\n";
  return out;
}

std::string counted(long long n, const std::string& noun, const std::string& plural) {
  return std::to_string(n) + " " + (n == 1 ? noun : plural.empty() ? noun + "s" : plural);
}

std::string comma_grouped(std::int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

}  // namespace stepsim::cli
