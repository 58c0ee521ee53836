#include "cli/reports/trace_rows.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include <fmt/format.h>

namespace stepsim::cli {

namespace {

// Row `row`'s view of the whole trace: its pids numbered densely across the rows in the order
// they first appear (a Perfetto writer indexes its tracks by pid), its process names and order
// under the row's, its arrows' ids in a range of their own (a run numbers its arrows from 1).
class RowTrace final : public TraceWriter {
 public:
  RowTrace(TraceWriter& out, std::size_t row, const std::string& name, std::map<std::pair<std::size_t, int>, int>& pids)
      : out_(out), row_(row), name_(name), pids_(pids) {}

  void process(int pid, std::string_view name, int sort_index) override {
    out_.process(pid_of(pid), fmt::format("{}: {}", name_, name), order(sort_index));
  }
  void thread(int pid, int tid, std::string_view name, int sort_index) override {
    out_.thread(pid_of(pid), tid, name, sort_index);
  }
  void slice(int pid, int tid, std::string_view name, std::string_view category, Time start, Time duration,
             const TraceArgs& args, std::uint64_t starts_flow) override {
    out_.slice(pid_of(pid), tid, name, category, start, duration, args, starts_flow ? flow_id(starts_flow) : 0);
  }
  void flow(std::uint64_t id, std::string_view name, int from_pid, int from_tid, Time from_ts, int to_pid, int to_tid,
            Time to_ts) override {
    out_.flow(flow_id(id), name, pid_of(from_pid), from_tid, from_ts, pid_of(to_pid), to_tid, to_ts);
  }
  void counter(int pid, std::string_view name, Time ts, std::string_view series, double value) override {
    out_.counter(pid_of(pid), name, ts, series, value);
  }
  std::string finish() override { return ""; }  // the whole trace's writer finishes
  int write_errno() const override { return out_.write_errno(); }

 private:
  int pid_of(int pid) {
    const auto [it, added] = pids_.try_emplace({row_, pid}, static_cast<int>(pids_.size()));
    return it->second;
  }
  int order(int sort_index) const {
    const auto row = static_cast<int>(std::min(row_, kMaxTraceRows));
    return row * 65536 + std::clamp(sort_index, 0, 65535);
  }
  // A run's arrow ids stay far below 2^40 (one per message of at most 2^31 ops).
  std::uint64_t flow_id(std::uint64_t id) const { return (static_cast<std::uint64_t>(row_) << 40) + id; }

  TraceWriter& out_;
  std::size_t row_;
  const std::string& name_;
  std::map<std::pair<std::size_t, int>, int>& pids_;
};

}  // namespace

TraceEmitter trace_of_rows(std::vector<std::string> names, TraceRowEmitter emit) {
  return [names = std::move(names), emit = std::move(emit)](TraceWriter& w) {
    std::map<std::pair<std::size_t, int>, int> pids;
    for (std::size_t i = 0; i < names.size(); ++i) {
      RowTrace row(w, i, names[i], pids);
      emit(i, row);
    }
  };
}

}  // namespace stepsim::cli
