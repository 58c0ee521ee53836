#pragma once
// Pictures of data-parallel runs: the charts of cli/charts.hpp built from a DataParallelRun
// (plan, program, timeline, result; nothing re-runs), the HTML report of `run --html` /
// `compare --html` and the text Gantt chart of `run --gantt` / `compare --gantt`.
//
// Per shown card: its compute track (forward, backward or dX / dW, each its own colour, the unit
// on the bar), below it the track of the resource its collectives run on (its PCIe lane or peer
// link, or its host's NIC: AllGather, ReduceScatter and AllReduce in their own colours) and its
// input wait. Every op of a shown card is one bar (the zero-length joins that make unfolded ranks
// start a collective together are bookkeeping, not drawn).
//
// Exposed communication, precisely: the intervals in which a card's compute stream stands idle
// after its input wait, i.e. every idle interval of the compute stream within [input_wait, the
// card's end] (its end: its last compute op or collective done). The compute stream waits for
// nothing but its input and its collectives, so each such interval is either the compute
// waiting for an AllGather it needs next (ZeRO-3; the gather was issued late or queued behind
// other collectives on the link) or, after the card's last compute op, the reductions still
// running. They sum to the card's exposed communication (DataParallelRankStats::exposed = end -
// input_wait - compute busy) to the nanosecond, and for a folded run to the step's
// exposed_comm. They are drawn as waits (TimeTrack::waits) on the compute track; the collectives
// in flight during one of them (overlapping it in time, on a resource serving that card) are
// drawn emphasised: that is the communication the compute stream is waiting on.
#include <string>
#include <vector>

#include "cli/reports/charts.hpp"
#include "schedules/lowering/data_parallel/data_parallel_spec.hpp"
#include "sim/op_graph.hpp"

namespace stepsim::cli {

struct ExposedInterval {
  Time start = 0, end = 0;
  // The collective whose end lets the compute stream go on (an AllGather its next op consumes);
  // kNoOp for the interval after the card's last compute op (the collectives still running).
  OpId waits_for = kNoOp;
};

// The exposed intervals of simulated rank `rank` (an index into the program's cards), in time
// order.
std::vector<ExposedInterval> exposed_intervals(const DataParallelRun& run, std::size_t rank);

// Which simulated ranks the pictures show: every one when there are at most kShownRanks; else
// the first four, the slowest (most compute) and the one with the most exposed communication.
inline constexpr std::size_t kShownRanks = 8;
struct ShownRanks {
  std::vector<std::size_t> ranks;  // indices into the program's cards, ascending
  std::string note;                // for the page: which cards are shown and why
};
ShownRanks data_parallel_shown_ranks(const DataParallelRun& run);

// Tracks of the shown ranks: compute (with its exposed intervals as waits), then its input and
// the link or NIC its collectives run on (a host's NIC once, under its first shown card).
TimelineChart data_parallel_timeline(const DataParallelRun& run);

// Runs with more compute ops per card than this get zoomed views in the HTML report: at the
// full scale of a long step their ops and exposed intervals are too narrow to see.
inline constexpr std::size_t kZoomComputeOps = 100;

// One run of a report: the base spec or a variant.
struct DataParallelReportRun {
  std::string name;  // "base" or the variant's name
  const DataParallelRun* run = nullptr;
  const DataParallelSpec* spec = nullptr;
};

// The self-contained HTML page for one run (`run`) or the base and its variants (`compare`), all
// timelines on one shared time axis.
std::string data_parallel_html_report(const std::string& title, const std::string& description,
                                      const std::vector<DataParallelReportRun>& runs, bool compare);

// Text Gantt charts of the runs (compute and communication rows of the shown cards) on one time
// scale, `width` columns wide.
std::string data_parallel_gantt_text(const std::vector<DataParallelReportRun>& runs, int width);

}  // namespace stepsim::cli
