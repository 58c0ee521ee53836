#pragma once
// Chrome Trace Event Format writer (the JSON that chrome://tracing and ui.perfetto.dev open):
// named processes and threads, complete ("X") slices, flow arrows ("s"/"f"), counters ("C").
// Timestamps are written in microseconds with exact nanosecond decimals from integer time.
//
// Two modes: in memory (finish() returns the document), or streamed to a file (OutputFile, finish_trace_file):
// events go through a 1 MiB buffer, so memory does not grow with the trace.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "cli/reports/output.hpp"
#include "cli/reports/text_cursor.hpp"
#include "sim/time.hpp"

namespace stepsim::cli {

class ChromeTrace {
 public:
  ChromeTrace();                         // in memory
  explicit ChromeTrace(std::FILE* out);  // streamed to `out` (not closed here)
  void process(int pid, std::string_view name, int sort_index);
  void thread(int pid, int tid, std::string_view name, int sort_index);
  // `args` is the inside of a JSON object (`"stage":1,"microbatch":3`), may be empty.
  void slice(int pid, int tid, std::string_view name, std::string_view category, Time start, Time duration,
             std::string_view args);
  // A flow arrow from the slice enclosing (from_pid, from_tid, from_ts) to the slice that
  // encloses (to_pid, to_tid, to_ts).
  void flow(std::uint64_t id, std::string_view name, int from_pid, int from_tid, Time from_ts, int to_pid, int to_tid,
            Time to_ts);
  void counter(int pid, std::string_view name, Time ts, std::string_view series, double value);
  // Closes the document: returns it (in memory), or writes the rest and returns "" (streamed;
  // throws std::runtime_error if a write failed).
  std::string finish();
  int write_errno() const { return errno_; }  // of the first failed streamed write, 0 if none

 private:
  void begin_event();
  // Room for an event of at most `bytes` after the separating comma, and the cursor to write it
  // with; close_event trims the room to what was written.
  TextCursor open_event(std::size_t bytes);
  void close_event(const TextCursor& c);
  void spill();  // streamed: write the buffer out once it is large
  std::string out_;
  std::FILE* file_ = nullptr;
  bool first_ = true;
  bool failed_ = false;
  int errno_ = 0;  // of the first failed write
};

// JSON string escaping for names we emit.
std::string json_escape(std::string_view s);

// A streamed trace's end: the rest written, then `file` committed (renamed into place); a failed
// write throws OutputError naming the file and the system's reason, and leaves any old file.
void finish_trace_file(ChromeTrace& trace, OutputFile& file);

}  // namespace stepsim::cli
