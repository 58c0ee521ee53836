#pragma once
// CSV records as RFC 4180 writes them: cells split at commas; a cell in double quotes may hold
// commas, line ends and "" (one quote). The one reader of CSV cells: PyTorch's schedule files
// (action_csv.hpp) and measured runs (cli/input/validation_csv.hpp).
#include <string>
#include <string_view>
#include <vector>

namespace stepsim {

struct CsvRecord {
  int line = 0;                    // the line the record starts on, from 1
  std::string_view text;           // its lines as written, without the last line end
  std::vector<std::string> cells;  // a blank line: one empty cell
  // A quote still open at the end of the text: the line it opened on (else 0). The record is
  // then the text's last, its last cell the one left open.
  int open_quote_line = 0;
  // A quote where RFC 4180 allows none: inside a cell that does not start with one (12" disk), or
  // text after a cell's closing quote ("3"2). Read as a plain character; the first such cell's
  // index (else -1) and line, for the readers to refuse (a quote opening mid-cell would run on
  // over the rows after it).
  int stray_quote_cell = -1, stray_quote_line = 0;
};

// Lines end in LF or CRLF; a CRLF inside a quoted cell reads as LF. A UTF-8 byte-order mark
// before the first line is not part of it.
class CsvReader {
 public:
  // Lines that start with `comment` where a record would start are skipped ('\0': none are):
  // a quote in a comment opens nothing.
  explicit CsvReader(std::string_view text, char comment = '\0');
  // The next record into `out`; false at the end of the text.
  bool next(CsvRecord& out);
  int lines() const { return line_; }  // lines read so far

 private:
  std::string_view text_;
  std::size_t at_ = 0;
  int line_ = 0;
  char comment_;
};

}  // namespace stepsim
