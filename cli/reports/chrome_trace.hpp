#pragma once
// Chrome Trace Event Format writer (the JSON that chrome://tracing and ui.perfetto.dev open):
// named processes and threads, complete ("X") slices, flow arrows ("s"/"f"), counters ("C").
// Timestamps are written in microseconds with exact nanosecond decimals from integer time.
//
// Two modes: in memory (finish() returns the document), or streamed to a file: events go through
// a 1 MiB buffer, so memory does not grow with the trace.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "cli/reports/spill_buffer.hpp"
#include "cli/reports/text_cursor.hpp"
#include "cli/reports/trace_writer.hpp"
#include "sim/time.hpp"

namespace stepsim::cli {

class ChromeTrace final : public TraceWriter {
 public:
  ChromeTrace();                         // in memory
  explicit ChromeTrace(std::FILE* out);  // streamed to `out` (not closed here)
  void process(int pid, std::string_view name, int sort_index) override;
  void thread(int pid, int tid, std::string_view name, int sort_index) override;
  using TraceWriter::slice;
  // The args are the members of the event's "args" object, in their order. A flow is written by
  // flow() alone.
  void slice(int pid, int tid, std::string_view name, std::string_view category, Time start, Time duration,
             const TraceArgs& args, std::uint64_t starts_flow) override;
  void flow(std::uint64_t id, std::string_view name, int from_pid, int from_tid, Time from_ts, int to_pid, int to_tid,
            Time to_ts) override;
  void counter(int pid, std::string_view name, Time ts, std::string_view series, double value) override;
  std::string finish() override;
  int write_errno() const override { return out_.write_errno(); }

 private:
  // Room for an event of at most `bytes` after the separating comma, and the cursor to write it
  // with; close_event keeps what was written.
  TextCursor open_event(std::size_t bytes);
  void close_event(const TextCursor& c) { out_.commit(c.end()); }
  void metadata(std::string_view event);  // a whole "M" event
  SpillBuffer out_;
  bool first_ = true;
};

// JSON string escaping for names we emit.
std::string json_escape(std::string_view s);

}  // namespace stepsim::cli
