#include "schedules/pipeline/action_csv.hpp"

#include <array>

#include <fmt/format.h>

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
// Splits one CSV line into cells (RFC 4180 quoting: "a,b" and "" inside quotes).
std::vector<std::string> split_cells(std::string_view line, int row) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t k = 0; k < line.size(); ++k) {
    const char c = line[k];
    if (quoted) {
      if (c == '"' && k + 1 < line.size() && line[k + 1] == '"') {
        cells.back() += '"';
        ++k;
      } else if (c == '"')
        quoted = false;
      else
        cells.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  if (quoted) throw ActionCsvError(row, static_cast<int>(cells.size()), "unterminated quoted cell");
  return cells;
}

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
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte-order mark
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  while (!lines.empty() && trim(lines.back()).empty()) lines.pop_back();
  std::vector<std::vector<Action>> rows;
  for (std::size_t r = 0; r < lines.size(); ++r) {
    const int row = static_cast<int>(r) + 1;
    // Each row is one device's list: a blank line between rows would be a device with nothing.
    if (trim(lines[r]).empty()) throw ActionCsvError(row, 1, "a blank line: each row lists one device's actions");
    std::vector<Action> actions;
    const auto cells = split_cells(lines[r], row);
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
