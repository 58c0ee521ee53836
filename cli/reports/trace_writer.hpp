#pragma once
// What a trace says, whatever its format: named processes and threads (tracks), slices with
// typed arguments, flow arrows between slices, and counters. Reports describe a run through this
// interface once; the file's name chooses the format (trace_format_of):
//  - Chrome Trace Event JSON (chrome_trace.hpp), for chrome://tracing, ui.perfetto.dev and
//    scripts that read JSON;
//  - Perfetto's protobuf trace (perfetto_trace.hpp), about 40 % of the bytes and cheaper to
//    write and to load, for large steps.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "cli/reports/trace_args.hpp"
#include "sim/time.hpp"

namespace stepsim::cli {

class TraceWriter {
 public:
  virtual ~TraceWriter() = default;
  // A process (a group of tracks), listed in `sort_index` order.
  virtual void process(int pid, std::string_view name, int sort_index) = 0;
  // A thread (a track) of process `pid`, listed in `sort_index` order within it.
  virtual void thread(int pid, int tid, std::string_view name, int sort_index) = 0;
  // `starts_flow`: the id of the flow arrow this slice starts (0: none). Every arrow is named so
  // by its starting slice, then told whole by flow(): a format that binds an arrow to its slice
  // (Perfetto) writes its start there, one that lists arrows apart (Chrome JSON) from flow().
  virtual void slice(int pid, int tid, std::string_view name, std::string_view category, Time start, Time duration,
                     const TraceArgs& args, std::uint64_t starts_flow) = 0;
  void slice(int pid, int tid, std::string_view name, std::string_view category, Time start, Time duration,
             const TraceArgs& args) {
    slice(pid, tid, name, category, start, duration, args, 0);
  }
  // An arrow from the slice enclosing (from_pid, from_tid, from_ts) to the slice that encloses
  // (to_pid, to_tid, to_ts).
  virtual void flow(std::uint64_t id, std::string_view name, int from_pid, int from_tid, Time from_ts, int to_pid,
                    int to_tid, Time to_ts) = 0;
  // A counter `name` of process `pid` with one series: its value from `ts` on.
  virtual void counter(int pid, std::string_view name, Time ts, std::string_view series, double value) = 0;
  // Closes the trace: returns it (in memory), or writes the rest and returns "" (streamed;
  // throws std::runtime_error if a write failed).
  virtual std::string finish() = 0;
  virtual int write_errno() const = 0;  // of the first failed streamed write, 0 if none
};

enum class TraceFormat { ChromeJson, Perfetto };

// Perfetto for a name ending in .pftrace, .perfetto-trace or .pb; Chrome JSON otherwise.
TraceFormat trace_format_of(std::string_view path);

// A writer of `format`: in memory when `out` is null, else streamed to `out` (not closed here).
std::unique_ptr<TraceWriter> make_trace_writer(TraceFormat format, std::FILE* out);

using TraceEmitter = std::function<void(TraceWriter&)>;

// The trace `emit` describes, streamed to `path` in the format its name asks for, committed
// (renamed into place) once complete; a failed write throws OutputError naming the file and the
// system's reason and leaves any old file.
void write_trace_file(const std::string& path, const TraceEmitter& emit);

// The trace `emit` describes, as Chrome JSON in memory (tests, reports that embed it).
std::string chrome_trace_text(const TraceEmitter& emit);

// The same for a report's trace function (pipeline_trace, rl_trace, ...) and its run.
template <class Run>
void write_trace_file(const std::string& path, void (*describe)(TraceWriter&, const Run&), const Run& run) {
  write_trace_file(path, [&](TraceWriter& w) { describe(w, run); });
}
template <class Run>
std::string chrome_trace_text(void (*describe)(TraceWriter&, const Run&), const Run& run) {
  return chrome_trace_text([&](TraceWriter& w) { describe(w, run); });
}

}  // namespace stepsim::cli
