#include "schedules/pipeline/csv_records.hpp"

namespace stepsim {

CsvReader::CsvReader(std::string_view text, char comment) : text_(text), comment_(comment) {
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);
}

bool CsvReader::next(CsvRecord& out) {
  // A comment line is skipped whole, its quotes unread.
  while (at_ < text_.size() && comment_ != '\0' && text_[at_] == comment_) {
    ++line_;
    const std::size_t nl = text_.find('\n', at_);
    at_ = nl == std::string_view::npos ? text_.size() : nl + 1;
  }
  if (at_ >= text_.size()) return false;
  out = CsvRecord{};
  out.line = ++line_;
  out.cells.emplace_back();
  const std::size_t start = at_;
  std::size_t end = text_.size();  // of the record's text
  bool quoted = false;
  bool closed = false;  // the cell's quoted part has closed: a comma or the line end must follow
  int quote_line = 0;
  const auto stray = [&] {
    if (out.stray_quote_cell >= 0) return;
    out.stray_quote_cell = static_cast<int>(out.cells.size()) - 1;
    out.stray_quote_line = line_;
  };
  // The CR of a CRLF just read into the cell (whether quoted or not: the state changes only at a
  // quote) is the line end's, not the cell's.
  const auto drop_cr = [&](std::size_t nl) {
    if (nl > start && text_[nl - 1] == '\r' && !out.cells.back().empty()) out.cells.back().pop_back();
  };
  while (at_ < text_.size()) {
    const char c = text_[at_++];
    if (quoted) {
      if (c == '"' && at_ < text_.size() && text_[at_] == '"') {
        out.cells.back() += '"';
        ++at_;
      } else if (c == '"') {
        quoted = false;
        closed = true;
      } else if (c == '\n') {
        drop_cr(at_ - 1);
        out.cells.back() += '\n';
        ++line_;
      } else {
        out.cells.back() += c;
      }
    } else if (c == '"' && out.cells.back().empty() && !closed) {  // a quoted cell opens
      quoted = true;
      quote_line = line_;
    } else if (c == ',') {
      out.cells.emplace_back();
      closed = false;
    } else if (c == '\n') {
      drop_cr(at_ - 1);
      end = at_ - 1;
      break;
    } else {
      if (c == '"' || (closed && c != '\r')) stray();
      out.cells.back() += c;
    }
  }
  if (at_ == text_.size() && end == text_.size() && !quoted) drop_cr(end);  // a last line without its LF
  if (end > start && text_[end - 1] == '\r' && !quoted) --end;
  out.text = text_.substr(start, end - start);
  if (quoted) out.open_quote_line = quote_line;
  return true;
}

}  // namespace stepsim
