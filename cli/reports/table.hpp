#pragma once
// Aligned plain-text tables for people: a header row, a rule, right-aligned numbers.
#include <cstdint>
#include <string>
#include <vector>

namespace stepsim::cli {

class Table {
 public:
  struct Column {
    std::string header;
    bool right = true;  // numbers right-aligned, words left
  };
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::string render() const;
  // For renderers other than render() (the HTML report).
  const std::vector<Column>& columns() const { return columns_; }
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// A table with the lines printed above it and the footnote below it (either may be empty), for
// reports that print it as text and show it in HTML alike.
struct CaptionedTable {
  std::string intro;
  Table table;
  std::string outro;
  std::string render() const;  // intro, the table, outro; every line ends in '\n'
};

// "1 card", "2 cards": a count with its noun, singular for exactly one. `plural` defaults to the
// noun + "s" ("micro-batch" needs "micro-batches").
std::string counted(long long n, const std::string& noun, const std::string& plural = {});

// 65536 -> "65,536": digits grouped by thousands, for counts of rows, dispatches and bytes.
std::string comma_grouped(std::int64_t v);

// Display width of UTF-8 text (counts code points; our tables use no wide glyphs).
std::size_t display_width(const std::string& s);

}  // namespace stepsim::cli
