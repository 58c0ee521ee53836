#pragma once
// Several runs as one trace (`stepsim compare --trace`): each row of the comparison (a schedule,
// a variant) describes its own run through a writer that renames the run's processes "NAME:
// process" and lists them after the previous row's, with pids and arrows of their own, so that
// Perfetto shows the rows one above the other on one time axis (every run starts at 0).
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "cli/reports/trace_writer.hpp"

namespace stepsim::cli {

using TraceRowEmitter = std::function<void(std::size_t row, TraceWriter&)>;

// The trace of rows `names` (at most kMaxTraceRows): `emit(i, w)` describes row i's run into w.
TraceEmitter trace_of_rows(std::vector<std::string> names, TraceRowEmitter emit);

// Rows past this many share the last row's place in the process order (a process's sort index
// is an int: each row keeps 65,536 places).
inline constexpr std::size_t kMaxTraceRows = 32767;

}  // namespace stepsim::cli
