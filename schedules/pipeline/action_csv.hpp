#pragma once
// Schedules as CSV in the form PyTorch's torch.distributed.pipelining reads and writes
// (PipelineScheduleMulti._dump_csv / _load_csv, format "compute_only"): one row per rank, one
// cell per action in execution order, each cell str(_Action): `0F3`, `1I3`, `1W3`, `1B3`, and an
// overlapped pair as `(0F3;5B1)OVERLAP_F_B`. An empty cell is an idle slot (None) and is skipped.
// Communication and sharding actions of the "compute_comms" form (`0SEND_F3`, `1RECV_B2`,
// `0UNSHARD`, `0RESHARD`, `0REDUCE_GRAD`) are skipped too: stepsim derives every message from
// the dependencies between compute actions.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/pipeline/action.hpp"

namespace stepsim {

// A cell the CSV reader cannot take; row and column count from 1.
class ActionCsvError : public std::runtime_error {
 public:
  ActionCsvError(int row, int column, const std::string& message);
  int row() const { return row_; }
  int column() const { return column_; }

 private:
  int row_, column_;
};

// PyTorch's spelling of one action (str(_Action)).
std::string format_action_pytorch(const Action& a);

// One row per device; rows end with "\r\n" like Python's csv.writer.
std::string format_actions_csv(const std::vector<std::vector<Action>>& per_device);

// One action list per row, a record of csv_records.hpp (blank rows are devices with nothing to
// do; blank lines at the end are ignored). Throws ActionCsvError.
std::vector<std::vector<Action>> parse_actions_csv(std::string_view text);

}  // namespace stepsim
