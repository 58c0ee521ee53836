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

// Microseconds with three decimals, exactly, from integer nanoseconds.
void append_us(std::string& out, Time ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  append_int(out, ns / 1000);
  const auto frac = static_cast<int>(ns % 1000);
  const char digits[3] = {static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
  out += '.';
  out.append(digits, 3);
}
}  // namespace

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_ms3(std::string& out, Time ns) {
  // to_ms(ns) = ns / 1e6 as a double, printed with 3 decimals: the microsecond count rounded to
  // nearest. Below 10^14 ns the double is within 0.02 ns of the exact quotient, so only an exact
  // half (remainder 500 ns) could round either way; that case, and huge or negative times, go
  // through fmt to keep the output byte for byte what it was.
  if (ns >= 0 && ns < 100'000'000'000'000 && ns % 1000 != 500) {
    const std::int64_t us = ns / 1000 + (ns % 1000 > 500 ? 1 : 0);
    append_int(out, us / 1000);
    const auto frac = static_cast<int>(us % 1000);
    const char digits[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                            static_cast<char>('0' + frac % 10)};
    out.append(digits, 4);
    return;
  }
  fmt::format_to(std::back_inserter(out), FMT_COMPILE("{:.3f}"), to_ms(ns));
}

void append_json_escaped(std::string& out, std::string_view s) {
  // Runs of plain characters are appended whole (op names never need escaping).
  const auto plain = [](char c) { return c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20; };
  for (std::size_t i = 0; i < s.size(); ++i) {
    std::size_t j = i;
    while (j < s.size() && plain(s[j])) ++j;
    out.append(s.data() + i, j - i);
    if (j == s.size()) return;
    i = j;
    const char c = s[i];
    switch (c) {
      case '"': out += "\\\""sv; break;
      case '\\': out += "\\\\"sv; break;
      case '\n': out += "\\n"sv; break;
      case '\t': out += "\\t"sv; break;
      default: fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<int>(c));
    }
  }
}

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  append_json_escaped(out, s);
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

// The per-op events below are written by hand (no format string parsed per event): they are
// nearly all of a trace's bytes.
void ChromeTrace::slice(int pid, int tid, std::string_view name, std::string_view category, Time start, Time duration,
                        std::string_view args) {
  begin_event();
  out_ += R"({"ph":"X","pid":)"sv;
  append_int(out_, pid);
  out_ += R"(,"tid":)"sv;
  append_int(out_, tid);
  out_ += R"(,"name":")"sv;
  append_json_escaped(out_, name);
  out_ += R"(","cat":")"sv;
  out_ += category;
  out_ += R"(","ts":)"sv;
  append_us(out_, start);
  out_ += ",\"dur\":"sv;
  append_us(out_, duration);
  out_ += ",\"args\":{"sv;
  out_ += args;
  out_ += "}}"sv;
}

void ChromeTrace::flow(std::uint64_t id, std::string_view name, int from_pid, int from_tid, Time from_ts, int to_pid,
                       int to_tid, Time to_ts) {
  for (int end = 0; end < 2; ++end) {
    begin_event();
    out_ += end == 0 ? R"({"ph":"s","id":)" : R"({"ph":"f","bp":"e","id":)";
    append_int(out_, static_cast<std::int64_t>(id));
    out_ += R"(,"pid":)"sv;
    append_int(out_, end == 0 ? from_pid : to_pid);
    out_ += R"(,"tid":)"sv;
    append_int(out_, end == 0 ? from_tid : to_tid);
    out_ += R"(,"name":")"sv;
    append_json_escaped(out_, name);
    out_ += R"(","cat":"flow","ts":)"sv;
    append_us(out_, end == 0 ? from_ts : to_ts);
    out_ += "}"sv;
  }
}

void ChromeTrace::counter(int pid, std::string_view name, Time ts, std::string_view series, double value) {
  begin_event();
  out_ += R"({"ph":"C","pid":)"sv;
  append_int(out_, pid);
  out_ += R"(,"tid":0,"name":")"sv;
  append_json_escaped(out_, name);
  out_ += R"(","ts":)"sv;
  append_us(out_, ts);
  out_ += R"(,"args":{")"sv;
  append_json_escaped(out_, series);
  out_ += "\":"sv;
  fmt::format_to(std::back_inserter(out_), FMT_COMPILE("{}"), value);
  out_ += "}}"sv;
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
