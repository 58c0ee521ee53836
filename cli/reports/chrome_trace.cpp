#include "cli/reports/chrome_trace.hpp"

#include <fmt/format.h>

namespace stepsim::cli {

namespace {
// Microseconds with three decimals, exactly, from integer nanoseconds.
void append_us(std::string& out, Time ns) {
  if (ns < 0) { out += '-'; ns = -ns; }
  fmt::format_to(std::back_inserter(out), "{}.{:03}", ns / 1000, ns % 1000);
}
}  // namespace

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<int>(c));
        else out += c;
    }
  }
  return out;
}

ChromeTrace::ChromeTrace() { out_ = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"; }

void ChromeTrace::begin_event() {
  if (!first_) out_ += ",\n";
  first_ = false;
}

void ChromeTrace::process(int pid, std::string_view name, int sort_index) {
  begin_event();
  fmt::format_to(std::back_inserter(out_), R"({{"ph":"M","pid":{},"tid":0,"name":"process_name","args":{{"name":"{}"}}}})",
                 pid, json_escape(name));
  begin_event();
  fmt::format_to(std::back_inserter(out_), R"({{"ph":"M","pid":{},"tid":0,"name":"process_sort_index","args":{{"sort_index":{}}}}})",
                 pid, sort_index);
}

void ChromeTrace::thread(int pid, int tid, std::string_view name, int sort_index) {
  begin_event();
  fmt::format_to(std::back_inserter(out_), R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":"{}"}}}})",
                 pid, tid, json_escape(name));
  begin_event();
  fmt::format_to(std::back_inserter(out_), R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}})",
                 pid, tid, sort_index);
}

void ChromeTrace::slice(int pid, int tid, std::string_view name, std::string_view category, Time start, Time duration,
                        std::string_view args) {
  begin_event();
  fmt::format_to(std::back_inserter(out_), R"({{"ph":"X","pid":{},"tid":{},"name":"{}","cat":"{}","ts":)", pid, tid,
                 json_escape(name), category);
  append_us(out_, start);
  out_ += ",\"dur\":";
  append_us(out_, duration);
  out_ += ",\"args\":{";
  out_ += args;
  out_ += "}}";
}

void ChromeTrace::flow(std::uint64_t id, std::string_view name, int from_pid, int from_tid, Time from_ts, int to_pid,
                       int to_tid, Time to_ts) {
  begin_event();
  fmt::format_to(std::back_inserter(out_), R"({{"ph":"s","id":{},"pid":{},"tid":{},"name":"{}","cat":"flow","ts":)", id,
                 from_pid, from_tid, json_escape(name));
  append_us(out_, from_ts);
  out_ += "}";
  begin_event();
  fmt::format_to(std::back_inserter(out_), R"({{"ph":"f","bp":"e","id":{},"pid":{},"tid":{},"name":"{}","cat":"flow","ts":)",
                 id, to_pid, to_tid, json_escape(name));
  append_us(out_, to_ts);
  out_ += "}";
}

void ChromeTrace::counter(int pid, std::string_view name, Time ts, std::string_view series, double value) {
  begin_event();
  fmt::format_to(std::back_inserter(out_), R"({{"ph":"C","pid":{},"tid":0,"name":"{}","ts":)", pid, json_escape(name));
  append_us(out_, ts);
  fmt::format_to(std::back_inserter(out_), R"(,"args":{{"{}":{}}}}})", json_escape(series), value);
}

std::string ChromeTrace::finish() {
  out_ += "\n]}\n";
  return std::move(out_);
}

}  // namespace stepsim::cli
