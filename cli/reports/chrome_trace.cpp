#include "cli/reports/chrome_trace.hpp"

#include <string_view>

#include <fmt/format.h>

namespace stepsim::cli {

// Literals appended as string_views: their length is known at compile time (no strlen per
// append; the trace appends a dozen per op).
using namespace std::string_view_literals;

std::string json_escape(std::string_view s) {
  std::string out(s.size() * 6, '\0');
  TextCursor c(out.data());
  c.json_escaped(s);
  out.resize(c.written_since(out.data()));
  return out;
}

ChromeTrace::ChromeTrace() : ChromeTrace(nullptr) {}

ChromeTrace::ChromeTrace(std::FILE* out) : out_(out) {
  out_.append("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"sv);
}

TextCursor ChromeTrace::open_event(std::size_t bytes) {
  TextCursor c(out_.room(2 + bytes));
  if (!first_) c << ",\n";
  first_ = false;
  return c;
}

void ChromeTrace::metadata(std::string_view event) {
  TextCursor c = open_event(event.size());
  c << event;
  close_event(c);
}

void ChromeTrace::process(int pid, std::string_view name, int sort_index) {
  metadata(fmt::format(R"({{"ph":"M","pid":{},"tid":0,"name":"process_name","args":{{"name":"{}"}}}})", pid,
                       json_escape(name)));
  metadata(fmt::format(R"({{"ph":"M","pid":{},"tid":0,"name":"process_sort_index","args":{{"sort_index":{}}}}})", pid,
                       sort_index));
}

void ChromeTrace::thread(int pid, int tid, std::string_view name, int sort_index) {
  metadata(fmt::format(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":"{}"}}}})", pid, tid,
                       json_escape(name)));
  metadata(fmt::format(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}})", pid,
                       tid, sort_index));
}

namespace {
// Room for args' JSON members.
std::size_t json_room(const TraceArgs& args) {
  std::size_t n = 0;
  for (const TraceArg& a : args.items()) n += a.key.size() + 4 + TextCursor::kNumber + 6 * a.text.size();
  return n;
}

void json_members(TextCursor& c, const TraceArgs& args) {
  bool first = true;
  for (const TraceArg& a : args.items()) {
    if (!first) c << ',';
    first = false;
    c << '"';
    c.json_escaped(a.key);
    c << "\":";
    switch (a.kind) {
      case TraceArg::Kind::Int: c.integer(a.number); break;
      case TraceArg::Kind::Bool: c << (a.number != 0 ? std::string_view("true") : std::string_view("false")); break;
      case TraceArg::Kind::Real: c.shortest(a.real); break;
      case TraceArg::Kind::Real4: c.fixed4(a.real); break;
      case TraceArg::Kind::Millis:
      case TraceArg::Kind::SliceTime: c.millis3(a.number); break;
      case TraceArg::Kind::Text:
        c << '"';
        c.json_escaped(a.text);
        c << '"';
        break;
    }
  }
}
}  // namespace

// The per-op events below are written through a cursor (no format string parsed, no capacity
// checked per piece): they are nearly all of a trace's bytes. Room: the fixed text, a number
// per field, 6 bytes per character of escaped text.
void ChromeTrace::slice(int pid, int tid, std::string_view name, std::string_view category, Time start, Time duration,
                        const TraceArgs& args, std::uint64_t) {
  TextCursor c = open_event(96 + 4 * TextCursor::kNumber + 6 * name.size() + category.size() + json_room(args));
  c << R"({"ph":"X","pid":)";
  c.integer(pid);
  c << R"(,"tid":)";
  c.integer(tid);
  c << R"(,"name":")";
  c.json_escaped(name);
  c << R"(","cat":")" << category << R"(","ts":)";
  c.micros3(start);
  c << ",\"dur\":";
  c.micros3(duration);
  c << ",\"args\":{";
  json_members(c, args);
  c << "}}";
  close_event(c);
}

void ChromeTrace::flow(std::uint64_t id, std::string_view name, int from_pid, int from_tid, Time from_ts, int to_pid,
                       int to_tid, Time to_ts) {
  for (int end = 0; end < 2; ++end) {
    TextCursor c = open_event(96 + 4 * TextCursor::kNumber + 6 * name.size());
    if (end == 0)
      c << R"({"ph":"s","id":)";
    else
      c << R"({"ph":"f","bp":"e","id":)";
    c.integer(static_cast<std::int64_t>(id));
    c << R"(,"pid":)";
    c.integer(end == 0 ? from_pid : to_pid);
    c << R"(,"tid":)";
    c.integer(end == 0 ? from_tid : to_tid);
    c << R"(,"name":")";
    c.json_escaped(name);
    c << R"(","cat":"flow","ts":)";
    c.micros3(end == 0 ? from_ts : to_ts);
    c << '}';
    close_event(c);
  }
}

void ChromeTrace::counter(int pid, std::string_view name, Time ts, std::string_view series, double value) {
  TextCursor c = open_event(96 + 4 * TextCursor::kNumber + 6 * (name.size() + series.size()));
  c << R"({"ph":"C","pid":)";
  c.integer(pid);
  c << R"(,"tid":0,"name":")";
  c.json_escaped(name);
  c << R"(","ts":)";
  c.micros3(ts);
  c << R"(,"args":{")";
  c.json_escaped(series);
  c << "\":";
  c.shortest(value);
  c << "}}";
  close_event(c);
}

std::string ChromeTrace::finish() {
  out_.append("\n]}\n"sv);
  return out_.finish();
}

}  // namespace stepsim::cli
