#include "cli/reports/chrome_trace.hpp"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include <fmt/compile.h>
#include <fmt/format.h>

namespace stepsim::cli {

// Literals appended as string_views: their length is known at compile time (no strlen per
// append; the trace appends a dozen per op).
using namespace std::string_view_literals;

namespace {
constexpr std::size_t kSpill = std::size_t{1} << 20;
}  // namespace

std::string json_escape(std::string_view s) {
  std::string out(s.size() * 6, '\0');
  TextCursor c(out.data());
  c.json_escaped(s);
  out.resize(c.written_since(out.data()));
  return out;
}

ChromeTrace::ChromeTrace() { out_ = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"; }

ChromeTrace::ChromeTrace(std::FILE* out) : ChromeTrace() {
  file_ = out;
  out_.reserve(kSpill + 4096);
}

void ChromeTrace::spill() {
  if (!file_ || out_.size() < kSpill) return;
  if (std::fwrite(out_.data(), 1, out_.size(), file_) != out_.size() && !failed_) {
    failed_ = true;
    errno_ = errno;
  }
  out_.clear();
}

void ChromeTrace::begin_event() {
  spill();
  if (!first_) out_ += ",\n"sv;
  first_ = false;
}

TextCursor ChromeTrace::open_event(std::size_t bytes) {
  spill();
  const std::size_t at = out_.size();
  out_.resize(at + 2 + bytes);
  TextCursor c(out_.data() + at);
  if (!first_) c << ",\n";
  first_ = false;
  return c;
}

void ChromeTrace::close_event(const TextCursor& c) { out_.resize(c.written_since(out_.data())); }

void ChromeTrace::process(int pid, std::string_view name, int sort_index) {
  begin_event();
  fmt::format_to(std::back_inserter(out_),
                 R"({{"ph":"M","pid":{},"tid":0,"name":"process_name","args":{{"name":"{}"}}}})", pid,
                 json_escape(name));
  begin_event();
  fmt::format_to(std::back_inserter(out_),
                 R"({{"ph":"M","pid":{},"tid":0,"name":"process_sort_index","args":{{"sort_index":{}}}}})", pid,
                 sort_index);
}

void ChromeTrace::thread(int pid, int tid, std::string_view name, int sort_index) {
  begin_event();
  fmt::format_to(std::back_inserter(out_),
                 R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":"{}"}}}})", pid, tid,
                 json_escape(name));
  begin_event();
  fmt::format_to(std::back_inserter(out_),
                 R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}})", pid, tid,
                 sort_index);
}

// The per-op events below are written through a cursor (no format string parsed, no capacity
// checked per piece): they are nearly all of a trace's bytes. Room: the fixed text, a number
// per field, 6 bytes per character of escaped text.
void ChromeTrace::slice(int pid, int tid, std::string_view name, std::string_view category, Time start, Time duration,
                        std::string_view args) {
  TextCursor c = open_event(96 + 4 * TextCursor::kNumber + 6 * name.size() + category.size() + args.size());
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
  c << ",\"args\":{" << args << "}}";
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
  out_ += "\n]}\n"sv;
  if (!file_) return std::move(out_);
  if (std::fwrite(out_.data(), 1, out_.size(), file_) != out_.size() && !failed_) {
    failed_ = true;
    errno_ = errno;
  }
  out_.clear();
  if (failed_) throw std::runtime_error(fmt::format("cannot write the trace: {}", std::strerror(errno_)));
  return {};
}

void finish_trace_file(ChromeTrace& trace, OutputFile& file) {
  try {
    trace.finish();
  } catch (const std::runtime_error&) { file.fail(trace.write_errno()); }
  file.commit();
}

}  // namespace stepsim::cli
