#pragma once
// Chrome Trace Event Format writer (the JSON that chrome://tracing and ui.perfetto.dev open):
// named processes and threads, complete ("X") slices, flow arrows ("s"/"f"), counters ("C").
// Timestamps are written in microseconds with exact nanosecond decimals from integer time.
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/time.hpp"

namespace stepsim::cli {

class ChromeTrace {
 public:
  ChromeTrace();
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
  // Closes the document and returns it.
  std::string finish();

 private:
  void begin_event();
  std::string out_;
  bool first_ = true;
};

// JSON string escaping for names we emit.
std::string json_escape(std::string_view s);

}  // namespace stepsim::cli
