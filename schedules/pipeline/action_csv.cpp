#include "schedules/pipeline/action_csv.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "schedules/pipeline/csv_records.hpp"

namespace stepsim {

ActionCsvError::ActionCsvError(int row, int column, const std::string& message)
    : std::runtime_error(fmt::format("row {}, column {}: {}", row, column, message)), row_(row), column_(column) {}

std::string format_action_pytorch(const Action& a) {
  if (a.kind != ActionKind::OverlapFB) return format_action(a);
  return fmt::format("({};{})OVERLAP_F_B", format_action(Action{ActionKind::Forward, a.stage, a.micro}),
                     format_action(Action{a.kind2, a.stage2, a.micro2}));
}

std::string format_actions_csv(const std::vector<std::vector<Action>>& per_device) {
  std::string out;
  for (const auto& row : per_device) {
    for (std::size_t k = 0; k < row.size(); ++k) {
      if (k) out += ',';
      out += format_action_pytorch(row[k]);  // never holds a comma or a quote: no quoting needed
    }
    out += "\r\n";
  }
  return out;
}

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// `0SEND_F3`, `1UNSHARD`, ...: a stage number, then one of PyTorch's non-compute action names.
bool is_non_compute_action(std::string_view cell) {
  std::size_t k = 0;
  while (k < cell.size() && cell[k] >= '0' && cell[k] <= '9') ++k;
  if (k == 0) return false;
  const std::string_view rest = cell.substr(k);
  static constexpr std::array<std::string_view, 7> kNames = {"SEND_F",  "RECV_F",  "SEND_B",     "RECV_B",
                                                             "UNSHARD", "RESHARD", "REDUCE_GRAD"};
  for (std::string_view name : kNames) {
    if (rest.substr(0, name.size()) != name) continue;
    const std::string_view tail = rest.substr(name.size());
    bool digits = true;
    for (char c : tail) digits = digits && c >= '0' && c <= '9';
    if (digits) return true;
  }
  return false;
}
}  // namespace

std::vector<std::vector<Action>> parse_actions_csv(std::string_view text) {
  std::vector<CsvRecord> records;
  CsvReader reader(text);
  for (CsvRecord r; reader.next(r);) {
    // A quoted cell runs to its closing quote, across lines: one left open runs off the end.
    if (r.open_quote_line > 0)
      throw ActionCsvError(static_cast<int>(records.size()) + 1, static_cast<int>(r.cells.size()),
                           "unterminated quoted cell");
    if (r.stray_quote_cell >= 0)
      throw ActionCsvError(static_cast<int>(records.size()) + 1, r.stray_quote_cell + 1,
                           "a quote inside a cell that does not start with one");
    records.push_back(std::move(r));
  }
  while (!records.empty() && trim(records.back().text).empty()) records.pop_back();
  std::vector<std::vector<Action>> rows;
  for (std::size_t r = 0; r < records.size(); ++r) {
    const int row = static_cast<int>(r) + 1;
    // Each row is one device's list: a blank line between rows would be a device with nothing.
    if (trim(records[r].text).empty())
      throw ActionCsvError(row, 1, "a blank line: each row lists one device's actions");
    std::vector<Action> actions;
    const auto& cells = records[r].cells;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string_view cell = trim(cells[c]);
      if (cell.empty() || is_non_compute_action(cell)) continue;
      std::string error;
      const auto a = parse_action(cell, &error);
      if (!a) throw ActionCsvError(row, static_cast<int>(c) + 1, error);
      actions.push_back(*a);
    }
    rows.push_back(std::move(actions));
  }
  return rows;
}

}  // namespace stepsim
